#include <string>
#include <vector>

#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

namespace {
constexpr const char* kIssueStateNames[] = {"StIdle", "StWait", "StIssue"};
enum IssueState { kIdle = 0, kWait = 1, kIssue = 2 };
}  // namespace

RingIssueBlock::OuterPorts RingIssueBlock::OuterPorts::declare_pass_side(Module& m, const HwConfig& c) {
  OuterPorts p;
  p.groups = m.input("groups_i", clog2(c.max_groups() + 1), Sign::Unsigned,
                     "G of the run (1..MAX_GROUPS): groups past it issue nothing");
  p.wt_ready = m.input("wt_ready_i", 1, Sign::Unsigned,
                       "the next pass's weights are in their buffer by the end of this cycle");
  p.pass_take = m.output("pass_take_o", 1, Sign::Unsigned,
                         "a pass begins at this edge: the weights wt_ready_i announced are taken");
  return p;
}

void RingIssueBlock::OuterPorts::declare_beat(Module& m, const HwConfig& c, int chunk, int list_w) {
  const int S = c.segs(), ew = RingListsBlock::entry_w(chunk, list_w);
  beat_valid = m.output("beat_valid_o", S, Sign::Unsigned,
                        "segment s issues the position at beat_pos_o[s*ENTRY_W] of group beat_kt_o*SEGS + s");
  beat_pos = m.output("beat_pos_o", S * ew, Sign::Unsigned, "chunk positions issued (where valid)");
  beat_kt = m.output("beat_kt_o", clog2(c.max_kt() + 1), Sign::Unsigned, "the beat's k-tile (its pass)");
  beat_wbuf = m.output("beat_wbuf_o", 1, Sign::Unsigned, "weight buffer of the beat's pass (pass parity)");
  beat_pass_last = m.output("beat_pass_last_o", 1, Sign::Unsigned,
                            "the pass's last beat (an empty pass's only one, with no segment valid)");
  beat_chunk_last = m.output("beat_chunk_last_o", 1, Sign::Unsigned, "the chunk's last beat");
}

