#include <algorithm>

#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

Module MergeBlock::generate(const HwConfig& c, const Module& partial_sram, const Module& root_sram) {
  Module m("kld_merge",
           "Merge unit: writes each tap's partial P_g[token] into the partial memory of (group, column); the "
           "gather forms Out[i] = sum_g P_g[root_g(i)] (mod 2^ACC_W), reusing the partials of root tokens");
  const int tw = c.token_w(), segs = c.segs(), cols = c.cols, aw = c.acc_w, G = c.max_groups(), lanes = c.det_lanes();
  const int ktw = clog2(c.max_kt()), tagw = ArrayBlock::tag_width(c);
  const Expr clk = m.input("clk_i", 1);
  const Expr tap_valid = m.input("tap_valid_i", segs * cols);
  const Expr tap_tag = m.input("tap_tag_i", segs * cols * tagw, Sign::Unsigned, "{k-tile, token} of each tap");
  const Expr tap_psum = m.input("tap_psum_i", segs * cols * aw);
  const Expr root_we = m.input("root_we_i", G, Sign::Unsigned, "write group g's root of the detector's token");
  const Expr root_token = m.input("root_token_i", tw);
  const Expr root_data = m.input("root_data_i", lanes * tw, Sign::Unsigned, "root decided by each detector lane");
  const Expr gather_token = m.input("gather_token_i", tw, Sign::Unsigned, "token being gathered");
  const Expr dense = m.input("dense_i", 1, Sign::Unsigned, "dense mode: every pair is its own root");
  const Expr group_valid = m.input("group_valid_i", G, Sign::Unsigned, "group g exists (g < K/GROUP_W)");
  const bool banked = partials_banked(c);
  const int depth = std::max(2, partial_memory_depth(c)), paw = clog2(depth);
  Expr wbank, rbank;
  if (banked) {
    wbank = m.input("wbank_i", 1, Sign::Unsigned, "bank the taps write: parity of the m-tile in the array");
    rbank = m.input("rbank_i", 1, Sign::Unsigned, "bank the gather reads: parity of the m-tile being gathered");
  }
  // Address of token `tok` in a bank: the second bank starts at the token memory depth.
  const uint64_t bank_base = static_cast<uint64_t>(token_memory_depth(c));
  auto bank_addr = [&](const Expr& bank, const Expr& tok) {
    if (!banked) return tok;
    const Expr wide = zext(tok, paw);
    return mux(bank, wide + constant(paw, bank_base), wide);
  };
  const Expr out = m.output("out_data_o", cols * aw, Sign::Unsigned, "Out[gather token], column c at c*ACC_W");

  std::vector<Expr> sums(static_cast<size_t>(cols));
  for (int g = 0; g < G; ++g) {
    const std::string gn = std::to_string(g);
    const int s = g % segs, k = g / segs;
    const Expr rt = m.signal("root_" + gn, tw, Sign::Unsigned, "root of group " + gn + " for the gathered token");
    m.instance(root_sram, "u_root_" + gn,
               {{"clk_i", clk},
                {"we_i", root_we[g]},
                {"waddr_i", root_token},
                {"wdata_i", root_data.slice((g % lanes + 1) * tw - 1, (g % lanes) * tw)},
                {"raddr_i", gather_token},
                {"rdata_o", rt}},
               "root table of group " + gn);
    const Expr addr = m.wire("gather_addr_" + gn, mux(dense, gather_token, rt));
    for (int cc = 0; cc < cols; ++cc) {
      const int tap = s * cols + cc;
      const std::string name = gn + "_" + std::to_string(cc);
      const Expr rd = m.signal("partial_" + name, aw);
      // The tap of segment s carries group kt*SEGS + s, kt from its tag.
      const Expr mine = tagw == tw ? bit(true)
                                   : tap_tag.slice((tap + 1) * tagw - 1, tap * tagw + tw) ==
                                         constant(ktw, static_cast<uint64_t>(k));
      m.instance(partial_sram, "u_partial_" + name,
                 {{"clk_i", clk},
                  {"we_i", m.wire("tap_here_" + name, mine && tap_valid[tap],
                                  "a partial of group " + gn + " arrives at column " + std::to_string(cc))},
                  {"waddr_i", bank_addr(wbank, tap_tag.slice(tap * tagw + tw - 1, tap * tagw))},
                  {"wdata_i", tap_psum.slice((tap + 1) * aw - 1, tap * aw)},
                  {"raddr_i", bank_addr(rbank, addr)},
                  {"rdata_o", rd}},
                 "partials of group " + gn + ", column " + std::to_string(cc));
      const Expr term = m.wire("term_" + name, mux(group_valid[g], rd, zero(aw)));
      sums[static_cast<size_t>(cc)] = g == 0 ? term : m.wire("sum_" + name, sums[static_cast<size_t>(cc)] + term);
    }
  }
  for (int s = G; s < segs; ++s)  // segments that never hold a group (MAX_K/GROUP_W < SEGS)
    m.unused(concat({tap_valid.slice((s + 1) * cols - 1, s * cols),
                     tap_tag.slice((s + 1) * cols * tagw - 1, s * cols * tagw),
                     tap_psum.slice((s + 1) * cols * aw - 1, s * cols * aw)}),
             "segment " + std::to_string(s) + " has no channel group in any configuration");
  std::vector<Expr> words;
  for (int cc = cols - 1; cc >= 0; --cc) words.push_back(sums[static_cast<size_t>(cc)]);
  m.assign(out, concat(words));
  return m;
}

}  // namespace kaleido::hw
