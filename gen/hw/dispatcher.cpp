#include <algorithm>
#include <array>

#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

Module DispatcherBlock::generate(const HwConfig& c, const Module& list_sram) {
  Module m("kld_dispatcher",
           "Scan-order and reference address generation for the detector; per-group compute lists; packing of "
           "COMPUTE work into the array segments, one token per segment per cycle, no bubbles for reused pairs");
  const int tw = c.token_w(), sw = DetectorBlock::slot_w(c), cw = ScanBlock::coord_w(c), segs = c.segs();
  const int G = c.max_groups();
  const int gcw = clog2(G + 1), ktw = clog2(c.max_kt()), ww = clog2(c.window_cap() + 1);
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr dim_t = m.input("dim_t_i", cw, Sign::Unsigned, "T");
  const Expr dim_h = m.input("dim_h_i", cw, Sign::Unsigned, "H");
  const Expr dim_w = m.input("dim_w_i", cw, Sign::Unsigned, "W");
  const Expr tile_h = m.input("tile_h_i", cw, Sign::Unsigned, "scan tile height (1..H)");
  const Expr tile_w = m.input("tile_w_i", cw, Sign::Unsigned, "scan tile width (1..W)");
  const Expr win = m.input("win_i", ww, Sign::Unsigned, "window depth in positions (1..WIN_CAP)");
  const Expr n_tokens = m.input("n_i", tw + 1, Sign::Unsigned, "N = T*H*W");
  const Expr groups = m.input("groups_i", gcw, Sign::Unsigned, "G = K / GROUP_W");
  const Expr dense = m.input("dense_i", 1, Sign::Unsigned, "dense mode: every segment issues every token");
  const Expr scan_clear = m.input("scan_clear_i", 1, Sign::Unsigned, "restart the scan at position 0");
  const Expr scan_step_next = m.input("scan_step_next_i", 1, Sign::Unsigned,
                                      "advance to the next position at the next cycle");
  const Expr list_clear = m.input("list_clear_i", 1, Sign::Unsigned, "empty every compute list");
  const Expr push = m.input("push_i", G, Sign::Unsigned, "group g's pair at push_token_i computes: append it");
  const Expr push_token = m.input("push_token_i", tw, Sign::Unsigned, "the token the pushes append");
  const Expr kt = m.input("kt_i", ktw, Sign::Unsigned, "k-tile of the current pass");
  const Expr pass_start = m.input("pass_start_i", 1, Sign::Unsigned, "rewind the segment pointers");
  const Expr issue_en = m.input("issue_en_i", 1, Sign::Unsigned, "the ISSUE phase is on");
  const Expr ready = m.input("ready_i", segs, Sign::Unsigned, "the array takes segment s's token");
  const Expr final_list = m.input("final_i", segs, Sign::Unsigned,
                                  "segment s's compute list is complete (its group's detection round is over)");
  const Expr scan_token = m.output("scan_token_o", tw, Sign::Unsigned, "token at the scan position");
  const Expr scan_token_next = m.output("scan_token_next_o", tw, Sign::Unsigned,
                                        "token at the scan position of the next cycle unless the scan is cleared "
                                        "(to register reads of it)");
  const Expr scan_slot = m.output("scan_slot_o", sw, Sign::Unsigned, "window slot of the scan position");
  const Expr scan_avail = m.output("scan_avail_o", 3, Sign::Unsigned, "references available: bit 0 t, 1 h, 2 w");
  const Expr scan_ref_slot_next = m.output("scan_ref_slot_next_o", 2 * sw, Sign::Unsigned,
                                           "window slots of the next cycle's t (at 0) and h references (to register "
                                           "the window reads of them)");
  const Expr scan_ref_near_next = m.output("scan_ref_near_next_o", 2, Sign::Unsigned,
                                           "the next cycle's t (bit 0), h (bit 1) reference is at distance 1");
  const Expr scan_ref_two_next = m.output("scan_ref_two_next_o", 2, Sign::Unsigned,
                                          "the next cycle's t (bit 0), h (bit 1) reference is at distance 2");
  const Expr scan_last = m.output("scan_last_o", 1, Sign::Unsigned, "the scan position is the last of the grid");
  const Expr seg_valid = m.output("seg_valid_o", segs, Sign::Unsigned, "segment s has a token to issue");
  const Expr seg_token = m.output("seg_token_o", segs * tw, Sign::Unsigned, "segment s's token");
  const Expr pass_pending = m.output("pass_pending_o", 1, Sign::Unsigned, "some segment has work left in this pass");
  const Expr pass_nonempty = m.output("pass_nonempty_o", 1, Sign::Unsigned,
                                     "some segment has or may still get work in this pass");
  const Expr pass_last = m.output("pass_last_o", 1, Sign::Unsigned,
                                  "every list is complete and done after this cycle's issues (ISSUE ends)");

  const ScanBlock::Outputs sc =
      ScanBlock::emit(m, c, {clk, rst_n, dim_t, dim_h, dim_w, tile_h, tile_w, win, scan_clear, scan_step_next});
  m.assign(scan_token, sc.token);
  m.assign(scan_token_next, sc.token_next);
  m.assign(scan_slot, sc.slot);
  m.assign(scan_avail, sc.avail);
  m.assign(scan_ref_slot_next, sc.ref_slot_next);
  m.assign(scan_ref_near_next, sc.ref_near_next);
  m.assign(scan_ref_two_next, sc.ref_two_next);
  m.assign(scan_last, sc.last);

  // ---- compute lists: one memory per group, filled in scan order ----
  std::vector<Expr> count(static_cast<size_t>(G)), list_rd(static_cast<size_t>(G));
  std::vector<Expr> ptr(static_cast<size_t>(segs));
  for (int s = 0; s < segs; ++s) ptr[static_cast<size_t>(s)] = m.signal("ptr_" + std::to_string(s) + "_q", tw + 1);
  Always& counts = m.always_ff(clk, rst_n, "compute-list lengths");
  for (int g = 0; g < G; ++g) {
    const std::string gn = std::to_string(g);
    const Expr cnt = m.signal("count_" + gn + "_q", tw + 1, Sign::Unsigned, "length of group " + gn + "'s list");
    count[static_cast<size_t>(g)] = cnt;
    list_rd[static_cast<size_t>(g)] = m.signal("list_" + gn + "_rdata", tw);
    counts.flop(cnt, mux(list_clear, zero(tw + 1), mux(push[g], cnt + constant(tw + 1, 1), cnt)), 0);
    m.instance(list_sram, "u_list_" + gn,
               {{"clk_i", clk},
                {"we_i", push[g]},
                {"waddr_i", cnt.slice(tw - 1, 0)},
                {"wdata_i", push_token},
                {"raddr_i", ptr[static_cast<size_t>(g % segs)].slice(tw - 1, 0)},
                {"rdata_o", list_rd[static_cast<size_t>(g)]}},
               "compute list of group " + gn);
    m.unused(cnt.msb(), "a full list (N entries) is never written further");
  }

  // ---- issue: segment s walks the list of group kt*SEGS + s ----
  Always& issue = m.always_ff(clk, rst_n, "segment pointers");
  std::vector<Expr> pending, nonempty, finishing;
  for (int s = 0; s < segs; ++s) {
    const std::string sn = std::to_string(s);
    Expr len = zero(tw + 1), has = bit(false);
    std::vector<Expr> reads;  // the list reads of the segment's groups, by k-tile
    for (int k = 0; k < c.max_kt(); ++k) {
      const int g = k * segs + s;
      if (g >= G) break;
      const Expr here = kt == constant(ktw, static_cast<uint64_t>(k));
      const Expr exists = constant(gcw, static_cast<uint64_t>(g)) < groups;
      len = mux(here && exists, count[static_cast<size_t>(g)], len);
      reads.push_back(list_rd[static_cast<size_t>(g)]);
      has = has || (here && exists);
    }
    // A balanced tree on the k-tile's bits: the list reads arrive last (an SRAM access), so each
    // passes clog2(KT) muxes, not a chain of one per k-tile.
    const Expr tok = select(kt, reads, zero(tw));
    const Expr list_len = m.wire("list_len_" + sn, len, "list length of segment " + sn + "'s group");
    const Expr list_tok = m.wire("list_token_" + sn, tok);
    const Expr has_group = m.wire("has_group_" + sn, has, "the k-tile has a group for segment " + sn);
    const Expr p = ptr[static_cast<size_t>(s)];
    const Expr seg_len = m.wire("seg_len_" + sn, mux(dense, mux(has_group, n_tokens, zero(tw + 1)), list_len),
                                "tokens segment " + sn + " issues in this pass");
    // A segment that no group can reach (s >= MAX_G) never issues; `p < 0` would be a constant
    // comparison, which lint rejects.
    const Expr left = m.wire("left_" + sn, s < G ? p < seg_len : bit(false),
                             "an entry is ready (the detector may still append)");
    m.assign(seg_valid[s], issue_en && left);
    m.assign(seg_token.slice((s + 1) * tw - 1, s * tw), mux(dense, p.slice(tw - 1, 0), list_tok));
    issue.flop(p, mux(pass_start, zero(tw + 1), mux(issue_en && left && ready[s], p + constant(tw + 1, 1), p)), 0);
    pending.push_back(left);
    finishing.push_back(final_list[s] && (!left || (ready[s] && (p + constant(tw + 1, 1) == seg_len))));
    nonempty.push_back(!final_list[s] || (seg_len != zero(tw + 1)));
  }
  m.assign(pass_pending, reduce_or(concat(pending)));
  m.assign(pass_nonempty, reduce_or(concat(nonempty)));
  m.assign(pass_last, reduce_and(concat(finishing)));
  return m;
}

}  // namespace kaleido::hw
