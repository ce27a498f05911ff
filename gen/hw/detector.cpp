#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

namespace {
const char* const kAxis[3] = {"t", "h", "w"};
}

std::vector<Connection> DetectorBlock::Instance::connect(const HwConfig& c) const {
  const bool paired = c.lane_groups == 2, roots = variant == Variant::kTop;
  std::vector<Connection> conns = {
      {"clk_i", clk}, {"rst_ni", rst_n}, {"step_next_i", step_next}, {"retire_next_i", retire_next}};
  if (roots) conns.push_back({"token_i", scan.token});
  conns.insert(conns.end(), {{"slot_i", scan.slot},
                             {"ref_avail_i", scan.avail},
                             {"ref_slot_next_i", scan.ref_slot_next},
                             {"ref_near_next_i", scan.ref_near_next}});
  if (!paired) conns.push_back({"ref_two_next_i", scan.ref_two_next});
  if (paired && roots) conns.push_back({"phase_next_i", phase_next});
  conns.insert(conns.end(), {{"policy_i", policy},
                             {"naxes_i", naxes},
                             {"axes_i", axes},
                             {"lane_valid_i", lane_valid},
                             {"enable_i", enable},
                             {"rope_i", rope},
                             {"tau_i", tau},
                             {"a_i", a},
                             {"reuse_o", reuse},
                             {"axis_o", axis}});
  if (roots) conns.insert(conns.end(), {{"root_o", root}, {"root_last_o", root_last}});
  return conns;
}

int DetectorBlock::slot_w(const HwConfig& c) { return clog2(c.window_cap()); }
int DetectorBlock::window_depth(const HwConfig& c) { return c.lane_groups << slot_w(c); }
int DetectorBlock::entry_w(const HwConfig& c, Variant v) {
  return c.group_w * c.data_w + (v == Variant::kTop ? c.token_w() : 0);
}

