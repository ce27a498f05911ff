#include "golden/intmath.hpp"
#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

Module PeBlock::generate(const HwConfig& c) {
  Module m("kld_pe", "Weight-stationary processing element: signed DATA_W x DATA_W multiply into an ACC_W partial sum");
  const int dw = c.data_w, aw = c.acc_w;
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr mode = m.input("mode_i", 2, Sign::Unsigned, "0 pass, 1 MAC, 2 load weight");
  const Expr seg_start = m.input("seg_start_i", 1, Sign::Unsigned, "first row of a segment: ignore psum_i");
  const Expr a_in = m.input("a_i", dw, Sign::Signed, "activation from the left");
  const Expr w_in = m.input("w_i", dw, Sign::Signed, "weight from above (load mode)");
  const Expr psum_in = m.input("psum_i", aw, Sign::Signed, "partial sum from above");
  const Expr a_out = m.output("a_o", dw, Sign::Signed, "activation to the right");
  const Expr mac_out = m.output("mac_o", 1, Sign::Unsigned, "a_o carries a valid activation (this PE did a MAC)");
  const Expr w_out = m.output("w_o", dw, Sign::Signed, "stationary weight, to the PE below when loading");
  const Expr psum_out = m.output("psum_o", aw, Sign::Signed, "partial sum to the PE below");
  const Expr psum_valid_out = m.output("psum_valid_o", 1, Sign::Unsigned, "psum_o holds a valid partial sum");

  const Expr mode_mac = m.localparam("ModeMac", 2, 1);
  const Expr mode_load = m.localparam("ModeLoad", 2, 2);

  const Expr w_q = m.signal("w_q", dw, Sign::Signed);
  const Expr a_q = m.signal("a_q", dw, Sign::Signed);
  const Expr psum_q = m.signal("psum_q", aw, Sign::Signed);
  const Expr mac_q = m.signal("mac_q", 1);
  const Expr product = m.wire("product", mul_full(a_in, w_q), "full-width signed product");
  const Expr product_ext = m.wire("product_ext", sext(product, aw));
  const Expr acc_zero = sconstant(aw, 0);

  Always& regs = m.always_ff(clk, rst_n, "the mode decides what the PE registers do");
  regs.on_reset().assign(w_q, 0);
  regs.on_reset().assign(a_q, 0);
  regs.on_reset().assign(mac_q, 0);
  CaseStmt& sel = regs.body().case_(mode);
  Block& load = sel.item(mode_load);
  load.assign(w_q, w_in);
  load.assign(mac_q, 0);
  Block& mac = sel.item(mode_mac);
  mac.assign(a_q, a_in);
  mac.assign(mac_q, 1);
  Block& pass = sel.default_();
  pass.comment("pass: the partial sum moves on; a_q holds so the multiplier inputs do not toggle");
  pass.assign(mac_q, 0);

  if (c.mul_pipe == 0) {
    const Expr psum_base = m.wire("psum_base", mux(seg_start, acc_zero, psum_in), "a segment start cuts the chain");
    Always& acc = m.always_ff(clk, rst_n, "accumulate in MAC mode, pass otherwise");
    acc.flop(psum_q, mux(mode == mode_mac, psum_base + product_ext, psum_in), 0);
    m.assign(psum_valid_out, mac_q);
  } else {
    // One register after the multiplier: the add happens a cycle after the MAC.
    const Expr prod_q = m.signal("prod_q", aw, Sign::Signed);
    const Expr seg_q = m.signal("seg_q", 1);
    const Expr psum_valid_q = m.signal("psum_valid_q", 1);
    Always& pipe = m.always_ff(clk, rst_n, "multiplier pipeline stage, then accumulate");
    pipe.flop(prod_q, mux(mode == mode_mac, product_ext, prod_q), 0);
    pipe.flop(seg_q, mux(mode == mode_mac, seg_start, seg_q), 0);
    pipe.flop(psum_valid_q, mac_q, 0);
    const Expr psum_base = m.wire("psum_base", mux(seg_q, acc_zero, psum_in), "the registered segment start cuts the chain");
    pipe.flop(psum_q, mux(mac_q, psum_base + prod_q, psum_in), 0);
    m.assign(psum_valid_out, psum_valid_q);
  }
  m.assign(a_out, a_q);
  m.assign(mac_out, mac_q);
  m.assign(w_out, w_q);
  m.assign(psum_out, psum_q);
  return m;
}

void PeBlock::Model::step(PeMode mode, int64_t a_in, int64_t w_in, int64_t psum_in, bool seg_start) {
  const int64_t product = wrap_signed(a_in * w, acc_w);
  if (mul_pipe == 0) {
    switch (mode) {
      case PeMode::Load: w = w_in; mac = false; psum = psum_in; break;
      case PeMode::Mac: a = a_in; mac = true; psum = wrap_signed((seg_start ? 0 : psum_in) + product, acc_w); break;
      default: mac = false; psum = psum_in; break;
    }
    psum_valid = mac;
    return;
  }
  // Pipelined: the add uses the product and segment bit registered by the previous MAC.
  const bool was_mac = mac;
  psum = was_mac ? wrap_signed((seg ? 0 : psum_in) + prod, acc_w) : psum_in;
  psum_valid = was_mac;
  if (mode == PeMode::Mac) {
    prod = product;
    seg = seg_start;
  }
  switch (mode) {
    case PeMode::Load: w = w_in; mac = false; break;
    case PeMode::Mac: a = a_in; mac = true; break;
    default: mac = false; break;
  }
}

}  // namespace kaleido::hw