Module RingIssueBlock::generate(const HwConfig& c, int chunk, int list_w) {
  check(chunk, list_w);
  const int G = c.max_groups(), S = c.segs(), KT = c.max_kt();
  const int ew = RingListsBlock::entry_w(chunk, list_w), lw = RingListsBlock::len_w(chunk);
  const int ktw = clog2(KT + 1);
  Module m("kld_ring_issue",
           "Issue of the window-bounded ring's pass engine (docs/hardware.md, \"The ring's issue\"): "
           "a built chunk's compute lists issued in lock-step k-tile passes. Pass kt reads entry i of "
           "the lists of groups kt*SEGS + s in cycle i, for as many cycles as its longest list (one "
           "for a pass of empty lists), so segment s issues group kt*SEGS + s's COMPUTE positions "
           "back to back. A pass begins at the edge the one before ends when its weights are ready, "
           "else at the first edge they are; the next chunk is taken at the edge the last pass ends. "
           "A segment's beat comes three edges after its list read");
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  OuterPorts outer = OuterPorts::declare_pass_side(m, c);
  const Expr groups = outer.groups, wt_ready = outer.wt_ready, pass_take = outer.pass_take;
  const Expr chunk_valid = m.input("chunk_valid_i", 1, Sign::Unsigned, "a built chunk's lists wait to be issued");
  const Expr chunk_buf = m.input("chunk_buf_i", 1, Sign::Unsigned, "the list buffer that holds them");
  const Expr chunk_ready = m.output("chunk_ready_o", 1, Sign::Unsigned,
                                    "a chunk is taken at this edge (idle, or the last pass's last read now)");
  const Expr chunk_done = m.output("chunk_done_o", 1, Sign::Unsigned,
                                   "the chunk's last read is at this edge: its list buffer may be built again");
  const Expr len = m.input("len_i", 2 * G * lw, Sign::Unsigned,
                           "length of buffer b's list of group g at (b*G + g)*LEN_W (kld_ring_front's len_o)");
  const Expr rd_buf = m.output("rd_buf_o", 1, Sign::Unsigned, "the list buffer read");
  const Expr rd_index = m.output("rd_index_o", G * ew, Sign::Unsigned, "entry read of group g's list at g*ENTRY_W");
  const Expr rd_entry = m.input("rd_entry_i", G * ew, Sign::Unsigned, "the entries read, a cycle after their index");
  outer.declare_beat(m, c, chunk, list_w);

  std::vector<Expr> st;
  for (int k : {kIdle, kWait, kIssue})
    st.push_back(m.localparam(kIssueStateNames[k], 2, static_cast<uint64_t>(k), k == kIdle ? "issue states" : ""));
  const Expr state_q = m.signal("state_q", 2);
  const Expr buf_q = m.signal("buf_q", 1, Sign::Unsigned, "list buffer of the chunk issued");
  const Expr kt_q = m.signal("kt_q", ktw, Sign::Unsigned, "k-tile of the pass set up or issued");
  const Expr index_q = m.signal("index_q", lw, Sign::Unsigned, "entry read in this cycle of the pass");
  const Expr left_q = m.signal("left_q", lw, Sign::Unsigned, "reads of the pass left, this cycle's included");
  const Expr wbuf_q = m.signal("wbuf_q", 1, Sign::Unsigned, "weight buffer of the pass (the first after reset takes 0)");
  std::vector<Expr> seg_len, next_len;
  for (int s = 0; s < S; ++s) {
    seg_len.push_back(m.signal("seg_len_" + std::to_string(s) + "_q", lw, Sign::Unsigned,
                               s == 0 ? "length of segment s's list in the pass (0 past the run's groups)" : ""));
    next_len.push_back(m.signal("next_len_" + std::to_string(s) + "_q", lw, Sign::Unsigned,
                                s == 0 ? "... in the pass after it, found while this one runs" : ""));
  }
  const Expr st_idle = m.wire("st_idle", state_q == st[kIdle]);
  const Expr st_wait = m.wire("st_wait", state_q == st[kWait]);
  const Expr st_issue = m.wire("st_issue", state_q == st[kIssue]);

  // The pass's reads: every segment reads entry index_q and holds a position while the index is
  // inside its list. The pass's reads (its longest list, at least one) are counted down, so its
  // end is one compare of a register; the pass after it has its lengths registered while this
  // one runs, so setting it up takes their maximum, not a select over the k-tiles.
  std::vector<Expr> seg_valid;
  for (int s = S - 1; s >= 0; --s) seg_valid.push_back(index_q < seg_len[static_cast<size_t>(s)]);
  const Expr read_valid = m.wire("read_valid", concat(seg_valid), "segment s reads an entry of its list");
  const Expr pass_last = m.wire("pass_last", st_issue && left_q == constant(lw, 1), "the pass's last read");
  // The last k-tile holds the run's last group: groups_i <= (kt + 1) * SEGS.
  std::vector<Expr> last_of;
  for (int kt = 0; kt < KT; ++kt)
    last_of.push_back((kt + 1) * S >= G ? bit(true) : groups <= static_cast<int64_t>((kt + 1) * S));
  const Expr kt_last = m.wire("kt_last", select(kt_q, last_of, bit(true)), "the pass is the chunk's last");
  const Expr chunk_last = m.wire("chunk_last", pass_last && kt_last, "the chunk's last read");
  m.assign(chunk_ready, st_idle || chunk_last);
  m.assign(chunk_done, chunk_last);
  const Expr take = m.wire("take", chunk_valid && chunk_ready, "a chunk is taken at this edge");
  const Expr setup = m.wire("setup", take || (pass_last && !kt_last), "a pass is set up at this edge");
  const Expr pass_begin = m.wire("pass_begin", (setup || st_wait) && wt_ready, "the pass set up begins at this edge");
  m.assign(pass_take, pass_begin);

  // A pass's lengths: its k-tile's groups in a buffer, 0 past the run's groups; its reads.
  auto len_of = [&](int b, int g) { return len.slice((b * G + g) * lw + lw - 1, (b * G + g) * lw); };
  auto group_len = [&](int g, const Expr& buf) {
    return g < G ? mux(groups > static_cast<int64_t>(g), mux(buf, len_of(1, g), len_of(0, g)), zero(lw)) : zero(lw);
  };
  auto lens_at = [&](int kt, const Expr& buf) {
    std::vector<Expr> out;
    for (int s = 0; s < S; ++s) out.push_back(group_len(kt * S + s, buf));
    return out;
  };
  auto lens_of = [&](const Expr& kt, const Expr& buf) {
    std::vector<Expr> out;
    for (int s = 0; s < S; ++s) {
      std::vector<Expr> by_kt;
      for (int k = 0; k < KT; ++k) by_kt.push_back(group_len(k * S + s, buf));
      out.push_back(select(kt, by_kt, zero(lw)));
    }
    return out;
  };
  auto reads_of = [&](const std::vector<Expr>& lens) {
    Expr most = constant(lw, 1);
    for (const Expr& l : lens) most = mux(most < l, l, most);
    return most;
  };
  // Taken: the chunk's passes 0 and 1. Set up inside the chunk: the registered pass, and kt + 2.
  const std::vector<Expr> first = lens_at(0, chunk_buf), second = lens_at(1, chunk_buf);
  const Expr kt_after = m.wire("kt_after", zext(kt_q, ktw + 1) + constant(ktw + 1, 2), "the k-tile two after the pass");
  const std::vector<Expr> after = lens_of(kt_after, buf_q);
  std::vector<Expr> first_w, second_w, after_w;
  for (int s = 0; s < S; ++s) {
    const std::string n = std::to_string(s);
    first_w.push_back(m.wire("first_len_" + n, first[static_cast<size_t>(s)],
                             s == 0 ? "segment s's length in a taken chunk's first pass" : ""));
    second_w.push_back(m.wire("second_len_" + n, second[static_cast<size_t>(s)], s == 0 ? "... its second" : ""));
    after_w.push_back(m.wire("after_len_" + n, after[static_cast<size_t>(s)],
                             s == 0 ? "... in the pass two after the one issued" : ""));
  }

  // A pass set up (or waited for) issues once its weights are ready; a chunk's last read with no
  // chunk to take goes idle.
  const Expr state_d =
      m.wire("state_d", mux(setup || st_wait, mux(wt_ready, st[kIssue], st[kWait]), mux(chunk_last, st[kIdle], state_q)),
             "the next state");
  Always& ctl = m.always_ff(clk, rst_n, "pass control: set up, wait for weights, read the lists");
  ctl.flop(state_q, state_d, 0);
  ctl.flop(buf_q, mux(take, chunk_buf, buf_q), 0);
  ctl.flop(kt_q, mux(take, zero(ktw), mux(setup, kt_q + constant(ktw, 1), kt_q)), 0);
  ctl.flop(index_q, mux(st_issue && !pass_last, index_q + constant(lw, 1), zero(lw)), 0);
  const Expr left_next = mux(setup, reads_of(next_len), mux(st_issue, left_q - constant(lw, 1), left_q));
  ctl.flop(left_q, mux(take, reads_of(first_w), left_next), 0);
  ctl.flop(wbuf_q, mux(pass_begin, !wbuf_q, wbuf_q), 1);
  for (size_t s = 0; s < static_cast<size_t>(S); ++s) {
    ctl.flop(seg_len[s], mux(take, first_w[s], mux(setup, next_len[s], seg_len[s])), 0);
    ctl.flop(next_len[s], mux(take, second_w[s], mux(setup, after_w[s], next_len[s])), 0);
  }
  m.assign(rd_buf, buf_q);
  m.assign(rd_index, repl(G, trunc(index_q, ew)));

  // The read's place travels beside it while the list memory reads (stage r) and while its
  // entries, out of the memory's bank select, are registered (stage e); then each segment's entry
  // is taken from its pass's group into the beat registers by an AND-OR on the k-tile, one-hot
  // and registered with the read: no list memory's read shares a path with that select.
  struct Side {
    Expr valid, kt, pick, wbuf, pass_last, chunk_last;
  };
  auto side = [&](const std::string& st_name, const std::string& what) {
    return Side{m.signal(st_name + "_valid_q", S, Sign::Unsigned, what),
                m.signal(st_name + "_kt_q", ktw),
                m.signal(st_name + "_pick_q", KT, Sign::Unsigned, "... its k-tile, one-hot"),
                m.signal(st_name + "_wbuf_q", 1),
                m.signal(st_name + "_pass_last_q", 1),
                m.signal(st_name + "_chunk_last_q", 1)};
  };
  const Side r = side("r", "segments that read an entry an edge ago");
  const Side e = side("e", "... two edges ago (their entries in e_entry_q)");
  const Expr e_entry = m.signal("e_entry_q", G * ew, Sign::Unsigned, "the entries read, registered");
  const Expr valid_q = m.signal("beat_valid_q", S);
  const Expr pos_q = m.signal("beat_pos_q", S * ew);
  const Expr kt_b = m.signal("beat_kt_q", ktw);
  const Expr wbuf_b = m.signal("beat_wbuf_q", 1);
  const Expr pass_last_b = m.signal("beat_pass_last_q", 1);
  const Expr chunk_last_b = m.signal("beat_chunk_last_q", 1);
  auto entry_of = [&](int g) { return e_entry.slice(g * ew + ew - 1, g * ew); };
  std::vector<Expr> pos_parts, pick_bits;
  for (int s = S - 1; s >= 0; --s) {
    Expr taken = zero(ew);
    for (int kt = 0; kt < KT; ++kt)
      if (kt * S + s < G) taken = taken | (entry_of(kt * S + s) & repl(ew, e.pick[kt]));
    pos_parts.push_back(taken);
  }
  for (int kt = KT - 1; kt >= 0; --kt) pick_bits.push_back(kt_q == static_cast<int64_t>(kt));
  Always& beat = m.always_ff(clk, rst_n, "the beat: a read's place, its entries, then its positions");
  auto load = [&](const Side& to, const Side& from) {
    beat.flop(to.valid, from.valid, 0);
    beat.flop(to.kt, from.kt, 0);
    beat.flop(to.pick, from.pick, 0);
    beat.flop(to.wbuf, from.wbuf, 0);
    beat.flop(to.pass_last, from.pass_last, 0);
    beat.flop(to.chunk_last, from.chunk_last, 0);
  };
  load(r, Side{mux(st_issue, read_valid, zero(S)), kt_q, concat(pick_bits), wbuf_q, pass_last, chunk_last});
  load(e, r);
  beat.flop(e_entry, rd_entry, 0);
  beat.flop(valid_q, e.valid, 0);
  beat.flop(pos_q, concat(pos_parts), 0);
  beat.flop(kt_b, e.kt, 0);
  beat.flop(wbuf_b, e.wbuf, 0);
  beat.flop(pass_last_b, e.pass_last, 0);
  beat.flop(chunk_last_b, e.chunk_last, 0);
  m.assign(outer.beat_valid, valid_q);
  m.assign(outer.beat_pos, pos_q);
  m.assign(outer.beat_kt, kt_b);
  m.assign(outer.beat_wbuf, wbuf_b);
  m.assign(outer.beat_pass_last, pass_last_b);
  m.assign(outer.beat_chunk_last, chunk_last_b);
  return m;
}

vlog::Design RingIssueBlock::design(const HwConfig& c, int chunk, int list_w) {
  check(chunk, list_w);
  vlog::Design d = empty_design(c, {{"CHUNK", std::to_string(chunk)}, {"LIST_W", std::to_string(list_w)}});
  d.add(generate(c, chunk, list_w));
  d.check();
  return d;
}

}  // namespace kaleido::hw
