#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

std::string SramBlock::name(int depth, int width, int reads, int writes) {
  return "kld_sram_" + std::to_string(depth) + "x" + std::to_string(width) + (reads > 1 ? "_r" + std::to_string(reads) : "") +
         (writes > 1 ? "_w" + std::to_string(writes) : "");
}

Module SramBlock::generate(const HwConfig&, int depth, int width, int reads, int writes) {
  Module m(name(depth, width, reads, writes),
           writes > 1 ? "Behavioural memory: " + std::to_string(writes) +
                            " synchronous write ports (a later port wins on a shared address), asynchronous "
                            "reads. Kept out of logic synthesis and costed by the SRAM model"
                      : "Behavioural memory: one synchronous write port, asynchronous reads. Kept out of logic "
                        "synthesis and costed by the SRAM model; replaceable by a macro with a registered read "
                        "(one more pipeline stage)");
  const int aw = clog2(depth);
  const Expr clk = m.input("clk_i", 1);
  std::vector<Expr> we, waddr, wdata;
  for (int k = 0; k < writes; ++k) {
    const std::string sfx = writes > 1 ? std::to_string(k) : "";
    we.push_back(m.input("we" + sfx + "_i", 1));
    waddr.push_back(m.input("waddr" + sfx + "_i", aw));
    wdata.push_back(m.input("wdata" + sfx + "_i", width));
  }
  const Memory mem = m.memory("mem", width, depth);
  Block& wr = m.always_ff_no_reset(clk, writes > 1 ? "write ports" : "write port");
  for (size_t k = 0; k < we.size(); ++k) wr.if_(we[k]).then_().assign(mem[waddr[k]], wdata[k]);
  for (int k = 0; k < reads; ++k) {
    const std::string sfx = reads > 1 ? std::to_string(k) : "";
    const Expr raddr = m.input("raddr" + sfx + "_i", aw);
    const Expr rdata = m.output("rdata" + sfx + "_o", width);
    m.assign(rdata, mem[raddr]);
  }
  return m;
}

}  // namespace kaleido::hw
