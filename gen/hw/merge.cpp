#include <algorithm>

#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

std::vector<Expr> carry_save_pair(Module& m, std::vector<Expr> level, const std::string& suffix) {
  for (int depth_k = 0; level.size() > 2; ++depth_k) {
    std::vector<Expr> next;
    size_t t = 0;
    for (; t + 2 < level.size(); t += 3) {
      const std::string name = "csa_" + suffix + "_" + std::to_string(depth_k) + "_" + std::to_string(t / 3);
      const Expr &a = level[t], &b = level[t + 1], &d = level[t + 2];
      next.push_back(m.wire(name + "_sum", a ^ b ^ d));
      next.push_back(m.wire(name + "_carry", ((a & b) | (a & d) | (b & d)) << 1));
    }
    for (; t < level.size(); ++t) next.push_back(level[t]);
    level = std::move(next);
  }
  return level;
}

Expr carry_save_add(Module& m, const std::vector<Expr>& words, const std::string& suffix) {
  return words.size() == 2 ? m.wire("sum_" + suffix, words[0] + words[1]) : words.front();
}

Expr carry_save_sum(Module& m, std::vector<Expr> terms, const std::string& suffix) {
  return carry_save_add(m, carry_save_pair(m, std::move(terms), suffix), suffix);
}

