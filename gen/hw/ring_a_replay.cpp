#include <string>
#include <vector>

#include "common/error.hpp"
#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

void RingAReplayBlock::check(const HwConfig& c, int chunk) {
  (void)c;
  if (chunk < 2) throw ConfigError("chunk", std::to_string(chunk), "a chunk holds at least two positions");
}

Module RingAReplayBlock::generate(const HwConfig& c, int chunk, const Module& part_sram) {
  check(c, chunk);
  const int S = c.segs(), gbits = c.group_w * c.data_w, D = fifo_words(chunk), pw = clog2(D);
  const int cw = clog2(D + 1), RM = RingCodesBlock::read_edges(D), R = read_edges(chunk);
  // Passes whose A is all in and not begun: an empty pass has no entries, so the count is held
  // below its width's top rather than by the FIFOs' room.
  const int nw = clog2(D + 2);
  const uint64_t pass_cap = (uint64_t{1} << nw) - 1;
  auto idx = [](int i) { return static_cast<size_t>(i); };
  Module m("kld_ring_a_replay",
           "The A of the window-bounded ring's later m-tiles (docs/hardware.md, \"The ring's A in the later "
           "m-tiles\"): the first m-tile's issue reads its A from kld_ring_a_buffers in an order every m-tile "
           "repeats, so that A, written out in that order, streams back, per pass each segment's groups in its "
           "list's order, into a FIFO per segment of two passes' lists. A pass may begin once all of its A is "
           "in; the issue's reads take each FIFO's head, " +
               std::to_string(R) + " edges from read to data");
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr in_valid = m.input("in_valid_i", 1, Sign::Unsigned, "a beat of the stream is offered");
  const Expr in_ready = m.output("in_ready_o", 1, Sign::Unsigned,
                                 "it is taken at this edge: every FIFO has room, and the passes held are below " +
                                     std::to_string(pass_cap));
  const Expr in_lanes = m.input("in_lanes_i", S, Sign::Unsigned, "segment s's next group is in the beat");
  const Expr in_a = m.input("in_a_i", S * gbits, Sign::Unsigned, "the groups, segment s's at s*GROUP_W*DATA_W");
  const Expr in_pass_last = m.input("in_pass_last_i", 1, Sign::Unsigned,
                                    "the beat ends its pass (an empty pass: a beat with no lane)");
  const Expr pass_ready = m.output("pass_ready_o", 1, Sign::Unsigned, "a pass's A is all in: it may begin");
  const Expr pass_begin = m.input("pass_begin_i", 1, Sign::Unsigned, "a pass begins (taken while pass_ready_o)");
  const Expr rd = m.input("rd_i", S, Sign::Unsigned,
                          "segment s reads its FIFO's head (taken while it holds an entry: a begun pass's)");
  const Expr rd_valid_o = m.output("rd_valid_o", S, Sign::Unsigned,
                                   "segment s's read of " + std::to_string(R) + " edges before is on rd_a_o");
  const Expr rd_a = m.output("rd_a_o", S * gbits, Sign::Unsigned,
                             "its group's A at s*GROUP_W*DATA_W (held while not valid)");

  const Expr passes_q = m.signal("passes_q", nw, Sign::Unsigned, "passes whose A is all in, not yet begun");
  std::vector<Expr> wr_ptr, rd_ptr, count, room, reads;
  for (int s = 0; s < S; ++s) {
    const std::string ss = std::to_string(s);
    wr_ptr.push_back(m.signal("wr_ptr_" + ss + "_q", pw, Sign::Unsigned, s == 0 ? "segment s's FIFO: next write" : ""));
    rd_ptr.push_back(m.signal("rd_ptr_" + ss + "_q", pw, Sign::Unsigned, s == 0 ? "... its head" : ""));
    count.push_back(m.signal("count_" + ss + "_q", cw, Sign::Unsigned, s == 0 ? "... its entries" : ""));
    room.push_back(count.back() != constant(cw, static_cast<uint64_t>(D)));
  }
  Expr all_room = passes_q != constant(nw, pass_cap);
  for (const Expr& r : room) all_room = all_room && r;
  const Expr room_w = m.wire("room", all_room, "every FIFO has room for a beat, and the pass count for a pass");
  m.assign(in_ready, room_w);
  const Expr take = m.wire("take", in_valid && room_w, "a beat is taken at this edge");
  const Expr pass_in = m.wire("pass_in", take && in_pass_last, "a pass's A is all in after this edge");
  const Expr have = m.wire("have_pass", passes_q != zero(nw), "a pass's A is all in");
  m.assign(pass_ready, have);
  const Expr begun = m.wire("begun", pass_begin && have, "a pass begins at this edge");
  Always& flow = m.always_ff(clk, rst_n, "the FIFOs' pointers and counts, the passes held");
  flow.flop(passes_q, passes_q + zext(pass_in, nw) - zext(begun, nw), 0);
  auto next_of = [&](const Expr& p) {
    return mux(p == constant(pw, static_cast<uint64_t>(D - 1)), zero(pw), p + constant(pw, 1));
  };
  std::vector<Expr> fifo_out, read_bits;  // read_bits least significant first
  for (int s = 0; s < S; ++s) {
    const std::string ss = std::to_string(s);
    const Expr write = m.wire("write_" + ss, take && in_lanes[s], s == 0 ? "segment s's group is written" : "");
    const Expr read = m.wire("read_" + ss, rd[s] && count[idx(s)] != zero(cw), s == 0 ? "its head is read" : "");
    read_bits.push_back(read);
    flow.flop(wr_ptr[idx(s)], mux(write, next_of(wr_ptr[idx(s)]), wr_ptr[idx(s)]), 0);
    flow.flop(rd_ptr[idx(s)], mux(read, next_of(rd_ptr[idx(s)]), rd_ptr[idx(s)]), 0);
    flow.flop(count[idx(s)], count[idx(s)] + zext(write, cw) - zext(read, cw), 0);
    fifo_out.push_back(m.signal("fifo_" + ss + "_rdata", gbits));
    RingCodesBlock::word_memory(m, part_sram, D, {"fifo_" + ss, "fifo_" + ss + "_", "segment " + ss + "'s FIFO"}, clk,
                                write, wr_ptr[idx(s)], in_a.slice((s + 1) * gbits - 1, s * gbits), rd_ptr[idx(s)],
                                fifo_out.back());
  }
  const Expr reads_w = m.wire("reads", concat(std::vector<Expr>(read_bits.rbegin(), read_bits.rend())),
                              "the segments whose head is read at this edge");
  RingABuffersBlock::registered_reads(m, clk, rst_n, RM, reads_w, Expr(), fifo_out, gbits, rd_valid_o, rd_a);
  return m;
}

void RingAReplayBlock::add(vlog::Design& d, const HwConfig& c, int chunk) {
  check(c, chunk);
  const int D = fifo_words(chunk), rows = RingCodesBlock::part_rows(D), gbits = c.group_w * c.data_w;
  d.add(generate(c, chunk, SramBlock::add(d, c, rows, gbits, 1, 1, true)));
}

vlog::Design RingAReplayBlock::design(const HwConfig& c, int chunk) {
  check(c, chunk);
  vlog::Design d = empty_design(c, {{"CHUNK", std::to_string(chunk)}});
  add(d, c, chunk);
  d.check();
  return d;
}

}  // namespace kaleido::hw
