#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

const vlog::Module& SramBlock::add(vlog::Design& d, const HwConfig& c, int depth, int width, int reads, int writes,
                                   bool registered_read) {
  const std::string n = name(depth, width, reads, writes, registered_read);
  if (!d.has(n)) d.add(generate(c, depth, width, reads, writes, registered_read));
  return d.module(n);
}

std::string SramBlock::name(int depth, int width, int reads, int writes, bool registered_read) {
  return "kld_sram_" + std::to_string(depth) + "x" + std::to_string(width) + (reads > 1 ? "_r" + std::to_string(reads) : "") +
         (writes > 1 ? "_w" + std::to_string(writes) : "") + (registered_read ? "_sync" : "");
}

Module SramBlock::generate(const HwConfig&, int depth, int width, int reads, int writes, bool registered_read) {
  const std::string write_side =
      writes > 1 ? std::to_string(writes) + " synchronous write ports (a later port wins on a shared address)"
                 : "one synchronous write port";
  const std::string read_side =
      registered_read ? ", registered reads (a macro's: the data of the address presented before an edge, as the "
                        "memory held it before that edge's writes, is out after the edge)"
                      : ", asynchronous reads";
  // A one-write asynchronous memory says what a macro would change (kld_top's memories).
  const std::string macro_note =
      writes == 1 && !registered_read ? "; replaceable by a macro with a registered read (one more pipeline stage)" : "";
  Module m(name(depth, width, reads, writes, registered_read),
           "Behavioural memory: " + write_side + read_side +
               ". Kept out of logic synthesis and costed by the SRAM model" + macro_note);
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
    if (!registered_read) {
      m.assign(rdata, mem[raddr]);
      continue;
    }
    const Expr rdata_q = m.signal("rdata" + sfx + "_q", width);
    m.always_ff_no_reset(clk, "registered read").assign(rdata_q, mem[raddr]);
    m.assign(rdata, rdata_q);
  }
  return m;
}

}  // namespace kaleido::hw
