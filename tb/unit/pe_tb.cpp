// Block test of kld_pe: hand-computed corner cases (most negative operands,
// accumulator wrap, segment start, a load into one weight buffer while a MAC
// computes with the other, pass holding its outputs), then random cycles of
// loads and MACs against hw::PeBlock::Model, one clock edge at a time, with
// asynchronous resets in between.
#include "Vkld_pe.h"
#include "hw/blocks.hpp"
#include "unit_common.hpp"

namespace {

using kaleido::hw::PeBlock;
using kaleido::hw::PeInputs;
using namespace kld_unit;

struct Pe {
  Vkld_pe dut;
  Clock<Vkld_pe> clock{dut};
  int dw, aw;
  Pe(int data_w, int psum_w) : dw(data_w), aw(psum_w) {}

  void drive(const PeInputs& in) {
    dut.load_i = in.load;
    dut.load_sel_i = in.load_sel;
    dut.mac_i = in.mac;
    dut.sel_i = in.sel;
    set_bits(dut.a_i, 0, dw, static_cast<uint64_t>(in.a));
    set_bits(dut.w_i, 0, dw, static_cast<uint64_t>(in.w));
    set_bits(dut.psum_i, 0, aw, static_cast<uint64_t>(in.psum));
    dut.seg_start_i = in.seg_start;
  }
  void reset() {
    dut.rst_ni = 0;
    clock.settle();
    dut.rst_ni = 1;
    clock.settle();
  }
  int64_t a_o() const { return sign_extend(get_bits(dut.a_o, 0, dw), dw); }
  // Weight buffer b, as w_o shows it when load_sel_i selects it.
  int64_t weight(bool b) {
    dut.load_sel_i = b;
    clock.settle();
    return sign_extend(get_bits(dut.w_o, 0, dw), dw);
  }
  int64_t psum_o() const { return sign_extend(get_bits(dut.psum_o, 0, aw), aw); }
};

PeInputs load(bool buffer, int64_t w, int64_t psum) {
  PeInputs in;
  in.load = true;
  in.load_sel = buffer;
  in.w = w;
  in.psum = psum;
  return in;
}
PeInputs mac(bool buffer, int64_t a, int64_t psum, bool seg) {
  PeInputs in;
  in.mac = true;
  in.sel = buffer;
  in.a = a;
  in.psum = psum;
  in.seg_start = seg;
  return in;
}
PeInputs pass(int64_t psum) {
  PeInputs in;
  in.a = 1;
  in.w = 2;
  in.psum = psum;
  in.seg_start = true;
  return in;
}

// Expectations computed by hand from the definition (not by the Model): the
// most negative operand squared, a product with the other buffer's weight 3,
// and the square added to the largest partial sum, which must wrap modulo 2^PSUM_W
// (HwConfig::psum_w(): min(ACC_W, 2*DATA_W + clog2(ROWS))).
void directed(Pe& pe, int mul_pipe, Checker& chk) {
  const int dw = pe.dw, aw = pe.aw;
  const int64_t lo = kaleido::signed_min(dw);
  const int64_t square = int64_t{1} << (2 * dw - 2);  // lo * lo, fits PSUM_W >= 2*DATA_W
  const int64_t psum_max = aw >= 64 ? INT64_MAX : kaleido::signed_max(aw);
  const int64_t psum_min = aw >= 64 ? INT64_MIN : kaleido::signed_min(aw);
  const int64_t wrapped = psum_min + square - 1;  // psum_max + square - 2^PSUM_W
  const int64_t by_three = 5 + 3 * lo;            // 5 + lo * 3
  auto step = [&](PeInputs in) {
    pe.drive(in);
    pe.clock.edge();
  };
  auto check = [&](const std::string& when, int64_t psum, bool valid, bool mac_flag) {
    chk.equal(pe.psum_o(), psum, "directed, " + when + ": psum_o");
    chk.equal(pe.dut.psum_valid_o, valid, "directed, " + when + ": psum_valid_o");
    chk.equal(pe.dut.mac_o, mac_flag, "directed, " + when + ": mac_o");
  };
  pe.reset();
  check("after reset", 0, false, false);
  chk.equal(pe.weight(false), 0, "directed, after reset: buffer 0");
  chk.equal(pe.weight(true), 0, "directed, after reset: buffer 1");
  step(load(false, lo, 77));
  chk.equal(pe.weight(false), lo, "directed, load: buffer 0");
  chk.equal(pe.weight(true), 0, "directed, load: buffer 1 untouched");
  check("load (the partial sum passes)", 77, false, false);
  // A MAC with buffer 0 while buffer 1 loads 3: the product uses buffer 0.
  PeInputs both = mac(false, lo, mul_pipe == 0 ? 99 : 11, true);
  both.load = true;
  both.load_sel = true;
  both.w = 3;
  step(both);
  chk.equal(pe.weight(true), 3, "directed, load during a MAC: buffer 1");
  chk.equal(pe.weight(false), lo, "directed, load during a MAC: buffer 0 holds");
  chk.equal(pe.a_o(), lo, "directed, MAC: a_o");
  chk.equal(pe.dut.sel_o, 0, "directed, MAC with buffer 0: sel_o");
  if (mul_pipe == 0) {
    check("MAC with segment start (psum_i ignored), buffer 0", square, true, true);
    step(mac(true, lo, 5, false));
    check("MAC with buffer 1", by_three, true, true);
    chk.equal(pe.dut.sel_o, 1, "directed, MAC with buffer 1: sel_o");
    step(mac(false, lo, psum_max, false));
    check("MAC onto the largest partial sum (wraps)", wrapped, true, true);
    step(pass(-3));
    check("pass (psum_i moves on, segment start ignored)", -3, false, false);
  } else {
    check("MAC, product not yet added (psum_i moves on)", 11, false, true);
    step(mac(true, lo, 99, false));
    check("registered product, registered segment start", square, true, true);
    step(mac(false, lo, 5, false));
    check("product of buffer 1 added", by_three, true, true);
    step(pass(psum_max));
    check("square added to the largest partial sum (wraps)", wrapped, true, false);
    step(pass(-3));
    check("pass after pass", -3, false, false);
  }
  chk.equal(pe.a_o(), lo, "directed, pass: a_o holds");
  chk.equal(pe.weight(false), lo, "directed, pass: buffer 0 holds");
  chk.equal(pe.weight(true), 3, "directed, pass: buffer 1 holds");
}

int run(const Job& job) {
  const kaleido::hw::HwConfig& c = job.hw;
  Pe pe(c.data_w, c.psum_w());
  Checker chk(job);
  directed(pe, c.mul_pipe, chk);

  kaleido::Rng rng(job.seed);
  PeBlock::Model model{c.data_w, c.psum_w(), c.mul_pipe};
  pe.reset();
  int64_t held_a = 0;
  int64_t macs = 0, loads = 0, both = 0, idle = 0;
  for (int64_t k = 0; k < job.iterations; ++k) {
    if (rng.range(0, 499) == 0) {  // reset in the middle of a run
      pe.reset();
      model = PeBlock::Model{c.data_w, c.psum_w(), c.mul_pipe};
    }
    PeInputs in;
    in.mac = rng.range(0, 9) < 5;
    in.load = rng.range(0, 9) < 3;
    in.sel = rng.range(0, 1) != 0;
    in.load_sel = rng.range(0, 1) != 0;
    macs += in.mac;
    loads += in.load;
    both += in.mac && in.load;
    idle += !in.mac && !in.load;
    // Half of the idle cycles hold a_i, as the array does between tokens.
    in.a = (!in.mac && rng.range(0, 1)) ? held_a : operand(rng, c.data_w);
    in.w = operand(rng, c.data_w);
    in.psum = operand(rng, c.psum_w());
    in.seg_start = rng.range(0, 1) != 0;
    held_a = in.a;
    pe.drive(in);
    pe.clock.edge();
    model.step(in);
    const std::string at = "cycle " + std::to_string(k) + " (mac " + std::to_string(in.mac) + ", load " +
                           std::to_string(in.load) + ")";
    chk.equal(pe.psum_o(), model.psum, at + ": psum_o");
    chk.equal(pe.dut.psum_valid_o, model.psum_valid, at + ": psum_valid_o");
    chk.equal(pe.dut.mac_o, model.mac, at + ": mac_o");
    chk.equal(pe.dut.sel_o, model.sel, at + ": sel_o");
    chk.equal(pe.a_o(), model.a, at + ": a_o");
    chk.equal(pe.weight(false), model.w[0], at + ": buffer 0");
    chk.equal(pe.weight(true), model.w[1], at + ": buffer 1");
  }
  if (macs == 0 || loads == 0 || both == 0 || idle == 0)
    chk.fail("MACs, loads, loads during MACs or idle cycles were never exercised");
  pe.dut.final();
  return chk.finish("kld_pe DATA_W " + std::to_string(c.data_w) + " PSUM_W " + std::to_string(c.psum_w()) +
                    " MUL_PIPE " + std::to_string(c.mul_pipe) + ", " + std::to_string(job.iterations) +
                    " random cycles");
}

}  // namespace

int main(int argc, char** argv) { return harness_main(argc, argv, run); }
