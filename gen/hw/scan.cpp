#include <algorithm>
#include <array>
#include <functional>

#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

int ScanBlock::coord_w(const HwConfig& c) { return clog2(2 * std::max({c.max_t, c.max_h, c.max_w}) + 1); }

// Tiles in raster order; inside a tile t, h, w.
ScanBlock::Outputs ScanBlock::emit(Module& m, const HwConfig& c, const Inputs& in) {
  const int tw = c.token_w(), sw = DetectorBlock::slot_w(c), cw = coord_w(c), ww = clog2(c.window_cap() + 1);
  const Expr clk = in.clk, rst_n = in.rst_n, dim_t = in.dim_t, dim_h = in.dim_h, dim_w = in.dim_w;
  const Expr tile_h = in.tile_h, tile_w = in.tile_w, win = in.win, scan_clear = in.clear;
  const Expr scan_step_next = in.step_next;
  // The position (tile origin h0, w0 and t, h, w) advances on scan_step; the
  // outputs for a position are computed from its next value and registered,
  // so the token arithmetic does not sit in front of the memories it addresses.
  struct Pos {
    Expr h0, w0, t, h, w, slot;
  };
  const Pos q{m.signal("h0_q", cw), m.signal("w0_q", cw), m.signal("t_q", cw), m.signal("h_q", cw), m.signal("w_q", cw),
              m.signal("slot_q", sw)};
  // Tile sizes at a position, clipped at the grid's edge.
  auto tile_at = [&](const Pos& p, const std::string& sfx) {
    const Expr h_left = m.wire("h_left" + sfx, dim_h - p.h0, "rows from the tile origin to the grid edge");
    const Expr w_left = m.wire("w_left" + sfx, dim_w - p.w0);
    const Expr th = m.wire("th_eff" + sfx, mux(tile_h < h_left, tile_h, h_left), "tile height, clipped at the edge");
    const Expr tw_ = m.wire("tw_eff" + sfx, mux(tile_w < w_left, tile_w, w_left), "tile width, clipped at the edge");
    return std::make_pair(th, tw_);
  };
  // Where the position lies (last w of its tile row, last row of the tile, last frame, last tile
  // column, last tile row), registered from the next position's coordinates: the step logic, and
  // the token that addresses the A memories a cycle ahead, then start from registers rather than
  // from the tile arithmetic. A scan is always cleared before use, which sets them.
  const Expr last_w = m.signal("last_w_q", 1, Sign::Unsigned, "the position ends its row in the tile");
  const Expr last_h = m.signal("last_h_q", 1, Sign::Unsigned, "the position is in the tile's last row");
  const Expr last_t = m.signal("last_t_q", 1, Sign::Unsigned, "the position is in the last frame");
  const Expr last_tcol = m.signal("last_tile_col_q", 1, Sign::Unsigned, "the tile is in the last tile column");
  const Expr last_trow = m.signal("last_tile_row_q", 1, Sign::Unsigned, "the tile is in the last tile row");
  // Next position: w, then h, then t, then the next tile; wraps after the last.
  // A clear comes only while the scan is idle (no step), and wins where both could meet:
  // the step is not qualified by it, which keeps the START checks off the scan's paths.
  // The step is registered here, a cycle after kld_top decides it: a net from the top would reach
  // every scan register through a driver the top's synthesis sizes without seeing this module's
  // loads. (The A memories' read address is registered from the undelayed step, below.)
  const Expr scan_step = m.signal("scan_step_q", 1, Sign::Unsigned, "the scan advances to the next position");
  // Its complement in a flip-flop of its own picks the window's read addresses: the step drives
  // every scan register's next value, and a chain of buffers stood between it and the memories.
  const Expr scan_hold = m.signal("scan_hold_q", 1, Sign::Unsigned, "the scan stays at its position (not the step)");
  Always& step_regs = m.always_ff(clk, rst_n, "the scan step, decided a cycle ahead");
  step_regs.flop(scan_step, scan_step_next, 0);
  // Reset to 0 like every flip-flop here (a set flop would be remapped onto the step's own
  // flip-flop on a library without one): while in reset both tokens it chooses between are 0.
  step_regs.flop(scan_hold, !scan_step_next, 0);
  const Expr step = m.wire("scan_advance", scan_step);
  const Expr wrap_w = m.wire("wrap_w", last_w), wrap_h = m.wire("wrap_h", last_w && last_h);
  const Expr wrap_t = m.wire("wrap_t", last_w && last_h && last_t);
  const Expr wrap_col = m.wire("wrap_tile_col", last_w && last_h && last_t && last_tcol);
  // The next tile column's and row's origins (w0 + TILE_W, h0 + TILE_H) and what lies beyond them
  // (W - w0 - TILE_W, H - h0 - TILE_H), registered from the next position: the step only chooses
  // them, and the next tile's sizes (below) start from registers.
  const Expr w0_inc_q = m.signal("w0_inc_q", cw, Sign::Unsigned, "w0 + TILE_W: the next tile column's origin");
  const Expr h0_inc_q = m.signal("h0_inc_q", cw, Sign::Unsigned, "h0 + TILE_H: the next tile row's origin");
  const Expr w_rest_q = m.signal("w_rest_q", cw, Sign::Unsigned,
                                 "W - w0 - TILE_W: columns right of the tile (used below the last tile column)");
  const Expr h_rest_q = m.signal("h_rest_q", cw, Sign::Unsigned,
                                 "H - h0 - TILE_H: rows below the tile (used above the last tile row)");
  const Expr next_w0 = mux(wrap_t, mux(last_tcol, zero(cw), w0_inc_q), q.w0);
  const Expr next_h0 = mux(wrap_col, mux(last_trow, zero(cw), h0_inc_q), q.h0);
  // The next position while scanning (nr), and with a clear (n: position 0). What is registered
  // from the next position is computed from nr and from the origin apart, and chosen by the clear
  // last: scan_clear_i comes from the START checks, a long path.
  const Pos nr{
      m.wire("h0_run", mux(step, next_h0, q.h0)),
      m.wire("w0_run", mux(step, next_w0, q.w0)),
      m.wire("t_run", mux(step, mux(wrap_t, zero(cw), mux(wrap_h, q.t + constant(cw, 1), q.t)), q.t)),
      m.wire("h_run", mux(step, mux(wrap_col, next_h0, mux(wrap_h, q.h0, mux(wrap_w, q.h + constant(cw, 1), q.h))), q.h)),
      m.wire("w_run", mux(step, mux(wrap_t, next_w0, mux(wrap_w, q.w0, q.w + constant(cw, 1))), q.w)),
      m.wire("slot_run", mux(step, q.slot + constant(sw, 1), q.slot))};
  const Pos origin{zero(cw), zero(cw), zero(cw), zero(cw), zero(cw), zero(sw)};
  const Pos n{m.wire("h0_d", mux(scan_clear, zero(cw), nr.h0)), m.wire("w0_d", mux(scan_clear, zero(cw), nr.w0)),
              m.wire("t_d", mux(scan_clear, zero(cw), nr.t)),    m.wire("h_d", mux(scan_clear, zero(cw), nr.h)),
              m.wire("w_d", mux(scan_clear, zero(cw), nr.w)),    m.wire("slot_d", mux(scan_clear, zero(sw), nr.slot))};
  Always& scan = m.always_ff(clk, rst_n, "the scan position");
  for (const auto& [reg, d] : {std::pair{q.h0, n.h0}, {q.w0, n.w0}, {q.t, n.t}, {q.h, n.h}, {q.w, n.w}, {q.slot, n.slot}})
    scan.flop(reg, d, 0);
  Always& edges = m.always_ff(clk, rst_n, "the next tile column's and row's origins, and what lies beyond them");
  // From the next position without the clear, which chooses last (as for the token sums below).
  edges.flop(w0_inc_q, mux(scan_clear, tile_w, nr.w0 + tile_w), 0);
  edges.flop(h0_inc_q, mux(scan_clear, tile_h, nr.h0 + tile_h), 0);
  edges.flop(w_rest_q, mux(scan_clear, dim_w - tile_w, dim_w - tile_w - nr.w0), 0);
  edges.flop(h_rest_q, mux(scan_clear, dim_h - tile_h, dim_h - tile_h - nr.h0), 0);

  // Without tokens (the ring's detector: A streams in scan order, and no window entry carries a root)
  // none of the token arithmetic is built.
  struct StepTokens {
    Expr tile, t, row;
  };
  Expr token_q, token_d, token_run, token_step, token_next_q;
  std::array<Expr, 4> inc_d;
  std::function<StepTokens(const std::array<Expr, 5>&, const std::array<Expr, 4>&, const std::string&)> step_tokens;
  if (in.tokens) {
    // The token index (t*H + h)*W + w follows the position by additions only, so no multiplier sits in
    // front of the A memory that scan_token_next_o addresses: beside the token, the tokens at (t, h, w0)
    // (its row in the tile), (t, h0, w0), (0, h0, w0) (the tile) and (0, h0, 0) (the row of tiles), and
    // the strides H*W and TILE_H*W registered at scan_clear_i. Every sum is a token of the grid when it
    // is taken, so TW bits hold it.
    const Expr row_q = m.signal("scan_row_q", tw, Sign::Unsigned, "token at (t, h, w0)");
    const Expr tbase_q = m.signal("scan_tbase_q", tw, Sign::Unsigned, "token at (t, h0, w0)");
    const Expr tile_q = m.signal("scan_tile_q", tw, Sign::Unsigned, "token at (0, h0, w0)");
    const Expr trow_q = m.signal("scan_trow_q", tw, Sign::Unsigned, "token at (0, h0, 0)");
    const Expr hw_q = m.signal("stride_hw_q", tw, Sign::Unsigned, "H*W (used only when t+1 < T, so below 2^TW)");
    const Expr thw_q = m.signal("stride_thw_q", tw, Sign::Unsigned, "TILE_H*W (used only below the last row of tiles)");
    token_q = m.signal("scan_token_q", tw);
    const Expr dw_t = m.wire("dim_w_t", resize(dim_w, tw)), tile_w_t = m.wire("tile_w_t", resize(tile_w, tw));
    const int pw = std::max(2 * cw, tw);  // H*W and TILE_H*W (below 2^(2*CW)) before truncation
    const Expr hw_full = m.wire("stride_hw", resize(dim_h, pw) * resize(dim_w, pw));
    const Expr thw_full = m.wire("stride_thw", resize(tile_h, pw) * resize(dim_w, pw));
    // The sums a step may take past the row (the row + W, the frame + H*W, the tile + TILE_W, the row
    // of tiles + TILE_H*W) are registered a cycle early from the registers' next values, and so is
    // the token after the position (scan_token_step_q): no adder or choice among sums sits between
    // the scan registers and the A memories they address.
    const Expr row_inc_q = m.signal("scan_row_inc_q", tw, Sign::Unsigned, "token at (t, h + 1, w0)");
    const Expr tbase_inc_q = m.signal("scan_tbase_inc_q", tw, Sign::Unsigned, "token at (t + 1, h0, w0)");
    const Expr tile_inc_q = m.signal("scan_tile_inc_q", tw, Sign::Unsigned, "token at (0, h0, w0 + TILE_W)");
    const Expr trow_inc_q = m.signal("scan_trow_inc_q", tw, Sign::Unsigned, "token at (0, h0 + TILE_H, 0)");
    // The tokens a step may move to past the row, from where the position lies (its last_* flags) and
    // the sums: of the current position from the registers, of the next cycle's from their next values.
    step_tokens = [&](const std::array<Expr, 5>& last, const std::array<Expr, 4>& inc, const std::string& sfx) {
      const auto& [lw, lh, lt, lcol, lrow] = last;
      const auto& [row_inc, tbase_inc, tile_inc, trow_inc] = inc;
      StepTokens s;
      s.tile = m.wire("scan_tile_next" + sfx, mux(lw && lh && lt && lcol, mux(lrow, zero(tw), trow_inc), tile_inc),
                      "token of the next tile");
      s.t = m.wire("scan_t_next" + sfx, mux(lw && lh && lt, s.tile, tbase_inc), "token at the next (t, h0, w0)");
      s.row = m.wire("scan_row_next" + sfx, mux(lw && lh, s.t, row_inc), "token at the next row start");
      return s;
    };
    const StepTokens now = step_tokens({last_w, last_h, last_t, last_tcol, last_trow},
                                       {row_inc_q, tbase_inc_q, tile_inc_q, trow_inc_q}, "");
    const Expr tile_next = now.tile, t_next = now.t, row_next = now.row;
    // The token after the current position, registered a cycle early (from the next cycle's flags and
    // sums): the A memories' read address (scan_token_next_q, below) is then one choice between the
    // next values of two registers.
    token_step = m.signal("scan_token_step_q", tw, Sign::Unsigned, "token of the position after this one");
    token_run = m.wire("token_run", mux(step, token_step, token_q));
    token_d = m.wire("token_d", mux(scan_clear, zero(tw), token_run),
                                "token of the next cycle's position");
    const Expr hw_d = m.wire("stride_hw_d", mux(scan_clear, trunc(hw_full, tw), hw_q));
    const Expr thw_d = m.wire("stride_thw_d", mux(scan_clear, trunc(thw_full, tw), thw_q));
    const Expr row_run = m.wire("scan_row_run", mux(step && wrap_w, row_next, row_q));
    const Expr tbase_run = m.wire("scan_tbase_run", mux(step && wrap_h, t_next, tbase_q));
    const Expr tile_run = m.wire("scan_tile_run", mux(step && wrap_t, tile_next, tile_q));
    const Expr trow_run = m.wire("scan_trow_run", mux(step && wrap_col, tile_next, trow_q));
    const Expr row_d = m.wire("scan_row_d", mux(scan_clear, zero(tw), row_run));
    const Expr tbase_d = m.wire("scan_tbase_d", mux(scan_clear, zero(tw), tbase_run));
    const Expr tile_d = m.wire("scan_tile_d", mux(scan_clear, zero(tw), tile_run));
    const Expr trow_d = m.wire("scan_trow_d", mux(scan_clear, zero(tw), trow_run));
    Always& strides = m.always_ff(clk, rst_n, "scan strides and row, tile and frame starts, and their steps");
    strides.flop(hw_q, hw_d, 0);
    strides.flop(thw_q, thw_d, 0);
    strides.flop(row_q, row_d, 0);
    strides.flop(tbase_q, tbase_d, 0);
    strides.flop(tile_q, tile_d, 0);
    strides.flop(trow_q, trow_d, 0);
    // At a clear every start is 0: its sum is the stride itself, the product off the adder. The
    // sums are taken from the scan's next values without the clear, which chooses last: it comes
    // from the START checks, a long path, and stood in front of the adders.
    inc_d = {
        m.wire("scan_row_inc_d", mux(scan_clear, dw_t, row_run + dw_t)),
        m.wire("scan_tbase_inc_d", mux(scan_clear, trunc(hw_full, tw), tbase_run + hw_q)),
        m.wire("scan_tile_inc_d", mux(scan_clear, tile_w_t, tile_run + tile_w_t)),
        m.wire("scan_trow_inc_d", mux(scan_clear, trunc(thw_full, tw), trow_run + thw_q))};
    for (const auto& [reg, d] : {std::pair{row_inc_q, inc_d[0]}, {tbase_inc_q, inc_d[1]}, {tile_inc_q, inc_d[2]},
                                 {trow_inc_q, inc_d[3]}})
      strides.flop(reg, d, 0);
    if (pw > tw) m.unused(concat({hw_full.slice(pw - 1, tw), thw_full.slice(pw - 1, tw)}),
                          "the strides are used only while they are below N");
  }
  const int dist_w = std::max(ww, tw + 1);  // distances and the window depth compared at full width
  const Expr win_x = m.wire("win_x", zext(win, dist_w));
  // A tile's sizes as the scan uses them: its width and area mod 2^SW (the h and t references'
  // distances) and whether they fit the window.
  struct Geometry {
    Expr tw_s, area_s, fits;
  };
  auto geometry = [&](const Expr& th_p, const Expr& tw_p, const std::string& sfx) {
    const Expr th_x = m.wire("th_x" + sfx, resize(th_p, tw + 1)), tw_x = m.wire("tw_x" + sfx, resize(tw_p, tw + 1));
    const Expr area = m.wire("area" + sfx, th_x * tw_x, "tile area: scan distance of the t reference");
    const Expr tw_d = dist_w > tw + 1 ? zext(tw_x, dist_w) : tw_x;
    const Expr area_d = dist_w > tw + 1 ? zext(area, dist_w) : area;
    return Geometry{m.wire("tw_slot" + sfx, resize(tw_x, sw)), m.wire("area_slot" + sfx, resize(area, sw)),
                    m.wire("fits" + sfx, concat({tw_d <= win_x, area_d <= win_x}),
                           "the h (bit 1) and t (bit 0) distances are within the window")};
  };
  // Outputs of a next position, registered: its tile's distances (mod 2^SW), its references'
  // availability, where it lies in its tile and the grid.
  struct Derived {
    Expr tw_s, area_s, fits, avail, last_w, last_h, last_t, last_tcol, last_trow, last;
  };
  auto derived = [&](const Pos& p, const Geometry& g, const std::string& sfx) {
    Derived d;
    d.tw_s = g.tw_s;
    d.area_s = g.area_s;
    d.fits = g.fits;
    d.avail = m.wire("avail" + sfx, concat({(p.w != p.w0) && (win != zero(ww)), (p.h != p.h0) && g.fits[1],
                                             (p.t != zero(cw)) && g.fits[0]}),
                     "references in the tile and the window: bit 0 t, 1 h, 2 w");
    // w + 1 never passes the tile's right edge nor the grid's, so it meets the nearer one (the
    // clipped width) when it meets either: no clipping on the step's path.
    const Expr w_next = p.w + constant(cw, 1), h_next = p.h + constant(cw, 1);
    d.last_w = m.wire("last_w" + sfx, (w_next == (p.w0 + tile_w)) || (w_next == dim_w));
    d.last_h = m.wire("last_h" + sfx, (h_next == (p.h0 + tile_h)) || (h_next == dim_h));
    d.last_t = m.wire("last_t" + sfx, (p.t + constant(cw, 1)) == dim_t);
    d.last_tcol = m.wire("last_tile_col" + sfx, (p.w0 + tile_w) >= dim_w);
    d.last_trow = m.wire("last_tile_row" + sfx, (p.h0 + tile_h) >= dim_h);
    d.last = m.wire("last" + sfx, d.last_w && d.last_h && d.last_t && d.last_tcol && d.last_trow,
                    "the position is the last of the grid");
    return d;
  };
  const auto [th0, tw0] = tile_at(origin, "_origin");
  const Geometry g0 = geometry(th0, tw0, "_origin");
  const Derived d0 = derived(origin, g0, "_origin");
  // The sizes of the tile after the current one, registered a cycle after the tile starts: its
  // product then stays off the step's paths. A step leaves a tile at its last position, at least a
  // cycle after its first, unless the tile holds one position; then T = 1 and the tile one row
  // high, so its successor is one row high too (the same tile row, or TILE_H = 1), and neither
  // size is used: a t reference needs t > 0, an h reference a row above. The grid's first tile,
  // after the last, takes the origin's sizes.
  const Expr th_q = m.signal("tile_th_q", cw, Sign::Unsigned, "the tile's height, clipped at the edge");
  const Expr fits_q = m.signal("tile_fits_q", 2, Sign::Unsigned,
                               "the tile's h (bit 1) and t (bit 0) distances are within the window");
  const Expr dist_h_q = m.signal("ref_dist_h_q", sw, Sign::Unsigned, "the current tile's width mod 2^SW");
  const Expr dist_t_q = m.signal("ref_dist_t_q", sw, Sign::Unsigned, "the current tile's area mod 2^SW");
  auto clip = [&](const Expr& size, const Expr& left) { return mux(size < left, size, left); };
  const Expr succ_th = m.wire("succ_th", mux(last_tcol, clip(tile_h, h_rest_q), th_q), "the next tile's height");
  const Expr succ_tw = m.wire("succ_tw", mux(last_tcol, tw0, clip(tile_w, w_rest_q)), "the next tile's width");
  const Geometry gs = geometry(succ_th, succ_tw, "_succ");
  if (cw > tw + 1) m.unused(succ_tw.slice(cw - 1, tw + 1), "a tile is at most N wide");
  const Expr succ_th_q = m.signal("succ_th_q", cw), succ_tw_s_q = m.signal("succ_tw_slot_q", sw);
  const Expr succ_area_s_q = m.signal("succ_area_slot_q", sw), succ_fits_q = m.signal("succ_fits_q", 2);
  Always& succ = m.always_ff(clk, rst_n, "the next tile's sizes");
  for (const auto& [reg, d] : {std::pair{succ_th_q, succ_th}, {succ_tw_s_q, gs.tw_s}, {succ_area_s_q, gs.area_s},
                               {succ_fits_q, gs.fits}})
    succ.flop(reg, d, 0);
  const Expr tile_step = m.wire("tile_step", step && wrap_t, "the next position starts a tile");
  const Expr to_origin = m.wire("tile_step_origin", wrap_col && last_trow, "... the grid's first");
  auto next_tile = [&](const Expr& at_origin, const Expr& after, const Expr& current, const std::string& name) {
    return m.wire(name, mux(tile_step, mux(to_origin, at_origin, after), current));
  };
  const Geometry gr{next_tile(g0.tw_s, succ_tw_s_q, dist_h_q, "tw_slot_run"),
                    next_tile(g0.area_s, succ_area_s_q, dist_t_q, "area_slot_run"),
                    next_tile(g0.fits, succ_fits_q, fits_q, "fits_run")};
  const Expr th_run = next_tile(th0, succ_th_q, th_q, "tile_th_run");
  const Derived dr = derived(nr, gr, "_run");
  auto at_next = [&](Expr Derived::*f, const std::string& name) {
    return m.wire(name, mux(scan_clear, d0.*f, dr.*f));
  };
  const Expr tw_s = at_next(&Derived::tw_s, "tw_slot"), area_s = at_next(&Derived::area_s, "area_slot");
  const Expr avail_d = at_next(&Derived::avail, "avail_d");
  Always& tile_regs = m.always_ff(clk, rst_n, "the current tile's height and window fit");
  tile_regs.flop(th_q, mux(scan_clear, th0, th_run), 0);
  tile_regs.flop(fits_q, at_next(&Derived::fits, "fits_d"), 0);
  // The w reference is always the previous position: the detector keeps it in a register, so only
  // the t and h slots are given, a cycle ahead, to address the window. They use the distances of the
  // current position's tile, registered: the tile arithmetic (a product) then stays off the path to
  // the window. The next position's tile differs only when it is a tile's first, which has no
  // references. At distance 1 (a tile one token wide, or of one token) t and h are the previous
  // position too: the detector then takes the entry it decides in this cycle.
  // A clear leads to position 0, which has no references either: the read address ignores it, which
  // keeps the run-start logic off the path too. Both candidates (the position held, or the one
  // after it) are registered a cycle early from the next slot and distances, so that the step
  // only picks one: the subtractions were between the step and the window memories.
  const Expr ref_stay_q = m.signal("ref_slot_stay_q", 2 * sw, Sign::Unsigned,
                                   "h, t reference slots of the position (slot - distance)");
  const Expr ref_step_q = m.signal("ref_slot_step_q", 2 * sw, Sign::Unsigned,
                                   "h, t reference slots of the position after it");
  const Expr slot_run_after = m.wire("slot_run_after", nr.slot + constant(sw, 1));
  const Expr one = constant(sw, 1u & ((1u << sw) - 1u));
  Always& ref_slots = m.always_ff(clk, rst_n, "reference slots of the next cycle's position and the one after");
  ref_slots.flop(ref_stay_q, mux(scan_clear, concat({zero(sw) - d0.tw_s, zero(sw) - d0.area_s}),
                                 concat({nr.slot - dr.tw_s, nr.slot - dr.area_s})), 0);
  ref_slots.flop(ref_step_q, mux(scan_clear, concat({one - d0.tw_s, one - d0.area_s}),
                                 concat({slot_run_after - dr.tw_s, slot_run_after - dr.area_s})), 0);
  const Expr ref_slot_d = m.wire("ref_slot_d", mux(scan_hold, ref_stay_q, ref_step_q),
                                 "the next position's t and h reference slots (h at SW, t at 0), modulo 2^SW");
  // Distance 1 from the same registers: modulo 2^SW a distance of 1 + k*2^SW looks the same, but such a
  // reference lies beyond WIN_CAP and is never available.
  const Expr near_next = m.wire("near_next", concat({dist_h_q == constant(sw, 1), dist_t_q == constant(sw, 1)}),
                                "the next position's h, t reference is at distance 1");
  // Distance 2 likewise (2 mod 2^SW: with SW = 1 every even distance looks alike, and all but 2
  // lie beyond WIN_CAP).
  const Expr two = constant(sw, 2u & ((1u << sw) - 1u));
  const Expr two_next = m.wire("two_next", concat({dist_h_q == two, dist_t_q == two}),
                               "the next position's h, t reference is at distance 2");
  const Expr last_w_d = at_next(&Derived::last_w, "last_w_d"), last_h_d = at_next(&Derived::last_h, "last_h_d");
  const Expr last_t_d = at_next(&Derived::last_t, "last_t_d");
  const Expr last_tcol_d = at_next(&Derived::last_tcol, "last_tile_col_d");
  const Expr last_trow_d = at_next(&Derived::last_trow, "last_tile_row_d");
  const Expr last_d = at_next(&Derived::last, "last_d");
  if (in.tokens) {
    const StepTokens after = step_tokens({last_w_d, last_h_d, last_t_d, last_tcol_d, last_trow_d}, inc_d, "_d");
    const Expr token_step_d = m.wire("scan_token_step_d", mux(last_w_d, after.row, mux(scan_clear, constant(tw, 1),
                                                                                      token_run + constant(tw, 1))),
                                     "the token after the next cycle's position");
    // The A memories' read address of the next cycle, registered: the step of the next cycle
    // (scan_step_next_i) chooses between the two tokens the scan registers take, so the address
    // leaves a flip-flop with no choice behind it; that choice and its select's buffering stood
    // between the scan and every A bank's read.
    token_next_q = m.signal("scan_token_next_q", tw, Sign::Unsigned,
                                       "token at the scan position of the next cycle (the A banks' read-ahead)");
    Always& tokens = m.always_ff(clk, rst_n, "the token after the next cycle's position, and the next cycle's");
    tokens.flop(token_step, token_step_d, 0);
    tokens.flop(token_next_q, mux(scan_step_next, token_step_d, token_d), 0);
  }
  const Expr avail_q = m.signal("scan_avail_q", 3);
  const Expr last_q = m.signal("scan_last_q", 1);
  Always& outs = m.always_ff(clk, rst_n, "registered scan outputs");
  if (in.tokens) outs.flop(token_q, token_d, 0);
  outs.flop(avail_q, avail_d, 0);
  outs.flop(dist_h_q, tw_s, 0);
  outs.flop(dist_t_q, area_s, 0);
  outs.flop(last_q, last_d, 0);
  for (const auto& [reg, d] : {std::pair{last_w, last_w_d}, {last_h, last_h_d}, {last_t, last_t_d},
                               {last_tcol, last_tcol_d}, {last_trow, last_trow_d}})
    outs.flop(reg, d, 0);

  return {token_q, token_next_q, q.slot, avail_q, ref_slot_d, near_next, two_next, last_q, wrap_t};
}

}  // namespace kaleido::hw
