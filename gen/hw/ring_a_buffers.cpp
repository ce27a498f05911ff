#include <string>
#include <vector>

#include "common/error.hpp"
#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

void RingABuffersBlock::check(const HwConfig& c, int chunk) {
  const int L = c.det_lanes(), S = c.segs(), G = c.max_groups();
  if (chunk < 2) throw ConfigError("chunk", std::to_string(chunk), "a chunk holds at least two positions");
  if (c.lane_groups != 1 && c.lane_groups != 2)
    throw ConfigError("lane-groups", std::to_string(c.lane_groups), "1 or 2: the beats of a position");
  if (L * c.lane_groups < G)
    throw ConfigError("lanes", std::to_string(L),
                      "LANES x LANE_GROUPS (" + std::to_string(L * c.lane_groups) + ") must reach the " +
                          std::to_string(G) + " groups: a position's A streams in LANE_GROUPS beats of LANES groups");
  if (L % S != 0 || ((L / S) & (L / S - 1)) != 0)
    throw ConfigError("lanes", std::to_string(L),
                      "a multiple of SEGS (" + std::to_string(S) +
                          ") by a power of two: a beat writes LANES / SEGS groups to each segment's bank, and a read "
                          "picks one by the k-tile's low bits");
}

Module RingABuffersBlock::generate(const HwConfig& c, int chunk, const Module& part_sram) {
  check(c, chunk);
  const int L = c.det_lanes(), LG = c.lane_groups, S = c.segs(), WG = word_groups(c);
  const int gbits = c.group_w * c.data_w, ww = WG * gbits;
  const int jb = RingListsBlock::lane_bits(WG), pb = LG == 2 ? 1 : 0;  // a k-tile is {beat, group of the word}
  const int words = bank_words(c, chunk), rw = clog2(2 * chunk), pw = clog2(chunk);
  const int ktw = clog2(c.max_kt() + 1), RM = RingCodesBlock::read_edges(words), R = read_edges(c, chunk);
  const bool pow2 = (chunk & (chunk - 1)) == 0;
  Module m("kld_ring_a_buffers",
           "A chunk buffers of the window-bounded ring (docs/hardware.md, \"The ring's A chunk buffers\"): "
           "the A of two chunks, the one the issue reads and the next. They are written from A's stream as "
           "it is taken, LANE_GROUPS beats a position (beat p, lane l: group p*LANES + l), and read by the "
           "issue's beats (segment s: its position, group k-tile*SEGS + s), " +
               std::to_string(R) +
               " edges from address to data. A chunk is read once all of it is written; the stream waits "
               "while both buffers are held, and the reader frees the older. One memory (bank) per segment, "
               "a word holding the LANES / SEGS groups of a beat that are the segment's");
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr wr_valid = m.input("wr_valid_i", 1, Sign::Unsigned, "an A beat is offered");
  const Expr wr_ready = m.output("wr_ready_o", 1, Sign::Unsigned, "it is taken at this edge: a buffer is free");
  const Expr wr_a = m.input("wr_a_i", L * gbits, Sign::Unsigned,
                            "the beat: lane l's group (p*LANES + l at beat p) at l*GROUP_W*DATA_W");
  const Expr wr_last = m.input("wr_chunk_last_i", 1, Sign::Unsigned,
                               "the beat's position is its chunk's last (read at the position's last beat)");
  const Expr free = m.input("free_i", 1, Sign::Unsigned,
                            "the reader is done with the older chunk held: its buffer is free after this edge "
                            "(taken only while chunks_o is not 0)");
  const Expr chunks = m.output("chunks_o", 2, Sign::Unsigned,
                               "chunks held whole, 0 to 2: the older is the one read (a reader waits for 1)");
  const Expr rd_valid = m.input("rd_valid_i", S, Sign::Unsigned, "segment s reads");
  const Expr rd_pos = m.input("rd_pos_i", S * pw, Sign::Unsigned, "the positions read, in the older chunk held");
  const Expr rd_kt = m.input("rd_kt_i", ktw, Sign::Unsigned, "the reads' k-tile: segment s reads group kt*SEGS + s");
  const Expr rd_valid_o = m.output("rd_valid_o", S, Sign::Unsigned,
                                   "segment s's read of " + std::to_string(R) + " edges before is on rd_a_o");
  const Expr rd_a = m.output("rd_a_o", S * gbits, Sign::Unsigned,
                             "its group's A at s*GROUP_W*DATA_W (held while not valid)");

  // The stream's side: the row written (buffer 0 rows 0..C-1, buffer 1 rows C..2C-1) and the beat.
  const Expr count_q = m.signal("count_q", 2, Sign::Unsigned, "chunks held whole");
  const Expr fill_q = m.signal("fill_q", 1, Sign::Unsigned, "the buffer being written");
  const Expr read_q = m.signal("read_q", 1, Sign::Unsigned, "the buffer read: the older chunk held");
  const Expr row_q = m.signal("wr_row_q", rw, Sign::Unsigned, "the position written: its row, the buffer's C rows");
  const Expr beat_q = pb > 0 ? m.signal("wr_beat_q", 1, Sign::Unsigned, "the beat of the position written") : Expr();
  const Expr room = m.wire("room", count_q != constant(2, 2), "a buffer is free: both are not held");
  m.assign(wr_ready, room);
  m.assign(chunks, count_q);
  const Expr take = m.wire("take", wr_valid && room, "a beat is written at this edge");
  const Expr pos_end = pb > 0 ? take && beat_q : take;
  const Expr pos_done = m.wire("pos_done", pos_end, "the position's last beat is written");
  const Expr filled = m.wire("filled", pos_done && wr_last, "the chunk's last beat: it is held whole after this edge");
  const Expr freed = m.wire("freed", free && count_q != zero(2), "the older chunk's buffer is freed at this edge");
  Always& flow = m.always_ff(clk, rst_n, "the stream's row and the buffers held");
  const Expr next_base = mux(fill_q, zero(rw), constant(rw, static_cast<uint64_t>(chunk)));
  flow.flop(row_q, mux(filled, next_base, mux(pos_done, row_q + constant(rw, 1), row_q)), 0);
  if (pb > 0) flow.flop(beat_q, beat_q ^ take, 0);
  flow.flop(fill_q, fill_q ^ filled, 0);
  flow.flop(read_q, read_q ^ freed, 0);
  flow.flop(count_q, count_q + zext(filled, 2) - zext(freed, 2), 0);

  // The reads: the k-tile is {beat, group of the word}, every segment's row the same buffer's.
  const int kb = jb + pb;
  Expr kt = rd_kt;
  if (kb == 0) {
    m.unused(rd_kt, "one k-tile: every segment's group is its beat's only one");
  } else if (ktw > kb) {
    m.unused(rd_kt.slice(ktw - 1, kb), "k-tiles past LANES x LANE_GROUPS / SEGS hold no group");
    kt = rd_kt.slice(kb - 1, 0);
  } else if (ktw < kb) {
    kt = zext(rd_kt, kb);
  }
  const Expr waddr = m.wire("wr_word", pb > 0 ? concat({row_q, beat_q}) : row_q, "the bank word written");
  const Expr read_base = mux(read_q, constant(rw, static_cast<uint64_t>(chunk)), zero(rw));
  std::vector<Expr> bank_out;
  for (int s = 0; s < S; ++s) {
    const std::string ss = std::to_string(s);
    std::vector<Expr> lanes;  // most significant first: lanes s + j*SEGS, j from WG - 1 down
    for (int j = WG - 1; j >= 0; --j) {
      const int l = s + j * S;
      lanes.push_back(wr_a.slice((l + 1) * gbits - 1, l * gbits));
    }
    const Expr pos = rd_pos.slice((s + 1) * pw - 1, s * pw);
    const Expr row = pow2 ? concat({read_q, pos}) : zext(pos, rw) + read_base;
    const Expr raddr = m.wire("rd_word_" + ss, pb > 0 ? concat({row, kt[kb - 1]}) : row,
                              s == 0 ? "segment s's bank word read: {row, beat}" : "");
    bank_out.push_back(m.signal("bank_" + ss + "_rdata", ww));
    RingCodesBlock::word_memory(m, part_sram, words, {"bank_" + ss, "bank_" + ss + "_", "segment " + ss + "'s A words"},
                                clk, take, waddr, concat(lanes), raddr, bank_out.back());
  }

  registered_reads(m, clk, rst_n, RM, rd_valid, jb > 0 ? kt.slice(jb - 1, 0) : Expr(), bank_out, gbits, rd_valid_o,
                   rd_a);
  return m;
}