Module DetectorBlock::generate_lane(const HwConfig& c, const Module& window_sram, Variant v) {
  // LANE_GROUPS 1: one group, a position per cycle, the first stage measuring against every value
  // the position before can take. LANE_GROUPS 2: two groups in alternate cycles, so a group's
  // position before is decided when the next one is measured (half the distance trees).
  const bool paired = c.lane_groups == 2, roots = v == Variant::kTop;
  Module m(roots ? "kld_detector_lane" : "kld_ring_detector_lane",
           std::string(roots ? "" : "Without roots (the ring resolves a REUSE pair through its codes). ") +
           (paired ? "Closed-loop reuse decisions of two channel groups in alternate cycles, each in two stages: "
                    "the distances d(r) = max |A - Ahat[r]| of the position in the first (but their last max "
                    "level), the threshold, the policy's choice and the window write in the second. REUSE if d <= "
                    "tau, the policy picks the reference"
                  : "Closed-loop reuse decision of one channel group per position, in two stages: the distances "
                    "d(r) = max |A - Ahat[r]| of the position in the first (but their last max level), the "
                    "threshold, the policy's choice and the window write in the second. REUSE if d <= tau, the "
                    "policy picks the reference"));
  const int dw = c.data_w, gw = c.group_w, tw = c.token_w(), sw = slot_w(c), tauw = c.tau_w();
  const int word = gw * dw, ew = entry_w(c, v);
  const std::string entry = roots ? "{root, Ahat}" : "Ahat";
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr step_next = m.input("step_next_i", 1, Sign::Unsigned,
                                 "the position presented next cycle enters the second stage");
  const Expr retire_next = m.input("retire_next_i", 1, Sign::Unsigned,
                                   "next cycle, the second stage's position is decided: write the window (a "
                                   "cycle after its step, later when the trace holds it)");
  Expr phase_next =
      paired && roots ? m.input("phase_next_i", 1, Sign::Unsigned,
                                "which of the lane's two groups the position presented next cycle belongs to")
                      : Expr();
  const Expr token = roots ? m.input("token_i", tw, Sign::Unsigned, "token being decided") : Expr();
  const Expr slot = m.input("slot_i", sw, Sign::Unsigned, "window slot of this position (scan position mod WIN_CAP)");
  const Expr ref_avail = m.input("ref_avail_i", 3, Sign::Unsigned, "reference exists in the tile and window: bit 0 t, 1 h, 2 w");
  const Expr ref_slot_next = m.input("ref_slot_next_i", 2 * sw, Sign::Unsigned,
                                     "window slots of the next cycle's t (at 0) and h references, read a cycle ahead");
  const Expr ref_near_next = m.input("ref_near_next_i", 2, Sign::Unsigned,
                                     "the next cycle's t (bit 0), h (bit 1) reference is at distance 1");
  const Expr ref_two_next = paired ? Expr()
                                    : m.input("ref_two_next_i", 2, Sign::Unsigned,
                                              "the next cycle's t (bit 0), h (bit 1) reference is at distance 2");
  const Expr policy = m.input("policy_i", 2, Sign::Unsigned, "0 fixed, 1 rope-orthogonal, 2 adaptive");
  const Expr naxes = m.input("naxes_i", 2, Sign::Unsigned, "fixed policy: length of the axis list");
  const Expr axes = m.input("axes_i", 6, Sign::Unsigned, "fixed policy: axis list, first at [1:0]");
  const Expr lane_valid = m.input("lane_valid_i", 1, Sign::Unsigned, "this lane has a group in this round");
  const Expr enable = m.input("enable_i", 1, Sign::Unsigned, "reuse enabled for the group");
  const Expr rope = m.input("rope_i", 3, Sign::Unsigned, "RoPE axes of the group");
  const Expr tau = m.input("tau_i", tauw, Sign::Unsigned, "threshold of the group");
  const Expr a = m.input("a_i", word, Sign::Unsigned, "the group's channels of this token");
  const Expr reuse = m.output("reuse_o", 1, Sign::Unsigned, "the second stage's pair is REUSE");
  const Expr axis_out = m.output("axis_o", 2, Sign::Unsigned, "chosen reference axis (0 when COMPUTE)");
  const Expr root_out = roots ? m.output("root_o", tw, Sign::Unsigned, "token whose partial this pair carries")
                              : Expr();
  const Expr root_last = roots ? m.output("root_last_o", tw, Sign::Unsigned,
                                          "root of the last decided pair (registered when it was decided)")
                               : Expr();
  // Why step and retire arrive a cycle early and are registered here: each enables a few hundred
  // of the lane's flops. Driven from kld_top, one net would cross into every lane, and the top's
  // synthesis, which cannot see the loads behind the ports, gives it its weakest driver.
  const Expr step = m.signal("step_q", 1, Sign::Unsigned, "the presented position enters the second stage");
  const Expr retire = m.signal("retire_q", 1, Sign::Unsigned, "the second stage's position is decided");
  const Expr phase_q =
      paired ? m.signal("phase_q", 1, Sign::Unsigned, "the presented position's group: 0 or 1") : Expr();
  Always& ctl = m.always_ff(clk, rst_n,
                            paired ? "this lane's copies of the detector's step, retire and phase"
                                   : "this lane's copies of the detector's step and retire");
  ctl.flop(step, step_next, 0);
  ctl.flop(retire, retire_next, 0);
  // The ring's lane keeps its phase itself: each step moves to the other group, as the scan's
  // phase does. The next cycle's group, the window's read address, has a flip-flop of its own:
  // step_q enables hundreds of flops, and its buffers stood in front of the read.
  if (paired && !roots) {
    phase_next = m.signal("phase_next_q", 1, Sign::Unsigned, "the group of the position presented next cycle");
    ctl.flop(phase_next, phase_next != step_next, 0);
  }
  if (paired) ctl.flop(phase_q, phase_next, 0);

  // Why two stages: the w reference of a position is the one before it, so Ahat of one position
  // feeds the next one's distance. With one group (LANE_GROUPS 1) the first stage measures the
  // position against the four values that Ahat of the position before can take (its own A, its t
  // or h entry, or the Ahat before it); the second picks one of the four by that position's
  // choice, registered, and decides. The loop is then the second stage alone; the distances'
  // subtractors and max trees are in the first. With two groups taking turns (LANE_GROUPS 2), a
  // group's positions are two cycles apart: the position before is decided (second stage) in the
  // cycle before the next one is measured (first stage), so the first stage measures against the
  // decided Ahat, one distance tree per reference, and the loop spans both stages.
  const Expr new_entry = m.signal("new_entry", ew, Sign::Unsigned, entry + " of the second stage's position");
  const Expr last_q = paired ? m.signal("last_entry_q", ew, Sign::Unsigned,
                                        entry + " of the last decided position: the w reference of the "
                                        "presented one")
                             : m.signal("last_entry_q", ew, Sign::Unsigned,
                                        entry + " of the last decided position");
  const Expr prev_q = paired ? m.signal("prev_entry_q", ew, Sign::Unsigned,
                                        entry + " decided before last_entry_q: the w reference of the second "
                                        "stage's")
                             : Expr();
  const Expr src = paired ? Expr()
                          : m.signal("ahat_src", 2, Sign::Unsigned, "where new_entry's Ahat came from (see ahat_src_q)");
  const Expr src_q = paired ? Expr()
                            : m.signal("ahat_src_q", 2, Sign::Unsigned,
                                       "Ahat of the last decided position: 0 its A, 1 its t entry, 2 its h entry, 3 "
                                       "the Ahat before it (a w reference, or a t or h reference at distance 1)");
  // Second-stage registers: the position's inputs and first-stage results.
  const Expr a_q = m.signal("s2_a_q", word), token_q = roots ? m.signal("s2_token_q", tw) : Expr();
  const Expr slot_q = m.signal("s2_slot_q", sw);
  const Expr s2_phase_q =
      paired ? m.signal("s2_phase_q", 1, Sign::Unsigned, "the second stage's group: 0 or 1") : Expr();
  const Expr ok_q = m.signal("s2_ok_q", 3, Sign::Unsigned, "reference available and allowed, group enabled: t, h, w");
  const Expr tau_q = m.signal("s2_tau_q", tauw);
  const Expr near_q = m.signal("s2_near_q", 2, Sign::Unsigned, "t, h reference at distance 1 (the w reference)");
  const Expr near_now_q = m.signal("near_now_q", 2, Sign::Unsigned, "t, h reference of the presented position at distance 1");

  // The window: effective inputs and roots of the last WIN_CAP positions, written when a position is
  // decided. The t and h entries are read a cycle ahead into registers; an entry decided in that
  // cycle (distance 2) is not in the window yet and is taken from new_entry instead; distance 1 is
  // the position before, handled like the w reference.
  // With two groups the window holds each group's slots ({phase, slot}), and the entry decided in
  // the read-ahead cycle is the group's position before (distance 1): every older one is written.
  std::vector<Expr> held;
  std::vector<Connection> conns = {{"clk_i", clk},
                                   {"we_i", retire},
                                   {"waddr_i", paired ? concat({s2_phase_q, slot_q}) : slot_q},
                                   {"wdata_i", new_entry}};
  Block& ahead = m.always_ff_no_reset(clk, "the t and h window entries of the next cycle's position");
  for (int ax = 0; ax < 2; ++ax) {
    const std::string an = kAxis[ax];
    const Expr raw = m.signal("win_" + an + "_rdata", ew);
    const Expr h = m.signal("win_" + an + "_q", ew, Sign::Unsigned, "window entry of the " + an + " reference");
    const Expr slot_next = ref_slot_next.slice((ax + 1) * sw - 1, ax * sw);
    conns.push_back({"raddr" + std::to_string(ax) + "_i", paired ? concat({phase_next, slot_next}) : slot_next});
    conns.push_back({"rdata" + std::to_string(ax) + "_o", raw});
    ahead.assign(h, paired ? raw : mux(step && ref_two_next[ax], new_entry, raw));
    held.push_back(h);
  }
  ahead.assign(near_now_q, ref_near_next);
  m.instance(window_sram, "u_window", conns);
  const Expr et_q = m.signal("s2_t_entry_q", ew), eh_q = m.signal("s2_h_entry_q", ew);

  // First stage: d(r) per reference, the largest absolute channel difference, exact in DATA_W+1 bits.
  std::vector<Expr> x;
  for (int j = 0; j < gw; ++j)
    x.push_back(m.wire("x_" + std::to_string(j), as_signed(a.slice((j + 1) * dw - 1, j * dw)), "this token, channel " + std::to_string(j)));
  auto distance = [&](const std::string& an, const Expr& ref_word) {
    std::vector<Expr> level;  // |x - y| per channel, then the larger of each pair, level by level
    for (int j = 0; j < gw; ++j) {
      const std::string sfx = an + "_" + std::to_string(j);
      const Expr y = m.wire("y_" + sfx, as_signed(ref_word.slice((j + 1) * dw - 1, j * dw)));
      const Expr xe = m.wire("xe_" + sfx, sext(x[static_cast<size_t>(j)], dw + 1));
      const Expr ye = m.wire("ye_" + sfx, sext(y, dw + 1));
      // Both differences at once, the sign of one picking: negating x - y after it settles
      // put a second carry chain on the lane's path.
      const Expr diff = m.wire("diff_" + sfx, xe - ye);
      const Expr diff_neg = m.wire("diff_neg_" + sfx, ye - xe);
      level.push_back(m.wire("mag_" + sfx, as_unsigned(mux(diff.msb(), diff_neg, diff))));
    }
    // A balanced tree of max, ceil(log2 GROUP_W) levels deep; its last level is in the second
    // stage (finish_distance), which had a level's time to spare, so the first stage registers
    // the two values it compares.
    for (int depth = 0; level.size() > 2; ++depth) {
      std::vector<Expr> next;
      for (size_t k = 0; k + 1 < level.size(); k += 2) {
        const std::string name = "max_" + an + "_l" + std::to_string(depth) + "_" + std::to_string(k / 2);
        next.push_back(m.wire(name, mux(level[k + 1] > level[k], level[k + 1], level[k])));
      }
      if (level.size() % 2 == 1) next.push_back(level.back());
      level = std::move(next);
    }
    return m.wire("d_" + an, concat(std::vector<Expr>(level.rbegin(), level.rend())),
                  "the last level's inputs of d(r) against the " + an + " value");
  };
  // The tree's last level, from the registered pair (or the single value when GROUP_W is 1).
  const int dpw = (gw > 1 ? 2 : 1) * (dw + 1);  // bits of a registered distance pair
  auto finish_distance = [&](const std::string& an, const Expr& pair_q) {
    if (gw == 1) return pair_q;
    const Expr lo = pair_q.slice(dw, 0), hi = pair_q.slice(2 * dw + 1, dw + 1);
    return m.wire("d_" + an + "_max", mux(hi > lo, hi, lo), "d(r) against the " + an + " value");
  };
  const Expr d_t = distance("t", held[0].slice(word - 1, 0)), d_h = distance("h", held[1].slice(word - 1, 0));
  // LANE_GROUPS 1: the four values Ahat of the position before can take, in ahat_src_q's order.
  // LANE_GROUPS 2: the decided one.
  std::vector<Expr> cand = {last_q.slice(word - 1, 0)};
  std::vector<std::string> cand_name = {"w"};
  if (!paired) {
    cand = {a_q, et_q.slice(word - 1, 0), eh_q.slice(word - 1, 0), last_q.slice(word - 1, 0)};
    cand_name = {"prev_a", "prev_t", "prev_h", "prev_w"};
  }
  std::vector<Expr> d_prev, d_prev_q;
  for (size_t k = 0; k < cand.size(); ++k) {
    d_prev.push_back(distance(cand_name[k], cand[k]));
    d_prev_q.push_back(m.signal("s2_d_" + cand_name[k] + "_q", dpw));
  }
  const Expr d_t_q = m.signal("s2_d_t_q", dpw), d_h_q = m.signal("s2_d_h_q", dpw);

  // Allowed: the fixed list for the fixed policy, else every axis outside the group's RoPE axes.
  const bool has_fixed = (c.policies & 1u) != 0, has_rope_based = (c.policies & 6u) != 0;
  const Expr fixed = policy == constant(2, 0);
  if (!has_fixed) m.unused(concat({naxes, axes}), "the fixed policy is not built in");
  if (!has_rope_based) m.unused(rope, "no rope-orthogonal or adaptive policy is built in");
  std::vector<Expr> ok_bits;  // most significant first: w, h, t
  for (int ax = 2; ax >= 0; --ax) {
    const std::string an = kAxis[ax];
    Expr allowed_expr;
    if (has_fixed) {
      const Expr a2 = constant(2, static_cast<uint64_t>(ax));
      const Expr in_list = m.wire("in_list_" + an, ((naxes >= constant(2, 1)) && (axes.slice(1, 0) == a2)) ||
                                                       ((naxes >= constant(2, 2)) && (axes.slice(3, 2) == a2)) ||
                                                       ((naxes == constant(2, 3)) && (axes.slice(5, 4) == a2)));
      allowed_expr = has_rope_based ? mux(fixed, in_list, !rope[ax]) : in_list;
    } else {
      allowed_expr = !rope[ax];
    }
    const Expr allowed = m.wire("allowed_" + an, allowed_expr);
    ok_bits.push_back(ref_avail[ax] && allowed && enable && lane_valid);
  }
  Block& s1 = m.always_ff_no_reset(clk, "first stage -> second stage, at a step").if_(step).then_();
  s1.assign(a_q, a);
  if (roots) s1.assign(token_q, token);
  s1.assign(slot_q, slot);
  if (paired) s1.assign(s2_phase_q, phase_q);
  s1.assign(et_q, held[0]);
  s1.assign(eh_q, held[1]);
  s1.assign(near_q, near_now_q);
  s1.assign(ok_q, concat(ok_bits));
  s1.assign(tau_q, tau);
  s1.assign(d_t_q, d_t);
  s1.assign(d_h_q, d_h);
  for (size_t k = 0; k < cand.size(); ++k) s1.assign(d_prev_q[k], d_prev[k]);

  // Second stage. The w reference is the position before: its distance is the one of the four
  // candidates that its choice names (one group), or the one measured (two groups); a t or h
  // reference at distance 1 is that position as well. Its entry is the last decided (one group),
  // or the one before it (two groups: the other group's position was decided in between).
  // The w reference's pair is chosen first, then finished: one comparator instead of four, in
  // the time the second stage has to spare.
  const Expr d_t2 = finish_distance("t", d_t_q), d_h2 = finish_distance("h", d_h_q);
  const Expr d_w2 = paired ? finish_distance("w", d_prev_q[0])
                           : finish_distance("w", m.wire("d_w_pair", select(src_q, d_prev_q, zero(dpw)),
                                                         "the w reference's (the position before's) pair"));
  const Expr w_entry = paired ? prev_q : last_q;
  const std::vector<Expr> dist = {m.wire("d_t_ref", mux(near_q[0], d_w2, d_t2), "d(r) of the t reference"),
                                  m.wire("d_h_ref", mux(near_q[1], d_w2, d_h2), "d(r) of the h reference"), d_w2};
  const std::vector<Expr> rd = {m.wire("ref_t", mux(near_q[0], w_entry, et_q), "window entry of the t reference"),
                                m.wire("ref_h", mux(near_q[1], w_entry, eh_q), "window entry of the h reference"),
                                m.wire("ref_w", w_entry, "the w reference's entry: the position before")};
  std::vector<Expr> pass;
  for (int ax = 0; ax < 3; ++ax)
    pass.push_back(m.wire(std::string("pass_") + kAxis[ax], ok_q[ax] && (dist[static_cast<size_t>(ax)] <= tau_q),
                          std::string("the ") + kAxis[ax] + " reference may be reused"));
  const Expr pass_vec = has_fixed ? m.wire("pass_vec", concat({bit(false), pass[2], pass[1], pass[0]}), "indexed by an axis code; code 3 never passes") : Expr();

  // Policies: the first passing axis in list order (fixed) or in t, h, w
  // order (rope-orthogonal), or the passing axis with the smallest d (adaptive).
  const Expr sel_valid = m.signal("sel_valid", 1);
  const Expr sel_axis = m.signal("sel_axis", 2);
  Block& sel = m.always_comb("reference selection by policy");
  sel.assign(sel_valid, 0);
  sel.assign(sel_axis, 0);
  CaseStmt& by_policy = sel.case_(policy);
  if (c.policies & 1u) {
    Block& f = by_policy.item(constant(2, 0));
    f.comment("fixed: the listed axes in order");
    IfStmt& k0 = f.if_((naxes >= constant(2, 1)) && pass_vec[axes.slice(1, 0)]);
    k0.then_().assign(sel_valid, 1);
    k0.then_().assign(sel_axis, axes.slice(1, 0));
    Block& k1 = k0.elif((naxes >= constant(2, 2)) && pass_vec[axes.slice(3, 2)]);
    k1.assign(sel_valid, 1);
    k1.assign(sel_axis, axes.slice(3, 2));
    Block& k2 = k0.elif((naxes == constant(2, 3)) && pass_vec[axes.slice(5, 4)]);
    k2.assign(sel_valid, 1);
    k2.assign(sel_axis, axes.slice(5, 4));
  }
  if (c.policies & 2u) {
    Block& r = by_policy.item(constant(2, 1));
    r.comment("rope-orthogonal: the first passing axis in t, h, w order");
    IfStmt& t = r.if_(pass[0]);
    t.then_().assign(sel_valid, 1);
    t.then_().assign(sel_axis, constant(2, 0));
    Block& h = t.elif(pass[1]);
    h.assign(sel_valid, 1);
    h.assign(sel_axis, constant(2, 1));
    Block& w = t.elif(pass[2]);
    w.assign(sel_valid, 1);
    w.assign(sel_axis, constant(2, 2));
  }
  if (c.policies & 4u) {
    // Adaptive: keep the best so far; a later axis wins only when strictly smaller.
    // w is compared with t and with h at once and the t/h winner picks the answer: comparing
    // it with the winner's d, selected first, put two comparators in series.
    const Expr best_th = m.wire("adaptive_h_beats_t", pass[1] && (!pass[0] || (dist[1] < dist[0])));
    const Expr w_below_t = m.wire("adaptive_w_below_t", dist[2] < dist[0]);
    const Expr w_below_h = m.wire("adaptive_w_below_h", dist[2] < dist[1]);
    const Expr any_th = m.wire("adaptive_any_th", pass[0] || pass[1]);
    const Expr w_wins =
        m.wire("adaptive_w_wins", pass[2] && (!any_th || mux(best_th, w_below_h, w_below_t)));
    Block& ad = by_policy.item(constant(2, 2));
    ad.comment("adaptive: the passing axis with the smallest difference (ties: t, h, w)");
    IfStmt& w = ad.if_(w_wins);
    w.then_().assign(sel_valid, 1);
    w.then_().assign(sel_axis, constant(2, 2));
    Block& th = w.elif(any_th);
    th.assign(sel_valid, 1);
    th.assign(sel_axis, mux(best_th, constant(2, 1), constant(2, 0)));
  }
  by_policy.default_().comment("a policy not built in: every pair computes (kld_top refuses to start)");

  const Expr picked = m.wire("picked", mux(sel_axis == constant(2, 2), rd[2], mux(sel_axis == constant(2, 1), rd[1], rd[0])),
                             "window entry of the chosen reference");
  m.assign(new_entry, mux(sel_valid, picked, roots ? concat({token_q, a_q}) : a_q),
           roots ? "REUSE copies the reference's Ahat and root" : "REUSE copies the reference's Ahat");
  if (paired) {
    Block& s2 = m.always_ff_no_reset(clk, "the decided positions' entries, the newest two").if_(retire).then_();
    s2.assign(prev_q, last_q);
    s2.assign(last_q, new_entry);
  } else {
    const Expr from_prev =
        m.wire("from_prev", (sel_axis == constant(2, 2)) || ((sel_axis == constant(2, 0)) && near_q[0]) ||
                                ((sel_axis == constant(2, 1)) && near_q[1]),
               "the chosen reference is the position before");
    m.assign(src, mux(!sel_valid, constant(2, 0),
                      mux(from_prev, constant(2, 3), mux(sel_axis == constant(2, 1), constant(2, 2), constant(2, 1)))));
    Block& s2 =
        m.always_ff_no_reset(clk, "the decided position's entry and where its Ahat came from").if_(retire).then_();
    s2.assign(last_q, new_entry);
    s2.assign(src_q, src);
  }
  m.assign(reuse, sel_valid);
  m.assign(axis_out, sel_axis);
  if (roots) {
    m.assign(root_out, new_entry.slice(ew - 1, word));
    // The decided pair's root is already in last_entry_q, the w reference's register: kld_top
    // writes its root table from there, not from a second register behind the decision logic.
    m.assign(root_last, last_q.slice(ew - 1, word));
  }
  return m;
}

