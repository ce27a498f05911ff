#include <algorithm>

#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

namespace {
// Bits of a coordinate, wide enough for origin + tile size without overflow.
int coord_w(const HwConfig& c) { return clog2(2 * std::max({c.max_t, c.max_h, c.max_w}) + 1); }
}  // namespace

Module DispatcherBlock::generate(const HwConfig& c, const Module& list_sram) {
  Module m("kld_dispatcher",
           "Scan-order and reference address generation for the detector; per-group compute lists; packing of "
           "COMPUTE work into the array segments, one token per segment per cycle, no bubbles for reused pairs");
  const int tw = c.token_w(), sw = DetectorBlock::slot_w(c), cw = coord_w(c), segs = c.segs(), G = c.max_groups();
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
  const Expr scan_step = m.input("scan_step_i", 1, Sign::Unsigned, "advance to the next position");
  const Expr list_clear = m.input("list_clear_i", 1, Sign::Unsigned, "empty every compute list");
  const Expr push = m.input("push_i", G, Sign::Unsigned, "group g's pair at the scan token computes: append it");
  const Expr kt = m.input("kt_i", ktw, Sign::Unsigned, "k-tile of the current pass");
  const Expr pass_start = m.input("pass_start_i", 1, Sign::Unsigned, "rewind the segment pointers");
  const Expr issue_en = m.input("issue_en_i", 1, Sign::Unsigned, "the ISSUE phase is on");
  const Expr ready = m.input("ready_i", segs, Sign::Unsigned, "the array takes segment s's token");
  const Expr scan_token = m.output("scan_token_o", tw, Sign::Unsigned, "token at the scan position");
  const Expr scan_slot = m.output("scan_slot_o", sw, Sign::Unsigned, "window slot of the scan position");
  const Expr scan_avail = m.output("scan_avail_o", 3, Sign::Unsigned, "references available: bit 0 t, 1 h, 2 w");
  const Expr scan_ref_slot = m.output("scan_ref_slot_o", 3 * sw, Sign::Unsigned, "window slots of the references");
  const Expr scan_last = m.output("scan_last_o", 1, Sign::Unsigned, "the scan position is the last of the grid");
  const Expr seg_valid = m.output("seg_valid_o", segs, Sign::Unsigned, "segment s has a token to issue");
  const Expr seg_token = m.output("seg_token_o", segs * tw, Sign::Unsigned, "segment s's token");
  const Expr pass_pending = m.output("pass_pending_o", 1, Sign::Unsigned, "some segment has work left in this pass");
  const Expr pass_nonempty = m.output("pass_nonempty_o", 1, Sign::Unsigned, "some segment has work in this pass");
  const Expr pass_last = m.output("pass_last_o", 1, Sign::Unsigned,
                                  "every segment is done after this cycle's issues (ISSUE ends)");

  // ---- scan generator: tiles in raster order; inside a tile t, h, w ----
  const Expr h0_q = m.signal("h0_q", cw), w0_q = m.signal("w0_q", cw);
  const Expr t_q = m.signal("t_q", cw), h_q = m.signal("h_q", cw), w_q = m.signal("w_q", cw);
  const Expr slot_q = m.signal("slot_q", sw);
  const Expr h_left = m.wire("h_left", dim_h - h0_q, "rows from the tile origin to the grid edge");
  const Expr w_left = m.wire("w_left", dim_w - w0_q);
  const Expr th_eff = m.wire("th_eff", mux(tile_h < h_left, tile_h, h_left), "tile height, clipped at the edge");
  const Expr tw_eff = m.wire("tw_eff", mux(tile_w < w_left, tile_w, w_left), "tile width, clipped at the edge");
  const Expr th_x = m.wire("th_x", zext(th_eff, tw + 1)), tw_x = m.wire("tw_x", zext(tw_eff, tw + 1));
  const Expr area = m.wire("area", th_x * tw_x, "tile area: scan distance of the t reference");
  const Expr last_w = m.wire("last_w", (w_q + constant(cw, 1)) == (w0_q + tw_eff));
  const Expr last_h = m.wire("last_h", (h_q + constant(cw, 1)) == (h0_q + th_eff));
  const Expr last_t = m.wire("last_t", (t_q + constant(cw, 1)) == dim_t);
  const Expr last_tcol = m.wire("last_tile_col", (w0_q + tile_w) >= dim_w);
  const Expr last_trow = m.wire("last_tile_row", (h0_q + tile_h) >= dim_h);
  const Expr t_x = m.wire("t_x", zext(t_q, tw)), h_x = m.wire("h_x", zext(h_q, tw)), w_x = m.wire("w_x", zext(w_q, tw));
  const Expr dh_x = m.wire("dim_h_x", zext(dim_h, tw)), dw_x = m.wire("dim_w_x", zext(dim_w, tw));
  m.assign(scan_token, (t_x * dh_x + h_x) * dw_x + w_x, "token index (t*H + h)*W + w");
  m.assign(scan_slot, slot_q);
  const Expr win_x = m.wire("win_x", zext(win, tw + 1));
  m.assign(scan_avail, concat({(w_q != w0_q) && (win != zero(ww)), (h_q != h0_q) && (tw_x <= win_x),
                               (t_q != zero(cw)) && (area <= win_x)}));
  const Expr tw_s = m.wire("tw_slot", tw_x.slice(sw - 1, 0)), area_s = m.wire("area_slot", area.slice(sw - 1, 0));
  m.assign(scan_ref_slot, concat({slot_q - constant(sw, 1), slot_q - tw_s, slot_q - area_s}),
           "w at 2*SW, h at SW, t at 0: slots wrap modulo WIN_CAP");
  m.assign(scan_last, last_w && last_h && last_t && last_tcol && last_trow);
  m.unused(concat({tw_x.slice(tw, sw), area.slice(tw, sw)}), "distances only matter modulo the window capacity here");

  Always& scan = m.always_ff(clk, rst_n, "advance the scan position");
  for (const Expr& q : {h0_q, w0_q, t_q, h_q, w_q}) scan.on_reset().assign(q, 0);
  scan.on_reset().assign(slot_q, 0);
  IfStmt& sc = scan.body().if_(scan_clear);
  for (const Expr& q : {h0_q, w0_q, t_q, h_q, w_q}) sc.then_().assign(q, 0);
  sc.then_().assign(slot_q, 0);
  Block& st = sc.elif(scan_step);
  st.assign(slot_q, slot_q + constant(sw, 1));
  IfStmt& iw = st.if_(!last_w);
  iw.then_().assign(w_q, w_q + constant(cw, 1));
  Block& nw = iw.else_();
  nw.assign(w_q, w0_q);
  IfStmt& ih = nw.if_(!last_h);
  ih.then_().assign(h_q, h_q + constant(cw, 1));
  Block& nh = ih.else_();
  nh.assign(h_q, h0_q);
  IfStmt& it = nh.if_(!last_t);
  it.then_().assign(t_q, t_q + constant(cw, 1));
  Block& ntile = it.else_();
  ntile.assign(t_q, 0);
  IfStmt& icol = ntile.if_(!last_tcol);
  icol.then_().assign(w0_q, w0_q + tile_w);
  icol.then_().assign(w_q, w0_q + tile_w);
  Block& nrow = icol.else_();
  nrow.assign(w0_q, 0);
  nrow.assign(w_q, 0);
  IfStmt& irow = nrow.if_(!last_trow);
  irow.then_().assign(h0_q, h0_q + tile_h);
  irow.then_().assign(h_q, h0_q + tile_h);
  irow.else_().assign(h0_q, 0);
  irow.else_().assign(h_q, 0);

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
                {"wdata_i", scan_token},
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
    Expr len = zero(tw + 1), tok = zero(tw), has = bit(false);
    for (int k = 0; k < c.max_kt(); ++k) {
      const int g = k * segs + s;
      if (g >= G) break;
      const Expr here = kt == constant(ktw, static_cast<uint64_t>(k));
      const Expr exists = constant(gcw, static_cast<uint64_t>(g)) < groups;
      len = mux(here && exists, count[static_cast<size_t>(g)], len);
      tok = mux(here, list_rd[static_cast<size_t>(g)], tok);
      has = has || (here && exists);
    }
    const Expr list_len = m.wire("list_len_" + sn, len, "list length of segment " + sn + "'s group");
    const Expr list_tok = m.wire("list_token_" + sn, tok);
    const Expr has_group = m.wire("has_group_" + sn, has, "the k-tile has a group for segment " + sn);
    const Expr p = ptr[static_cast<size_t>(s)];
    const Expr seg_len = m.wire("seg_len_" + sn, mux(dense, mux(has_group, n_tokens, zero(tw + 1)), list_len),
                                "tokens segment " + sn + " issues in this pass");
    const Expr left = m.wire("left_" + sn, p < seg_len);
    m.assign(seg_valid[s], issue_en && left);
    m.assign(seg_token.slice((s + 1) * tw - 1, s * tw), mux(dense, p.slice(tw - 1, 0), list_tok));
    issue.flop(p, mux(pass_start, zero(tw + 1), mux(issue_en && left && ready[s], p + constant(tw + 1, 1), p)), 0);
    pending.push_back(left);
    finishing.push_back(!left || (ready[s] && (p + constant(tw + 1, 1) == seg_len)));
    nonempty.push_back(seg_len != zero(tw + 1));
  }
  m.assign(pass_pending, reduce_or(concat(pending)));
  m.assign(pass_nonempty, reduce_or(concat(nonempty)));
  m.assign(pass_last, reduce_and(concat(finishing)));
  return m;
}

}  // namespace kaleido::hw
