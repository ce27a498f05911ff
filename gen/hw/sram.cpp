#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

std::string SramBlock::name(int depth, int width, int reads) {
  return "kld_sram_" + std::to_string(depth) + "x" + std::to_string(width) + (reads > 1 ? "_r" + std::to_string(reads) : "");
}

Module SramBlock::generate(const HwConfig&, int depth, int width, int reads) {
  Module m(name(depth, width, reads),
           "Behavioural memory: one synchronous write port, asynchronous reads. Kept out of logic synthesis "
           "and costed by the SRAM model; replaceable by a macro with a registered read (one more pipeline stage)");
  const int aw = clog2(depth);
  const Expr clk = m.input("clk_i", 1);
  const Expr we = m.input("we_i", 1);
  const Expr waddr = m.input("waddr_i", aw);
  const Expr wdata = m.input("wdata_i", width);
  const Memory mem = m.memory("mem", width, depth);
  Block& wr = m.always_ff_no_reset(clk, "write port");
  wr.if_(we).then_().assign(mem[waddr], wdata);
  for (int k = 0; k < reads; ++k) {
    const std::string sfx = reads > 1 ? std::to_string(k) : "";
    const Expr raddr = m.input("raddr" + sfx + "_i", aw);
    const Expr rdata = m.output("rdata" + sfx + "_o", width);
    m.assign(rdata, mem[raddr]);
  }
  return m;
}

}  // namespace kaleido::hw