void RingABuffersBlock::registered_reads(Module& m, const Expr& clk, const Expr& rst_n, int memory_edges,
                                         const Expr& valid, const Expr& pick, const std::vector<Expr>& words, int gbits,
                                         const Expr& valid_out, const Expr& a_out) {
  const int S = valid.width(), groups = words.front().width() / gbits, jb = pick.valid() ? pick.width() : 0;
  auto idx = [](int i) { return static_cast<size_t>(i); };
  // The read in flight through the memories: its segments and the word's group it picks.
  std::vector<Expr> fl_valid, fl_pick;
  for (int k = 0; k < memory_edges; ++k) {
    const std::string ks = std::to_string(k);
    fl_valid.push_back(m.signal("fl_valid_" + ks + "_q", S, Sign::Unsigned,
                                k == 0 ? "segments read k + 1 edges ago, their words on their way" : ""));
    if (jb > 0)
      fl_pick.push_back(m.signal("fl_pick_" + ks + "_q", jb, Sign::Unsigned, k == 0 ? "... and the word's group" : ""));
  }
  Always& flight = m.always_ff(clk, rst_n, "reads in flight through the banks");
  for (int k = 0; k < memory_edges; ++k) {
    const auto i = idx(k);
    flight.flop(fl_valid[i], k == 0 ? valid : fl_valid[i - 1], 0);
    if (jb > 0) flight.flop(fl_pick[i], k == 0 ? pick : fl_pick[i - 1], 0);
  }
  // Every bank's word lands in a register, its segment's group picked (enabled by the read: an
  // idle segment's register holds).
  const Expr arrive = fl_valid.back();
  const Expr out_valid_q = m.signal("out_valid_q", S, Sign::Unsigned, "segment s's A is its read's");
  Always& out = m.always_ff(clk, rst_n, "the groups read, registered");
  out.flop(out_valid_q, arrive, 0);
  std::vector<Expr> out_a;  // least significant first
  for (int s = 0; s < S; ++s) {
    const std::string ss = std::to_string(s);
    std::vector<Expr> in_word;
    for (int j = 0; j < groups; ++j) in_word.push_back(words[idx(s)].slice((j + 1) * gbits - 1, j * gbits));
    const Expr picked = jb > 0 ? select(fl_pick.back(), in_word, zero(gbits)) : in_word[0];
    out_a.push_back(m.signal("out_a_" + ss + "_q", gbits, Sign::Unsigned, s == 0 ? "segment s's group read" : ""));
    out.flop(out_a.back(), mux(arrive[s], picked, out_a.back()), 0);
  }
  m.assign(valid_out, out_valid_q);
  m.assign(a_out, concat(std::vector<Expr>(out_a.rbegin(), out_a.rend())));
}

void RingABuffersBlock::add(vlog::Design& d, const HwConfig& c, int chunk) {
  check(c, chunk);
  const int words = bank_words(c, chunk), rows = RingCodesBlock::part_rows(words);
  const int width = word_groups(c) * c.group_w * c.data_w;
  d.add(generate(c, chunk, SramBlock::add(d, c, rows, width, 1, 1, true)));
}

vlog::Design RingABuffersBlock::design(const HwConfig& c, int chunk) {
  check(c, chunk);
  vlog::Design d = empty_design(c, {{"CHUNK", std::to_string(chunk)}});
  add(d, c, chunk);
  d.check();
  return d;
}

}  // namespace kaleido::hw
