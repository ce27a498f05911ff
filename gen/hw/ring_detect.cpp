#include "common/error.hpp"
#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

void RingDetectBlock::check(const HwConfig& c, int words, int chunk, int list_w) {
  RingCodesBlock::check(words, list_w);
  RingListsBlock::check(chunk, list_w);
  const int G = c.max_groups(), L = c.det_lanes();
  if (L * c.lane_groups < G)
    throw ConfigError("lanes", std::to_string(L),
                      "the ring's detector decides every group of a position before the next (a code word is "
                      "written whole): LANES x LANE_GROUPS must reach G = MAX_K / GROUP_W = " +
                          std::to_string(G) + " (LANE_GROUPS is " + std::to_string(c.lane_groups) +
                          "; --lanes, --lane-groups)");
}

RingDetectBlock::DetectPorts RingDetectBlock::DetectPorts::declare(Module& m, const HwConfig& c) {
  const int G = c.max_groups(), L = c.det_lanes(), tauw = c.tau_w();
  DetectPorts p;
  p.win = m.input("win_i", clog2(c.window_cap() + 1), Sign::Unsigned,
                  "the reference window in scan positions, 1..WIN_CAP");
  p.policy = m.input("policy_i", 2, Sign::Unsigned, "0 fixed, 1 rope-orthogonal, 2 adaptive");
  p.naxes = m.input("naxes_i", 2, Sign::Unsigned, "fixed policy: length of the axis list");
  p.axes = m.input("axes_i", 6, Sign::Unsigned, "fixed policy: axis list, first at [1:0]");
  p.enable = m.input("enable_i", G, Sign::Unsigned, "reuse enabled for group g");
  p.rope = m.input("rope_i", 3 * G, Sign::Unsigned, "RoPE axes of group g at 3g");
  p.tau = m.input("tau_i", tauw * G, Sign::Unsigned, "threshold of group g at g*TAU_W");
  p.a_valid = m.input("a_valid_i", 1, Sign::Unsigned, "an A beat is offered");
  p.a_ready = m.output("a_ready_o", 1, Sign::Unsigned, "it is taken at this edge");
  p.a = m.input("a_i", L * c.group_w * c.data_w, Sign::Unsigned,
                c.lane_groups == 2 ? "a position's groups p*LANES + l (beat p of 2) at l*GROUP_W*DATA_W, in scan order"
                                   : "a position's group l at l*GROUP_W*DATA_W, in scan order");
  return p;
}