Module DetectorBlock::generate(const HwConfig& c, const Module& lane, Variant v) {
  const bool roots = v == Variant::kTop;
  Module m(roots ? "kld_detector" : "kld_ring_detector",
           std::string("Reuse detector: LANES groups decided per cycle at one scan position, a cycle after its step") +
               (roots ? "" : " (without roots)"));
  const int lanes = c.det_lanes(), gw = c.group_w, dw = c.data_w, tw = c.token_w(), sw = slot_w(c), tauw = c.tau_w();
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr step_next = m.input("step_next_i", 1, Sign::Unsigned,
                                 "next cycle, the presented position enters the lanes' second stage");
  const Expr retire_next = m.input("retire_next_i", 1, Sign::Unsigned,
                                   "next cycle, the second stage's position is decided");
  const Expr token = roots ? m.input("token_i", tw) : Expr();
  const Expr slot = m.input("slot_i", sw);
  const Expr ref_avail = m.input("ref_avail_i", 3);
  const Expr ref_slot_next = m.input("ref_slot_next_i", 2 * sw);
  const Expr ref_near_next = m.input("ref_near_next_i", 2);
  const bool paired = c.lane_groups == 2;
  const Expr ref_two_next = paired ? Expr() : m.input("ref_two_next_i", 2);
  const Expr phase_next =
      paired && roots ? m.input("phase_next_i", 1, Sign::Unsigned, "next cycle's position is each lane's group 0 or 1")
                      : Expr();
  const Expr policy = m.input("policy_i", 2);
  const Expr naxes = m.input("naxes_i", 2);
  const Expr axes = m.input("axes_i", 6);
  const Expr lane_valid = m.input("lane_valid_i", lanes, Sign::Unsigned, "lane l has a group this round");
  const Expr enable = m.input("enable_i", lanes);
  const Expr rope = m.input("rope_i", 3 * lanes);
  const Expr tau = m.input("tau_i", tauw * lanes);
  const Expr a = m.input("a_i", gw * dw * lanes, Sign::Unsigned, "lane l's group channels at l*GROUP_W*DATA_W");
  const Expr reuse = m.output("reuse_o", lanes);
  const Expr axis = m.output("axis_o", 2 * lanes);
  const Expr root = roots ? m.output("root_o", tw * lanes) : Expr();
  const Expr root_last =
      roots ? m.output("root_last_o", tw * lanes, Sign::Unsigned, "lane l's last decided root at l*TW (registered)")
            : Expr();
  // One lane instance per group decided in a cycle (a generate loop when there are several).
  auto conns = [&](const Expr& l) -> std::vector<Connection> {
    Instance lane_at;  // the ports a lane shares with kld_detector, and lane l's own
    lane_at.clk = clk;
    lane_at.rst_n = rst_n;
    lane_at.step_next = step_next;
    lane_at.retire_next = retire_next;
    lane_at.scan = {token, Expr(), slot, ref_avail, ref_slot_next, ref_near_next, ref_two_next, Expr(), Expr()};
    lane_at.phase_next = phase_next;
    lane_at.policy = policy;
    lane_at.naxes = naxes;
    lane_at.axes = axes;
    lane_at.lane_valid = element(lane_valid, l);
    lane_at.enable = element(enable, l);
    lane_at.rope = element(rope, l, 3);
    lane_at.tau = element(tau, l, tauw);
    lane_at.a = element(a, l, gw * dw);
    lane_at.reuse = element(reuse, l);
    lane_at.axis = element(axis, l, 2);
    lane_at.root = roots ? element(root, l, tw) : Expr();
    lane_at.root_last = roots ? element(root_last, l, tw) : Expr();
    lane_at.variant = v;
    return lane_at.connect(c);
  };
  if (lanes == 1) {
    m.instance(lane, "u_lane", conns(Expr()));
  } else {
    GenerateFor& g = m.generate_for("g_lane", "l", 0, lanes);
    g.instance(lane, "u_lane", conns(g.var()));
  }
  return m;
}

}  // namespace kaleido::hw
