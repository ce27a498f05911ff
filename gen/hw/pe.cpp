#include "golden/intmath.hpp"
#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

Module PeBlock::generate(const HwConfig& c) {
  Module m("kld_pe",
           "Weight-stationary processing element with two weight buffers: signed DATA_W x DATA_W multiply into a "
           "PSUM_W partial sum (exact for ROWS products) with the buffer the activation selects, while the other "
           "buffer loads");
  const int dw = c.data_w, aw = c.psum_w();
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr load = m.input("load_i", 1, Sign::Unsigned, "shift the weight from above into buffer load_sel_i");
  const Expr load_sel = m.input("load_sel_i", 1, Sign::Unsigned, "weight buffer being loaded");
  const Expr mac_in = m.input("mac_i", 1, Sign::Unsigned, "a_i is a valid activation: multiply-accumulate");
  const Expr sel_in = m.input("sel_i", 1, Sign::Unsigned, "weight buffer of the activation (travels with it)");
  const Expr seg_start = m.input("seg_start_i", 1, Sign::Unsigned, "first row of a segment: ignore psum_i");
  const Expr a_in = m.input("a_i", dw, Sign::Signed, "activation from the left");
  const Expr w_in = m.input("w_i", dw, Sign::Signed, "weight from above (load)");
  const Expr psum_in = m.input("psum_i", aw, Sign::Signed, "partial sum from above");
  const Expr a_out = m.output("a_o", dw, Sign::Signed, "activation to the right");
  const Expr mac_out = m.output("mac_o", 1, Sign::Unsigned, "a_o carries a valid activation (this PE did a MAC)");
  const Expr sel_out = m.output("sel_o", 1, Sign::Unsigned, "weight buffer of a_o");
  const Expr w_out = m.output("w_o", dw, Sign::Signed, "buffer load_sel_i, to the PE below when loading");
  const Expr psum_out = m.output("psum_o", aw, Sign::Signed, "partial sum to the PE below");
  const Expr psum_valid_out = m.output("psum_valid_o", 1, Sign::Unsigned, "psum_o holds a valid partial sum");

  const Expr w0_q = m.signal("w0_q", dw, Sign::Signed), w1_q = m.signal("w1_q", dw, Sign::Signed);
  const Expr a_q = m.signal("a_q", dw, Sign::Signed);
  const Expr psum_q = m.signal("psum_q", aw, Sign::Signed);
  const Expr mac_q = m.signal("mac_q", 1), sel_q = m.signal("sel_q", 1);
  const Expr w_mac = m.wire("w_mac", mux(sel_in, w1_q, w0_q), "the buffer the activation selects");
  const Expr product = m.wire("product", mul_full(a_in, w_mac), "full-width signed product");
  const Expr product_ext = m.wire("product_ext", sext(product, aw));
  const Expr acc_zero = sconstant(aw, 0);

  Always& regs = m.always_ff(clk, rst_n, "a load writes one buffer; a MAC latches its activation and buffer");
  regs.flop(w0_q, mux(load && !load_sel, w_in, w0_q), 0);
  regs.flop(w1_q, mux(load && load_sel, w_in, w1_q), 0);
  regs.flop(a_q, mux(mac_in, a_in, a_q), 0);
  regs.flop(sel_q, mux(mac_in, sel_in, sel_q), 0);
  regs.flop(mac_q, mac_in, 0);

  if (c.mul_pipe == 0) {
    const Expr psum_base = m.wire("psum_base", mux(seg_start, acc_zero, psum_in), "a segment start cuts the chain");
    Always& acc = m.always_ff(clk, rst_n, "accumulate on a MAC, pass the partial sum otherwise");
    acc.flop(psum_q, mux(mac_in, psum_base + product_ext, psum_in), 0);
    m.assign(psum_valid_out, mac_q);
  } else {
    // One register after the multiplier: the add happens a cycle after the MAC.
    const Expr prod_q = m.signal("prod_q", aw, Sign::Signed);
    const Expr seg_q = m.signal("seg_q", 1);
    const Expr psum_valid_q = m.signal("psum_valid_q", 1);
    Always& pipe = m.always_ff(clk, rst_n, "multiplier pipeline stage, then accumulate");
    pipe.flop(prod_q, mux(mac_in, product_ext, prod_q), 0);
    pipe.flop(seg_q, mux(mac_in, seg_start, seg_q), 0);
    pipe.flop(psum_valid_q, mac_q, 0);
    const Expr psum_base = m.wire("psum_base", mux(seg_q, acc_zero, psum_in), "the registered segment start cuts the chain");
    pipe.flop(psum_q, mux(mac_q, psum_base + prod_q, psum_in), 0);
    m.assign(psum_valid_out, psum_valid_q);
  }
  m.assign(a_out, a_q);
  m.assign(mac_out, mac_q);
  m.assign(sel_out, sel_q);
  m.assign(w_out, mux(load_sel, w1_q, w0_q));
  m.assign(psum_out, psum_q);
  return m;
}

void PeBlock::Model::step(const PeInputs& in) {
  const int64_t product = wrap_signed(in.a * w[in.sel ? 1 : 0], psum_w);
  if (mul_pipe == 0) {
    psum = in.mac ? wrap_signed((in.seg_start ? 0 : in.psum) + product, psum_w) : in.psum;
    psum_valid = in.mac;
  } else {
    // Pipelined: the add uses the product and segment bit registered by the previous MAC.
    psum = mac ? wrap_signed((seg ? 0 : in.psum) + prod, psum_w) : in.psum;
    psum_valid = mac;
    if (in.mac) {
      prod = product;
      seg = in.seg_start;
    }
  }
  if (in.load) w[in.load_sel ? 1 : 0] = in.w;
  if (in.mac) {
    a = in.a;
    sel = in.sel;
  }
  mac = in.mac;
}

}  // namespace kaleido::hw