Module RingDetectBlock::generate(const HwConfig& c, int words, int chunk, int list_w, const Module& detector) {
  check(c, words, chunk, list_w);
  const int G = c.max_groups(), L = c.det_lanes(), gw = c.group_w, dw = c.data_w, tauw = c.tau_w();
  const int gb = clog2(G), gcw = clog2(G + 1), lb = RingListsBlock::lane_bits(list_w), cw = ScanBlock::coord_w(c);
  const int rw = clog2(words), xw = clog2(words + 1), nb = clog2(chunk);
  const bool paired = c.lane_groups == 2;
  Module m("kld_ring_detect",
           "Detector of the window-bounded ring (docs/hardware.md, \"The ring's detector\"): the run's scan "
           "positions, tile by tile, each with its A streamed in (LANE_GROUPS beats of LANES groups), decided "
           "by kld_ring_detector (kld_detector's lanes without roots), every group of a position before the "
           "next, and the decisions handed to the code memory as words of LIST_W positions: a chunk (at most "
           "CHUNK positions, never across a tile) starts a word, and a word's row follows the last");
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr start = m.input("start_i", 1, Sign::Unsigned, "a run begins (taken while not busy_o)");
  const Expr busy = m.output("busy_o", 1, Sign::Unsigned, "positions are left to decide, or decisions to hand on");
  const Expr grid_t = m.input("grid_t_i", clog2(c.max_t + 1), Sign::Unsigned, "frames of the run (held through it)");
  const Expr grid_h = m.input("grid_h_i", clog2(c.max_h + 1), Sign::Unsigned, "rows of a frame");
  const Expr grid_w = m.input("grid_w_i", clog2(c.max_w + 1), Sign::Unsigned, "columns of a frame");
  const Expr tile_h = m.input("tile_h_i", clog2(c.max_h + 1), Sign::Unsigned, "rows of a scan tile (0: the frame)");
  const Expr tile_w = m.input("tile_w_i", clog2(c.max_w + 1), Sign::Unsigned,
                              "columns of a scan tile (0: the frame)");
  const Expr groups = m.input("groups_i", gcw, Sign::Unsigned, "G of the run, 1..MAX_K / GROUP_W");
  const DetectPorts in = DetectPorts::declare(m, c);
  const Expr policy = in.policy, naxes = in.naxes, axes = in.axes, enable = in.enable;
  const Expr rope = in.rope, tau = in.tau, a_valid = in.a_valid, a_ready = in.a_ready, a = in.a;
  const RingCodesBlock::DecisionPorts dec = RingCodesBlock::decision_ports(m, c, words, list_w, true);
  const Expr written = m.output("codes_written_o", xw, Sign::Unsigned,
                                "code words of the run handed on (rows 0 up; each is written at the edge its "
                                "commit is out)");
  const Expr codes_error = m.output("codes_error_o", 1, Sign::Unsigned,
                                    "the run has more code words than CODE_WORDS: the later ones are not handed "
                                    "on (kld_top's registers keep such runs out; the next start clears it)");
  const Expr beat_valid = m.output("a_beat_valid_o", 1, Sign::Unsigned,
                                   "the A beat taken at the edge before is presented (on a_beat_o): the A "
                                   "buffers write it");
  const Expr beat_a = m.output("a_beat_o", L * gw * dw, Sign::Unsigned, "the presented beat, as a_i took it");
  const Expr beat_last = m.output("a_beat_chunk_last_o", 1, Sign::Unsigned,
                                  "the presented beat is its chunk's last (its position's last beat)");

  // The run's grid, scan tile (0: the frame) and window, taken at its start: the scan's tile
  // arithmetic then starts at flip-flops rather than at the ports. The scan restarts a cycle later,
  // when they hold the run's, and no beat is taken in the start's own cycle.
  const int ww = clog2(c.window_cap() + 1);
  const Expr dim_t = m.signal("dim_t_q", cw, Sign::Unsigned, "the run's frames");
  const Expr dim_h = m.signal("dim_h_q", cw, Sign::Unsigned, "... rows of a frame");
  const Expr dim_w = m.signal("dim_w_q", cw, Sign::Unsigned, "... columns of a frame");
  const Expr tile_hc = m.signal("tile_h_q", cw, Sign::Unsigned, "... rows of a scan tile (the frame's for 0)");
  const Expr tile_wc = m.signal("tile_w_q", cw, Sign::Unsigned, "... columns of a scan tile (the frame's for 0)");
  const Expr win_q = m.signal("win_q", ww, Sign::Unsigned, "... reference window");
  const Expr clear_q = m.signal("scan_clear_q", 1, Sign::Unsigned, "the run started last cycle: the scan restarts");

  // The detection engine, as kld_top's: a position steps into the lanes' second stage a cycle after
  // its A beat is taken (step_next, registered in every lane), and is decided when the stages next
  // move on (retire), which is when the next beat steps in or, after the run's last, at once. The
  // stages wait together for a beat: a decision is never taken from a stage the next position has
  // entered.
  const Expr busy_q = m.signal("scan_busy_q", 1, Sign::Unsigned, "positions of the run are left to step in");
  const Expr step = m.signal("step_q", 1, Sign::Unsigned, "the presented position steps into the second stage");
  const Expr retire = m.signal("retire_q", 1, Sign::Unsigned, "the second stage's position is decided");
  const Expr adv_q = m.signal("advance_q", 1, Sign::Unsigned, "the stages move on");
  const Expr s2_valid = m.signal("s2_valid_q", 1, Sign::Unsigned, "the second stage holds a position");
  const Expr phase_q = paired ? m.signal("phase_q", 1, Sign::Unsigned, "the presented beat's groups: 0 or LANES up")
                              : Expr();
  const Expr commit_q = m.signal("dec_commit_q", 1, Sign::Unsigned, "dec_commit_o");
  const Expr engaged = m.wire("engaged", busy_q || s2_valid || commit_q, "busy_o");
  m.assign(busy, engaged);
  const Expr run_start = m.wire("run_start", start && !engaged, "start_i, taken");
  const Expr scan_last = m.signal("scan_last", 1), tile_last = m.signal("scan_tile_last", 1);
  const Expr moves = m.wire("scan_moves", paired ? step && phase_q : step,
                            "the presented position's last beat steps in: the scan moves on");
  const Expr busy_run =
      m.wire("scan_busy_run", busy_q && !(moves && scan_last), "positions of the run are left to take, past its start");
  const Expr busy_d = m.wire("scan_busy_d", mux(run_start, bit(true), busy_run));
  m.assign(a_ready, busy_run);
  const Expr a_take = m.wire("a_take", a_valid && busy_run, "a beat is taken: it steps in next cycle");
  const Expr advance_next = m.wire("advance_d", a_take || !busy_d, "the stages move on next cycle");
  const Expr s2_valid_d = m.wire("s2_valid_d", mux(adv_q, step, s2_valid));
  const Expr phase_d = paired ? m.wire("phase_d", phase_q != step, "the next cycle's beat's groups") : Expr();
  Always& eng = m.always_ff(clk, rst_n, "detection engine: a beat a cycle while A flows");
  eng.flop(busy_q, busy_d, 0);
  eng.flop(step, a_take, 0);
  eng.flop(retire, s2_valid_d && advance_next, 0);
  eng.flop(adv_q, advance_next, 0);
  eng.flop(s2_valid, s2_valid_d, 0);
  // A run ends with a step from group 1, so it starts at phase 0.
  if (paired) eng.flop(phase_q, phase_d, 0);
  eng.flop(clear_q, run_start, 0);
  Always& run_regs = m.always_ff(clk, rst_n, "the run's grid, scan tile and window, taken at its start");
  const Expr grid_hc = resize(grid_h, cw), grid_wc = resize(grid_w, cw);
  for (const auto& [reg, d] :
       {std::pair{dim_t, resize(grid_t, cw)}, {dim_h, grid_hc}, {dim_w, grid_wc},
        {tile_hc, mux(tile_h == zero(tile_h.width()), grid_hc, resize(tile_h, cw))},
        {tile_wc, mux(tile_w == zero(tile_w.width()), grid_wc, resize(tile_w, cw))}, {win_q, in.win}})
    run_regs.flop(reg, mux(run_start, d, reg), 0);
  const Expr lane_a = m.signal("lane_a_q", L * gw * dw, Sign::Unsigned, "the presented beat's A");
  m.always_ff_no_reset(clk, "the beat taken, presented next cycle").if_(a_take).then_().assign(lane_a, a);

  // The scan (kld_dispatcher's): the position presented, its window slot and references.
  const Expr scan_step_next = m.wire("scan_step_next", paired ? a_take && phase_d : a_take,
                                     "next cycle's step moves the scan on");
  const ScanBlock::Outputs sc =
      ScanBlock::emit(m, c, {clk, rst_n, dim_t, dim_h, dim_w, tile_hc, tile_wc, win_q, clear_q, scan_step_next,
                             /*tokens=*/false});
  m.assign(scan_last, sc.last);
  m.assign(tile_last, sc.tile_last);

  // Where the presented position's codes go: a chunk starts a word, a word ends at lane LIST_W - 1
  // or with its chunk, and the next word takes the next row.
  const Expr cnt_q = m.signal("chunk_pos_q", nb, Sign::Unsigned, "the position's place in its chunk");
  const Expr lane_q = lb > 0 ? m.signal("word_lane_q", lb, Sign::Unsigned, "its lane in its word") : Expr();
  const Expr row_q = m.signal("word_row_q", xw, Sign::Unsigned, "its word's row (CODE_WORDS: past the memory)");
  const Expr chunk_end = m.wire("chunk_end", cnt_q == constant(nb, static_cast<uint64_t>(chunk - 1)) || tile_last,
                                "the position ends its chunk");
  const Expr word_end =
      m.wire("word_end", lb > 0 ? chunk_end || lane_q == ones(lb) : bit(true), "the position ends its word");
  const Expr past = m.wire("past_memory", row_q == constant(xw, static_cast<uint64_t>(words)),
                           "the position's word is past the code memory");
  Always& addr = m.always_ff(clk, rst_n, "the presented position's word");
  addr.flop(cnt_q, mux(run_start, zero(nb), mux(moves, mux(chunk_end, zero(nb), cnt_q + constant(nb, 1)), cnt_q)), 0);
  if (lb > 0)
    addr.flop(lane_q,
              mux(run_start, zero(lb), mux(moves, mux(chunk_end, zero(lb), lane_q + constant(lb, 1)), lane_q)), 0);
  addr.flop(row_q, mux(run_start, zero(xw), mux(moves && word_end && !past, row_q + constant(xw, 1), row_q)), 0);
  m.assign(beat_valid, step);
  m.assign(beat_a, lane_a);
  m.assign(beat_last, paired ? chunk_end && phase_q : chunk_end);

  // The presented beat's lanes: lane l decides group phase * LANES + l.
  auto group_of = [&](int l, int p) { return p * L + l; };
  std::vector<Expr> lane_valid, lane_en, lane_rope, lane_tau;
  for (int l = L - 1; l >= 0; --l) {
    std::vector<Expr> v, en, rp, t;  // by phase
    for (int p = 0; p < c.lane_groups; ++p) {
      const int g = group_of(l, p);
      const bool has = g < G;
      v.push_back(has ? constant(gcw, static_cast<uint64_t>(g)) < groups : bit(false));
      en.push_back(has ? enable[g] : bit(false));
      rp.push_back(has ? rope.slice(3 * g + 2, 3 * g) : zero(3));
      t.push_back(has ? tau.slice((g + 1) * tauw - 1, g * tauw) : zero(tauw));
    }
    lane_valid.push_back(paired ? mux(phase_q, v[1], v[0]) : v[0]);
    lane_en.push_back(paired ? mux(phase_q, en[1], en[0]) : en[0]);
    lane_rope.push_back(paired ? mux(phase_q, rp[1], rp[0]) : rp[0]);
    lane_tau.push_back(paired ? mux(phase_q, t[1], t[0]) : t[0]);
  }
  const Expr lanes_valid = m.wire("lane_valid", concat(lane_valid), "lane l has a group in the presented beat");

  // The second stage's position: its lanes and where its codes go.
  const Expr s2_lanes = m.signal("s2_lane_valid_q", L, Sign::Unsigned, "the second stage's lanes with a group");
  const Expr s2_phase = paired ? m.signal("s2_phase_q", 1, Sign::Unsigned, "... its beat") : Expr();
  const Expr s2_lane = lb > 0 ? m.signal("s2_word_lane_q", lb, Sign::Unsigned, "... its lane in the word") : Expr();
  const Expr s2_row = m.signal("s2_word_row_q", rw, Sign::Unsigned, "... the word's row");
  const Expr s2_commit = m.signal("s2_commit_q", 1, Sign::Unsigned, "... it is the word's last beat");
  const Expr s2_past = m.signal("s2_past_q", 1, Sign::Unsigned, "... its word is past the code memory");
  Block& s2 = m.always_ff_no_reset(clk, "the position in the lanes' second stage").if_(step).then_();
  s2.assign(s2_lanes, lanes_valid);
  if (paired) s2.assign(s2_phase, phase_q);
  if (lb > 0) s2.assign(s2_lane, lane_q);
  s2.assign(s2_row, resize(row_q, rw));
  s2.assign(s2_commit, paired ? word_end && phase_q : word_end);
  s2.assign(s2_past, past);

  const Expr reuse = m.signal("det_reuse", L), axis = m.signal("det_axis", 2 * L);
  DetectorBlock::Instance det;
  det.clk = clk;
  det.rst_n = rst_n;
  det.step_next = a_take;
  det.retire_next = s2_valid_d && advance_next;
  det.scan = sc;
  det.policy = policy;
  det.naxes = naxes;
  det.axes = axes;
  det.lane_valid = lanes_valid;
  det.enable = m.wire("lane_enable", concat(lane_en));
  det.rope = m.wire("lane_rope", concat(lane_rope));
  det.tau = m.wire("lane_tau", concat(lane_tau));
  det.a = lane_a;
  det.reuse = reuse;
  det.axis = axis;
  det.variant = DetectorBlock::Variant::kRing;
  m.instance(detector, "u_detector", det.connect(c), "LANES groups of the presented position a cycle");
  if (paired) m.unused(sc.ref_two_next, "lanes deciding two groups find distance-2 references in the window");

  // The decisions out, registered: lane l's group, code and word.
  const Expr valid_q = m.signal("dec_valid_q", L, Sign::Unsigned, "dec_valid_o");
  const Expr errors_q = m.signal("codes_error_q", 1, Sign::Unsigned, "codes_error_o");
  const Expr written_q = m.signal("codes_written_q", xw, Sign::Unsigned, "codes_written_o");
  const Expr out = m.wire("dec_out", retire && !s2_past, "the decided position's codes go to the memory");
  Always& outs = m.always_ff(clk, rst_n, "the decisions handed on, and the words written");
  outs.flop(valid_q, mux(out, s2_lanes, zero(L)), 0);
  outs.flop(commit_q, out && s2_commit, 0);
  outs.flop(written_q, mux(run_start, zero(xw), mux(commit_q, written_q + constant(xw, 1), written_q)), 0);
  outs.flop(errors_q, !run_start && (errors_q || (retire && s2_past)), 0);
  const Expr group_q = m.signal("dec_group_q", L * gb, Sign::Unsigned, "dec_group_o");
  const Expr reuse_q = m.signal("dec_reuse_q", L, Sign::Unsigned, "dec_reuse_o");
  const Expr axis_q = m.signal("dec_axis_q", 2 * L, Sign::Unsigned, "dec_axis_o");
  const Expr lane_out = m.signal("dec_lane_q", lb > 0 ? lb : 1, Sign::Unsigned, "dec_lane_o");
  const Expr row_out = m.signal("dec_row_q", rw, Sign::Unsigned, "dec_row_o");
  std::vector<Expr> group_bits;
  for (int l = L - 1; l >= 0; --l) {
    const Expr g0 = constant(gb, static_cast<uint64_t>(group_of(l, 0)));
    group_bits.push_back(paired && group_of(l, 1) < G
                             ? mux(s2_phase, constant(gb, static_cast<uint64_t>(group_of(l, 1))), g0)
                             : g0);
  }
  Block& data = m.always_ff_no_reset(clk, "the decided position's codes and word (qualified by dec_valid_q)")
                    .if_(retire)
                    .then_();
  data.assign(group_q, concat(group_bits));
  data.assign(reuse_q, reuse);
  data.assign(axis_q, axis);
  data.assign(lane_out, lb > 0 ? s2_lane : zero(1));
  data.assign(row_out, s2_row);
  m.assign(dec.valid, valid_q);
  m.assign(dec.group, group_q);
  m.assign(dec.reuse, reuse_q);
  m.assign(dec.axis, axis_q);
  m.assign(dec.lane, lane_out);
  m.assign(dec.row, row_out);
  m.assign(dec.commit, commit_q);
  m.assign(written, written_q);
  m.assign(codes_error, errors_q);
  return m;
}

void RingDetectBlock::add(vlog::Design& d, const HwConfig& c, int words, int chunk, int list_w) {
  check(c, words, chunk, list_w);
  const DetectorBlock::Variant ring = DetectorBlock::Variant::kRing;
  const int depth = DetectorBlock::window_depth(c), width = DetectorBlock::entry_w(c, ring);
  const vlog::Module& lane = d.add(DetectorBlock::generate_lane(c, SramBlock::add(d, c, depth, width, 2), ring));
  const vlog::Module& detector = d.add(DetectorBlock::generate(c, lane, ring));
  d.add(generate(c, words, chunk, list_w, detector));
}

vlog::Design RingDetectBlock::design(const HwConfig& c, int words, int chunk, int list_w) {
  check(c, words, chunk, list_w);
  vlog::Design d = empty_design(c, RingFrontBlock::plan_params(words, chunk, list_w));
  add(d, c, words, chunk, list_w);
  d.check();
  return d;
}

}  // namespace kaleido::hw
