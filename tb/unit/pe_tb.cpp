// Block test of kld_pe: hand-computed corner cases (most negative operands,
// accumulator wrap, segment start, pass holding its outputs), then random
// cycles in every mode against hw::PeBlock::Model, one clock edge at a time,
// with asynchronous resets in between.
#include "Vkld_pe.h"
#include "hw/blocks.hpp"
#include "unit_common.hpp"

namespace {

using kaleido::hw::PeBlock;
using kaleido::hw::PeMode;
using namespace kld_unit;

struct Pe {
  Vkld_pe dut;
  Clock<Vkld_pe> clock{dut};
  int dw, aw;
  Pe(int data_w, int acc_w) : dw(data_w), aw(acc_w) {}

  void drive(PeMode mode, int64_t a, int64_t w, int64_t psum, bool seg) {
    dut.mode_i = static_cast<uint8_t>(mode);
    set_bits(dut.a_i, 0, dw, static_cast<uint64_t>(a));
    set_bits(dut.w_i, 0, dw, static_cast<uint64_t>(w));
    set_bits(dut.psum_i, 0, aw, static_cast<uint64_t>(psum));
    dut.seg_start_i = seg;
  }
  void reset() {
    dut.rst_ni = 0;
    clock.settle();
    dut.rst_ni = 1;
    clock.settle();
  }
  int64_t a_o() const { return sign_extend(get_bits(dut.a_o, 0, dw), dw); }
  int64_t w_o() const { return sign_extend(get_bits(dut.w_o, 0, dw), dw); }
  int64_t psum_o() const { return sign_extend(get_bits(dut.psum_o, 0, aw), aw); }
};

// Expectations computed by hand from the definition (not by the Model): the
// most negative operand squared, and that product added to the largest
// partial sum, which must wrap modulo 2^ACC_W.
void directed(Pe& pe, int mul_pipe, Checker& chk) {
  const int dw = pe.dw, aw = pe.aw;
  const int64_t lo = kaleido::signed_min(dw);
  const int64_t square = int64_t{1} << (2 * dw - 2);                      // lo * lo, fits ACC_W >= 2*DATA_W
  const int64_t psum_max = aw >= 64 ? INT64_MAX : kaleido::signed_max(aw);
  const int64_t psum_min = aw >= 64 ? INT64_MIN : kaleido::signed_min(aw);
  const int64_t wrapped = psum_min + square - 1;                           // psum_max + square - 2^ACC_W
  auto step = [&](PeMode mode, int64_t a, int64_t w, int64_t psum, bool seg) {
    pe.drive(mode, a, w, psum, seg);
    pe.clock.edge();
  };
  auto check = [&](const std::string& when, int64_t psum, bool valid, bool mac) {
    chk.equal(pe.psum_o(), psum, "directed, " + when + ": psum_o");
    chk.equal(pe.dut.psum_valid_o, valid, "directed, " + when + ": psum_valid_o");
    chk.equal(pe.dut.mac_o, mac, "directed, " + when + ": mac_o");
  };
  pe.reset();
  check("after reset", 0, false, false);
  chk.equal(pe.w_o(), 0, "directed, after reset: w_o");
  step(PeMode::Load, 5, lo, 77, false);
  chk.equal(pe.w_o(), lo, "directed, load: w_o");
  check("load (the partial sum passes)", 77, false, false);
  if (mul_pipe == 0) {
    step(PeMode::Mac, lo, 3, 99, true);
    check("MAC with segment start (psum_i ignored)", square, true, true);
    chk.equal(pe.a_o(), lo, "directed, MAC: a_o");
    step(PeMode::Mac, lo, 3, psum_max, false);
    check("MAC onto the largest partial sum (wraps)", wrapped, true, true);
    step(PeMode::Pass, 1, 2, -3, true);
    check("pass (psum_i moves on, segment start ignored)", -3, false, false);
    chk.equal(pe.a_o(), lo, "directed, pass: a_o holds");
    chk.equal(pe.w_o(), lo, "directed, pass: w_o holds");
  } else {
    step(PeMode::Mac, lo, 3, 11, true);
    check("MAC, product not yet added (psum_i moves on)", 11, false, true);
    step(PeMode::Mac, lo, 3, psum_max, false);
    check("registered product, registered segment start", square, true, true);
    step(PeMode::Pass, 1, 2, psum_max, true);
    check("second product added to the largest partial sum (wraps)", wrapped, true, false);
    chk.equal(pe.a_o(), lo, "directed, pass: a_o holds");
    step(PeMode::Pass, 1, 2, -3, false);
    check("pass after pass", -3, false, false);
    chk.equal(pe.w_o(), lo, "directed, pass: w_o holds");
  }
}

int run(const Job& job) {
  const kaleido::hw::HwConfig& c = job.hw;
  Pe pe(c.data_w, c.acc_w);
  Checker chk(job);
  directed(pe, c.mul_pipe, chk);

  kaleido::Rng rng(job.seed);
  PeBlock::Model model{c.data_w, c.acc_w, c.mul_pipe};
  pe.reset();
  int64_t held_a = 0;
  int mode_counts[3] = {0, 0, 0};
  for (int64_t k = 0; k < job.iterations; ++k) {
    if (rng.range(0, 499) == 0) {  // reset in the middle of a run
      pe.reset();
      model = PeBlock::Model{c.data_w, c.acc_w, c.mul_pipe};
    }
    const int64_t pick = rng.range(0, 9);
    const PeMode mode = pick < 5 ? PeMode::Mac : pick < 8 ? PeMode::Pass : PeMode::Load;
    ++mode_counts[static_cast<int>(mode)];
    // Half of the pass cycles hold a_i, as the array does between tokens.
    const int64_t a = (mode == PeMode::Pass && rng.range(0, 1)) ? held_a : operand(rng, c.data_w);
    const int64_t w = operand(rng, c.data_w);
    const int64_t psum = operand(rng, c.acc_w);
    const bool seg = rng.range(0, 1) != 0;
    held_a = a;
    pe.drive(mode, a, w, psum, seg);
    pe.clock.edge();
    model.step(mode, a, w, psum, seg);
    const std::string at = "cycle " + std::to_string(k) + " (mode " + std::to_string(static_cast<int>(mode)) + ")";
    chk.equal(pe.psum_o(), model.psum, at + ": psum_o");
    chk.equal(pe.dut.psum_valid_o, model.psum_valid, at + ": psum_valid_o");
    chk.equal(pe.dut.mac_o, model.mac, at + ": mac_o");
    chk.equal(pe.a_o(), model.a, at + ": a_o");
    chk.equal(pe.w_o(), model.w, at + ": w_o");
  }
  if (mode_counts[0] == 0 || mode_counts[1] == 0 || mode_counts[2] == 0) chk.fail("some mode was never exercised");
  pe.dut.final();
  return chk.finish("kld_pe DATA_W " + std::to_string(c.data_w) + " ACC_W " + std::to_string(c.acc_w) + " MUL_PIPE " +
                    std::to_string(c.mul_pipe) + ", " + std::to_string(job.iterations) + " random cycles");
}

}  // namespace

int main(int argc, char** argv) { return harness_main(argc, argv, run); }
