#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

namespace {
const char* const kAxis[3] = {"t", "h", "w"};
}

int DetectorBlock::slot_w(const HwConfig& c) { return clog2(c.window_cap()); }

Module DetectorBlock::generate_lane(const HwConfig& c, const Module& window_sram) {
  Module m("kld_detector_lane",
           "Closed-loop reuse decision of one channel group per cycle: d(r) = max |A - Ahat[r]| against each "
           "allowed reference in the window, REUSE if d <= tau, policy picks the reference");
  const int dw = c.data_w, gw = c.group_w, tw = c.token_w(), sw = slot_w(c), tauw = c.tau_w();
  const int word = gw * dw;
  const Expr clk = m.input("clk_i", 1);
  const Expr step = m.input("step_i", 1, Sign::Unsigned, "commit this position: write the window");
  const Expr token = m.input("token_i", tw, Sign::Unsigned, "token being decided");
  const Expr slot = m.input("slot_i", sw, Sign::Unsigned, "window slot of this position (scan position mod WIN_CAP)");
  const Expr ref_avail = m.input("ref_avail_i", 3, Sign::Unsigned, "reference exists in the tile and window: bit 0 t, 1 h, 2 w");
  const Expr ref_slot_next = m.input("ref_slot_next_i", 2 * sw, Sign::Unsigned,
                                     "window slots of the next cycle's t (at 0) and h references, read a cycle ahead");
  const Expr ref_near_next = m.input("ref_near_next_i", 2, Sign::Unsigned,
                                     "the next cycle's t (bit 0), h (bit 1) reference is at distance 1");
  const Expr policy = m.input("policy_i", 2, Sign::Unsigned, "0 fixed, 1 rope-orthogonal, 2 adaptive");
  const Expr naxes = m.input("naxes_i", 2, Sign::Unsigned, "fixed policy: length of the axis list");
  const Expr axes = m.input("axes_i", 6, Sign::Unsigned, "fixed policy: axis list, first at [1:0]");
  const Expr lane_valid = m.input("lane_valid_i", 1, Sign::Unsigned, "this lane has a group in this round");
  const Expr enable = m.input("enable_i", 1, Sign::Unsigned, "reuse enabled for the group");
  const Expr rope = m.input("rope_i", 3, Sign::Unsigned, "RoPE axes of the group");
  const Expr tau = m.input("tau_i", tauw, Sign::Unsigned, "threshold of the group");
  const Expr a = m.input("a_i", word, Sign::Unsigned, "the group's channels of this token");
  const Expr reuse = m.output("reuse_o", 1, Sign::Unsigned, "the pair is REUSE");
  const Expr axis_out = m.output("axis_o", 2, Sign::Unsigned, "chosen reference axis (0 when COMPUTE)");
  const Expr root_out = m.output("root_o", tw, Sign::Unsigned, "token whose partial this pair carries");

  // The window: effective inputs and roots of the last WIN_CAP positions. No memory read is on the
  // lane's loop (decision -> Ahat -> next decision): the t and h entries are read a cycle ahead
  // into registers, which take this cycle's entry instead when the next position's reference is the
  // one decided now (distance 1: not in the window yet); the w reference, always the previous
  // position, is a register of the last committed entry.
  const Expr new_entry = m.signal("new_entry", word + tw, Sign::Unsigned, "{root, Ahat} written for this position");
  const Expr last_q = m.signal("last_entry_q", word + tw, Sign::Unsigned,
                               "{root, Ahat} of the last committed position");
  std::vector<Expr> rd;
  std::vector<Connection> conns = {{"clk_i", clk}, {"we_i", step}, {"waddr_i", slot}, {"wdata_i", new_entry}};
  Block& ahead = m.always_ff_no_reset(clk, "the t and h window entries of the next cycle's position");
  for (int ax = 0; ax < 2; ++ax) {
    const std::string an = kAxis[ax];
    const Expr raw = m.signal("win_" + an + "_rdata", word + tw);
    const Expr held = m.signal("win_" + an + "_q", word + tw, Sign::Unsigned, "window entry of the " + an + " reference");
    conns.push_back({"raddr" + std::to_string(ax) + "_i", ref_slot_next.slice((ax + 1) * sw - 1, ax * sw)});
    conns.push_back({"rdata" + std::to_string(ax) + "_o", raw});
    ahead.assign(held, mux(step && ref_near_next[ax], new_entry, raw));
    rd.push_back(held);
  }
  rd.push_back(m.wire("win_w", last_q, "the w reference's entry: the previous position"));
  m.instance(window_sram, "u_window", conns);
  m.always_ff_no_reset(clk, "the last committed entry").if_(step).then_().assign(last_q, new_entry);

  // d(r) per reference: the largest absolute channel difference, exact in DATA_W+1 bits.
  std::vector<Expr> x;
  for (int j = 0; j < gw; ++j)
    x.push_back(m.wire("x_" + std::to_string(j), as_signed(a.slice((j + 1) * dw - 1, j * dw)), "this token, channel " + std::to_string(j)));
  std::vector<Expr> dist, pass;
  const bool has_fixed = (c.policies & 1u) != 0, has_rope_based = (c.policies & 6u) != 0;
  const Expr fixed = policy == constant(2, 0);
  if (!has_fixed) m.unused(concat({naxes, axes}), "the fixed policy is not built in");
  if (!has_rope_based) m.unused(rope, "no rope-orthogonal or adaptive policy is built in");
  for (int ax = 0; ax < 3; ++ax) {
    const std::string an = kAxis[ax];
    std::vector<Expr> level;  // |x - y| per channel, then the larger of each pair, level by level
    for (int j = 0; j < gw; ++j) {
      const std::string sfx = an + "_" + std::to_string(j);
      const Expr y = m.wire("y_" + sfx, as_signed(rd[static_cast<size_t>(ax)].slice((j + 1) * dw - 1, j * dw)));
      const Expr xe = m.wire("xe_" + sfx, sext(x[static_cast<size_t>(j)], dw + 1));
      const Expr ye = m.wire("ye_" + sfx, sext(y, dw + 1));
      // Both differences at once, the sign of one picking: negating x - y after it settles
      // put a second carry chain on the lane's path.
      const Expr diff = m.wire("diff_" + sfx, xe - ye);
      const Expr diff_neg = m.wire("diff_neg_" + sfx, ye - xe);
      level.push_back(m.wire("mag_" + sfx, as_unsigned(mux(diff.msb(), diff_neg, diff))));
    }
    // A balanced tree of max, ceil(log2 GROUP_W) levels deep: a chain of GROUP_W - 1
    // compares was the detector's critical path.
    for (int depth = 0; level.size() > 1; ++depth) {
      std::vector<Expr> next;
      for (size_t k = 0; k + 1 < level.size(); k += 2) {
        const std::string name = "max_" + an + "_l" + std::to_string(depth) + "_" + std::to_string(k / 2);
        next.push_back(m.wire(name, mux(level[k + 1] > level[k], level[k + 1], level[k])));
      }
      if (level.size() % 2 == 1) next.push_back(level.back());
      level = std::move(next);
    }
    dist.push_back(m.wire("d_" + an, level.front(), "d(r) of the " + an + " reference"));
    // Allowed: the fixed list for the fixed policy, else every axis outside the group's RoPE axes.
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
    pass.push_back(m.wire("pass_" + an, ref_avail[ax] && allowed && enable && lane_valid && (dist.back() <= tau),
                          "the " + an + " reference may be reused"));
  }
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
  m.assign(new_entry, mux(sel_valid, picked, concat({token, a})), "REUSE copies the reference's Ahat and root");
  m.assign(reuse, sel_valid);
  m.assign(axis_out, sel_axis);
  m.assign(root_out, new_entry.slice(word + tw - 1, word));
  return m;
}