Module MergeBlock::generate(const HwConfig& c, const Module& partial_sram, const Module& root_sram) {
  Module m("kld_merge",
           "Merge unit: writes each tap's partial P_g[token] into the partial memory of (group, column); the "
           "gather forms Out[i] = sum_g P_g[root_g(i)] (mod 2^ACC_W), reusing the partials of root tokens, "
           "in three registered steps: the root tables' read, the partials' read, their sum (a carry-save "
           "tree of 3:2 compressors, csa_*: sum = a ^ b ^ c, carry = majority one place up, then one "
           "adder). Partials "
           "are stored at PARTIAL_W bits and summed at OUT_SUM_W (exact widths), the output sign-extended");
  const int tw = c.token_w(), segs = c.segs(), cols = c.cols, aw = c.acc_w, G = c.max_groups(), lanes = c.det_lanes();
  const int pw = c.partial_w(), sw = c.out_sum_w();
  const bool banked = partials_banked(c);
  const int ktw = clog2(c.max_kt()), tagw = ArrayBlock::tag_width(c, banked);
  const Expr clk = m.input("clk_i", 1);
  const Expr tap_valid = m.input("tap_valid_i", segs * cols);
  const Expr tap_tag = m.input("tap_tag_i", segs * cols * tagw, Sign::Unsigned,
                               banked ? "{bank, k-tile, token} of each tap" : "{k-tile, token} of each tap");
  const Expr tap_psum = m.input("tap_psum_i", segs * cols * pw, Sign::Unsigned, "PARTIAL_W bits per tap");
  const Expr root_we = m.input("root_we_i", G, Sign::Unsigned, "write group g's root of the detector's token");
  const Expr root_token = m.input("root_token_i", tw);
  const Expr root_data = m.input("root_data_i", lanes * tw, Sign::Unsigned, "root decided by each detector lane");
  const Expr gather_token = m.input("gather_token_i", tw, Sign::Unsigned, "token entering the gather");
  const Expr gather_en = m.input("gather_en_i", 1, Sign::Unsigned,
                                 "the gather pipeline advances (its output register is free or being read)");
  const Expr dense = m.input("dense_i", 1, Sign::Unsigned, "dense mode: every pair is its own root");
  const Expr group_valid = m.input("group_valid_i", G, Sign::Unsigned, "group g exists (g < K/GROUP_W)");
  const int depth = std::max(2, partial_memory_depth(c)), paw = clog2(depth);
  Expr rbank;
  if (banked)
    rbank = m.input("rbank_i", 1, Sign::Unsigned,
                    "bank the gather reads: parity of the m-tile of the entering beat (registered with its "
                    "addresses)");
  // Address of token `tok` in a bank: the second bank starts at the token memory depth.
  const uint64_t bank_base = static_cast<uint64_t>(token_memory_depth(c));
  auto bank_addr = [&](const Expr& bank, const Expr& tok) {
    if (!banked) return tok;
    const Expr wide = zext(tok, paw);
    return mux(bank, wide + constant(paw, bank_base), wide);
  };
  const int gws = c.gather_w;
  const Expr out = m.output("out_data_o", gws * cols * aw, Sign::Unsigned,
                            "Out[token + j], column c at (j*COLS + c)*ACC_W, three gather steps after the token "
                            "entered");
  // Port `base` of read port k of a memory with GATHER_W read ports (unnumbered when there is one).
  auto rport = [&](const std::string& base, int k, const char* dir) {
    return base + (gws > 1 ? std::to_string(k) : "") + dir;
  };
  // Lane j of the gather (token + j): names get a lane suffix only when GATHER_W > 1.
  auto lane_sfx = [&](int j) { return gws > 1 ? "_l" + std::to_string(j) : std::string(); };

  // Every SRAM read lands in a register: the root read in gather_addr_*_q, the partials' read in
  // partial_*_q, their sum in out_data_q. Data only, no reset: the top's valid bits say which are
  // meaningful.
  Block& regs = m.always_ff_no_reset(clk, "gather pipeline registers, advanced by gather_en_i");
  IfStmt& en = regs.if_(gather_en);
  const Expr out_q = m.signal("out_data_q", gws * cols * sw, Sign::Unsigned, "the sums, OUT_SUM_W bits each");
  // terms[j][c]: the G terms of lane j, column c.
  std::vector<std::vector<std::vector<Expr>>> terms(static_cast<size_t>(gws),
                                                    std::vector<std::vector<Expr>>(static_cast<size_t>(cols)));
  // The tokens of the entering beat, and the root tables' read address: held at 0 in dense mode,
  // where every pair is its own root, so the tables read nothing (a memory reads when its address
  // moves) and the dense baseline spends no energy on them.
  std::vector<Expr> beat_token, root_raddr;
  for (int j = 0; j < gws; ++j) {
    beat_token.push_back(j == 0 ? gather_token
                                : m.wire("gather_token" + lane_sfx(j), gather_token + constant(tw, static_cast<uint64_t>(j))));
    root_raddr.push_back(m.wire("root_raddr" + lane_sfx(j), mux(dense, zero(tw), beat_token.back()),
                                "root tables' read address (0 in dense mode)"));
  }
  for (int g = 0; g < G; ++g) {
    const std::string gn = std::to_string(g);
    const int s = g % segs, k = g / segs;
    std::vector<Connection> root_conns = {{"clk_i", clk},
                                          {"we_i", root_we[g]},
                                          {"waddr_i", root_token},
                                          {"wdata_i", root_data.slice((g % lanes + 1) * tw - 1, (g % lanes) * tw)}};
    std::vector<Expr> addr(static_cast<size_t>(gws));
    for (int j = 0; j < gws; ++j) {
      const std::string jn = gn + lane_sfx(j);
      const Expr rt = m.signal("root_" + jn, tw, Sign::Unsigned,
                               "root of group " + gn + " for the gathered token" + (gws > 1 ? " + " + std::to_string(j) : ""));
      const Expr tok = beat_token[static_cast<size_t>(j)];
      root_conns.push_back({rport("raddr", j, "_i"), root_raddr[static_cast<size_t>(j)]});
      root_conns.push_back({rport("rdata", j, "_o"), rt});
      // The bank is part of the registered address: a bank bit shared by every partial memory had
      // the largest fanout on the gather's path.
      addr[static_cast<size_t>(j)] =
          m.signal("gather_addr_" + jn + "_q", banked ? paw : tw, Sign::Unsigned,
                   "partial address of group " + gn + ": the root (dense mode: the token), in its bank");
      en.then_().assign(addr[static_cast<size_t>(j)], bank_addr(rbank, mux(dense, tok, rt)));
    }
    m.instance(root_sram, "u_root_" + gn, root_conns, "root table of group " + gn);
    for (int cc = 0; cc < cols; ++cc) {
      const int tap = s * cols + cc;
      const std::string name = gn + "_" + std::to_string(cc);
      // The tap of segment s carries group kt*SEGS + s, kt from its tag.
      const Expr mine = c.max_kt() == 1 ? bit(true)
                                        : tap_tag.slice(tap * tagw + tw + ktw - 1, tap * tagw + tw) ==
                                              constant(ktw, static_cast<uint64_t>(k));
      // The bank the tap's m-tile writes (its parity, issued with the token): the taps of an
      // m-tile's last pass still land while the next m-tile's first pass fills the other bank.
      const Expr wbank = banked ? tap_tag[tap * tagw + tagw - 1] : Expr();
      std::vector<Connection> conns = {
          {"clk_i", clk},
          {"we_i", m.wire("tap_here_" + name, mine && tap_valid[tap],
                          "a partial of group " + gn + " arrives at column " + std::to_string(cc))},
          {"waddr_i", bank_addr(wbank, tap_tag.slice(tap * tagw + tw - 1, tap * tagw))},
          {"wdata_i", tap_psum.slice((tap + 1) * pw - 1, tap * pw)}};
      for (int j = 0; j < gws; ++j) {
        const Expr rd = m.signal("partial_" + name + lane_sfx(j), pw);
        const Expr held = m.signal("partial_" + name + lane_sfx(j) + "_q", pw);
        conns.push_back({rport("raddr", j, "_i"), addr[static_cast<size_t>(j)]});
        conns.push_back({rport("rdata", j, "_o"), rd});
        en.then_().assign(held, rd);
        terms[static_cast<size_t>(j)][static_cast<size_t>(cc)].push_back(
            m.wire("term_" + name + lane_sfx(j), mux(group_valid[g], sext(held, sw), zero(sw))));
      }
      m.instance(partial_sram, "u_partial_" + name, conns, "partials of group " + gn + ", column " + std::to_string(cc));
    }
  }
  // Per lane and column, a carry-save tree (3:2 compressors on whole words) takes the G terms to
  // two, and one adder sums those: about log1.5(G/2) full-adder delays (4 at G = 8, 8 at G = 32) and
  // one carry chain from the registered partials to out_data_q, instead of log2(G) chained adders.
  // Sums and carries wrap modulo 2^OUT_SUM_W like the words they stand for, so the result is the
  // same sum bit for bit. No memory read shares a path with this logic.
  std::vector<Expr> words;  // most significant first: lane GATHER_W-1, column COLS-1
  for (int j = gws - 1; j >= 0; --j)
    for (int cc = cols - 1; cc >= 0; --cc)
      words.push_back(carry_save_sum(m, terms[static_cast<size_t>(j)][static_cast<size_t>(cc)],
                                     std::to_string(cc) + lane_sfx(j)));
  for (int s = G; s < segs; ++s)  // segments that never hold a group (MAX_K/GROUP_W < SEGS)
    m.unused(concat({tap_valid.slice((s + 1) * cols - 1, s * cols),
                     tap_tag.slice((s + 1) * cols * tagw - 1, s * cols * tagw),
                     tap_psum.slice((s + 1) * cols * pw - 1, s * cols * pw)}),
             "segment " + std::to_string(s) + " has no channel group in any configuration");
  en.then_().assign(out_q, concat(words));
  std::vector<Expr> out_words;  // most significant first, as words
  for (int w = gws * cols - 1; w >= 0; --w) out_words.push_back(sext(out_q.slice((w + 1) * sw - 1, w * sw), aw));
  m.assign(out, concat(out_words));
  return m;
}

}  // namespace kaleido::hw