Module DetectorBlock::generate(const HwConfig& c, const Module& lane) {
  Module m("kld_detector", "Reuse detector: LANES groups decided per cycle at one scan position");
  const int lanes = c.det_lanes(), gw = c.group_w, dw = c.data_w, tw = c.token_w(), sw = slot_w(c), tauw = c.tau_w();
  const Expr clk = m.input("clk_i", 1);
  const Expr step = m.input("step_i", 1);
  const Expr token = m.input("token_i", tw);
  const Expr slot = m.input("slot_i", sw);
  const Expr ref_avail = m.input("ref_avail_i", 3);
  const Expr ref_slot_next = m.input("ref_slot_next_i", 2 * sw);
  const Expr ref_near_next = m.input("ref_near_next_i", 2);
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
  const Expr root = m.output("root_o", tw * lanes);
  // One lane instance per group decided in a cycle (a generate loop when there are several).
  auto conns = [&](const Expr& l) -> std::vector<Connection> {
    return {{"clk_i", clk},
            {"step_i", step},
            {"token_i", token},
            {"slot_i", slot},
            {"ref_avail_i", ref_avail},
            {"ref_slot_next_i", ref_slot_next},
            {"ref_near_next_i", ref_near_next},
            {"policy_i", policy},
            {"naxes_i", naxes},
            {"axes_i", axes},
            {"lane_valid_i", element(lane_valid, l)},
            {"enable_i", element(enable, l)},
            {"rope_i", element(rope, l, 3)},
            {"tau_i", element(tau, l, tauw)},
            {"a_i", element(a, l, gw * dw)},
            {"reuse_o", element(reuse, l)},
            {"axis_o", element(axis, l, 2)},
            {"root_o", element(root, l, tw)}};
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
