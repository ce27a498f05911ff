#include <string>
#include <vector>

#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

void RingWalkBlock::check(const HwConfig& c, int words, int chunk, int list_w, int depth) {
  RingChunksBlock::check(c, words, chunk, list_w, depth);
  if (c.gather_w > list_w)
    throw ConfigError("gather-w", std::to_string(c.gather_w),
                      "at most LIST_W (" + std::to_string(list_w) + "): a gather beat's codes are one code word's");
}

Module RingWalkBlock::generate(const HwConfig& c, int words, int chunk, int list_w, int depth) {
  check(c, words, chunk, list_w, depth);
  const int G = c.max_groups(), GW = c.gather_w;
  const int parts = list_w / GW, pb = RingListsBlock::lane_bits(parts);  // beats a code word holds
  const int rows = depth / GW, rw = clog2(rows), cw = clog2(words);
  const int bw = clog2(chunk / GW + 1);  // a chunk's beats, 1..CHUNK / GATHER_W
  // R: edges from a read's row to its codes in code_q (the memory's read, then that register).
  const int RM = RingCodesBlock::read_edges(words), R = code_edges(words), F = fifo_depth(words);
  const int fb = clog2(F), cnt_w = clog2(F + 1), beat_codes = GW * G * 2;
  Module m("kld_ring_walk",
           "The gather's walk of the window-bounded ring (docs/hardware.md, \"The ring's walk\"): each "
           "chunk taken (once its passes' partials are in the ring) is walked in scan order, a beat "
           "(a ring row of GATHER_W positions) a cycle, each beat's codes read from the code memory "
           "(a word of LIST_W positions serves LIST_W / GATHER_W beats) and queued with its ring row "
           "and its tile's neighbour distances for kld_ring_merge, which takes the queue's head at "
           "each edge its gather advances. A beat is read only when the queue will have room for it, "
           "so the memory's reads need no stall");
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr chunk_valid = m.input("chunk_valid_i", 1, Sign::Unsigned, "a chunk's partials are in the ring: walk it");
  const Expr chunk_ready = m.output("chunk_ready_o", 1, Sign::Unsigned, "it is taken at this edge");
  const Expr chunk_read = m.output("chunk_read_o", 1, Sign::Unsigned,
                                   "the walked chunk's last beat is read at this edge (code_row_o its last word's): "
                                   "its code words are no longer needed");
  const Expr chunk_row = m.input("chunk_row_i", cw, Sign::Unsigned, "the code row of its first word");
  const Expr chunk_beats = m.input("chunk_beats_i", bw, Sign::Unsigned, "its beats: positions / GATHER_W, at least 1");
  const Expr chunk_slot_row = m.input("chunk_slot_row_i", rw, Sign::Unsigned, "ring row of its first position");
  const Expr chunk_off_h = m.input("chunk_off_h_i", rw, Sign::Unsigned, "rows back to a position's h neighbour");
  const Expr chunk_off_t = m.input("chunk_off_t_i", rw, Sign::Unsigned, "rows back to its t neighbour");
  const Expr code_row = m.output("code_row_o", cw, Sign::Unsigned, "the code row read (every cycle)");
  const Expr code = m.input("code_i", list_w * G * 2, Sign::Unsigned,
                            "the codes of code_row_o " + std::to_string(RM) + (RM == 1 ? " edge" : " edges") +
                                " before: lane i, group g at (i*G + g)*2");
  const Expr gather_en = m.input("gather_en_i", 1, Sign::Unsigned, "the merge's gather advances at this edge");
  const Expr gather_valid = m.output("gather_valid_o", GW, Sign::Unsigned, "a beat enters the merge (every lane)");
  const Expr gather_row = m.output("gather_row_o", rw, Sign::Unsigned, "its ring row");
  const Expr gather_code =
      m.output("gather_code_o", beat_codes, Sign::Unsigned, "its codes: lane j, group g at (j*G + g)*2");
  const Expr ref_off_h = m.output("ref_off_h_o", rw, Sign::Unsigned, "its chunk's h distance in rows");
  const Expr ref_off_t = m.output("ref_off_t_o", rw, Sign::Unsigned, "its chunk's t distance in rows");
  const Expr beat_last = m.output("beat_chunk_last_o", 1, Sign::Unsigned, "it is its chunk's last beat");

  // The chunk walked: beats left, the code word and the part of it the next beat reads, its ring row.
  const Expr left_q = m.signal("left_q", bw, Sign::Unsigned, "beats of the chunk not yet read (0: no chunk)");
  const Expr word_q = m.signal("word_q", cw, Sign::Unsigned, "code row of the next beat");
  const Expr row_q = m.signal("row_q", rw, Sign::Unsigned, "ring row of the next beat");
  const Expr off_h_q = m.signal("off_h_q", rw, Sign::Unsigned, "the chunk's h distance");
  const Expr off_t_q = m.signal("off_t_q", rw, Sign::Unsigned, "the chunk's t distance");
  const Expr part_q = pb > 0 ? m.signal("part_q", pb, Sign::Unsigned, "the next beat's part of its code word") : Expr();

  // Room: the queue's entries and the beats in flight through the memory's read and the codes'
  // register stay below F = R + 2, so a beat read now has an entry when its codes arrive, whatever
  // the merge does.
  const Expr count_q = m.signal("count_q", cnt_w, Sign::Unsigned, "beats queued");
  std::vector<Expr> fl_valid;
  for (int k = 0; k < R; ++k)
    fl_valid.push_back(m.signal("fl_valid_" + std::to_string(k) + "_q", 1, Sign::Unsigned,
                                k == 0 ? "a beat read k + 1 edges ago, its codes on their way" : ""));
  Expr in_flight = zero(cnt_w);
  for (const Expr& v : fl_valid) in_flight = in_flight + zext(v, cnt_w);
  const Expr room = m.wire("room", count_q + in_flight < constant(cnt_w, static_cast<uint64_t>(F)),
                           "a beat read now finds an entry when its codes arrive");
  const Expr active = m.wire("active", left_q != 0, "a chunk is being walked");
  const Expr read = m.wire("read", active && room, "a beat is read at this edge");
  const Expr last_read = m.wire("last_read", read && left_q == constant(bw, 1), "the chunk's last beat is read");
  m.assign(chunk_ready, !active || last_read);
  m.assign(chunk_read, last_read);
  const Expr take = m.wire("take", chunk_valid && (!active || last_read), "a chunk is taken at this edge");
  m.assign(code_row, word_q);

  Always& walk = m.always_ff(clk, rst_n, "the walk: beats read in scan order");
  walk.flop(left_q, mux(take, chunk_beats, mux(read, left_q - constant(bw, 1), left_q)), 0);
  const Expr word_step = pb > 0 ? part_q == constant(pb, static_cast<uint64_t>(parts - 1)) : bit(true);
  // Round the memory, as the front end's reader: a chunk's words may wrap, and the row read while
  // idle (the one after the last chunk's last word) stays inside the memory.
  const Expr word_next = m.wire(
      "word_next", mux(word_q == constant(cw, static_cast<uint64_t>(words - 1)), zero(cw), word_q + constant(cw, 1)),
      "the code row after it (the memory wraps)");
  walk.flop(word_q, mux(take, chunk_row, mux(read && word_step, word_next, word_q)), 0);
  if (pb > 0) walk.flop(part_q, mux(take, zero(pb), mux(read, part_q + constant(pb, 1), part_q)), 0);
  const Expr row_next =
      m.wire("row_next", mux(row_q == constant(rw, static_cast<uint64_t>(rows - 1)), zero(rw), row_q + constant(rw, 1)),
             "the ring row after it (the ring wraps)");
  walk.flop(row_q, mux(take, chunk_slot_row, mux(read, row_next, row_q)), 0);
  walk.flop(off_h_q, mux(take, chunk_off_h, off_h_q), 0);
  walk.flop(off_t_q, mux(take, chunk_off_t, off_t_q), 0);

  // In flight: what a beat needs beside its codes travels R edges with the read.
  struct Flight {
    Expr row, part, off_h, off_t, last;
  };
  std::vector<Flight> fl;
  for (int k = 0; k < R; ++k) {
    const std::string ks = std::to_string(k);
    fl.push_back({m.signal("fl_row_" + ks + "_q", rw), pb > 0 ? m.signal("fl_part_" + ks + "_q", pb) : Expr(),
                  m.signal("fl_off_h_" + ks + "_q", rw), m.signal("fl_off_t_" + ks + "_q", rw),
                  m.signal("fl_last_" + ks + "_q", 1)});
  }
  // The codes land in a register before their part is picked and queued: no path runs from the
  // memory's read through that logic (at a 4 ns clock a 128-row word read leaves no room for it).
  const Expr code_q = m.signal("code_q", list_w * G * 2, Sign::Unsigned, "the codes read, registered");
  Always& flight = m.always_ff(clk, rst_n, "beats in flight through the code memory's read and its register");
  flight.flop(code_q, code, 0);
  for (int k = 0; k < R; ++k) {
    const auto i = static_cast<size_t>(k);
    const bool first = k == 0;
    flight.flop(fl_valid[i], first ? read : fl_valid[i - 1], 0);
    flight.flop(fl[i].row, first ? row_q : fl[i - 1].row, 0);
    if (pb > 0) flight.flop(fl[i].part, first ? part_q : fl[i - 1].part, 0);
    flight.flop(fl[i].off_h, first ? off_h_q : fl[i - 1].off_h, 0);
    flight.flop(fl[i].off_t, first ? off_t_q : fl[i - 1].off_t, 0);
    flight.flop(fl[i].last, first ? last_read : fl[i - 1].last, 0);
  }
  const Flight& arrive = fl.back();
  const Expr arrive_valid = fl_valid.back();
  // The arriving beat's codes: its part of the word.
  std::vector<Expr> part_codes;
  for (int p = 0; p < parts; ++p) part_codes.push_back(code_q.slice((p + 1) * beat_codes - 1, p * beat_codes));
  const Expr arrive_codes =
      m.wire("arrive_codes", pb > 0 ? select(arrive.part, part_codes, zero(beat_codes)) : part_codes[0],
             "the arriving beat's codes");

  // The queue: F entries, written at the tail as codes arrive, the head offered to the merge.
  const int ew = rw + beat_codes + 2 * rw + 1;
  std::vector<Expr> entry;
  for (int e = 0; e < F; ++e)
    entry.push_back(m.signal("entry_" + std::to_string(e) + "_q", ew, Sign::Unsigned,
                             e == 0 ? "a queued beat: {last, off_t, off_h, codes, row}" : ""));
  const Expr head_q = m.signal("head_q", fb, Sign::Unsigned, "the queue's head");
  const Expr tail_q = m.signal("tail_q", fb, Sign::Unsigned, "its next free entry");
  const Expr queued = m.wire("queued", count_q != 0, "a beat waits for the merge");
  const Expr pop = m.wire("pop", queued && gather_en, "the merge takes the head at this edge");
  const Expr arrival = m.wire("arrival", concat({arrive.last, arrive.off_t, arrive.off_h, arrive_codes, arrive.row}),
                              "the arriving beat's entry");
  auto next_of = [&](const Expr& p) {
    return mux(p == constant(fb, static_cast<uint64_t>(F - 1)), zero(fb), p + constant(fb, 1));
  };
  Always& queue = m.always_ff(clk, rst_n, "the queue of beats for the merge");
  for (int e = 0; e < F; ++e)
    queue.flop(
        entry[static_cast<size_t>(e)],
        mux(arrive_valid && tail_q == constant(fb, static_cast<uint64_t>(e)), arrival, entry[static_cast<size_t>(e)]),
        0);
  queue.flop(tail_q, mux(arrive_valid, next_of(tail_q), tail_q), 0);
  queue.flop(head_q, mux(pop, next_of(head_q), head_q), 0);
  queue.flop(count_q,
             mux(arrive_valid && !pop, count_q + constant(cnt_w, 1),
                 mux(pop && !arrive_valid, count_q - constant(cnt_w, 1), count_q)),
             0);
  const Expr head = m.wire("head", select(head_q, entry, zero(ew)), "the queue's head");
  m.assign(gather_valid, repl(GW, queued));
  m.assign(gather_row, head.slice(rw - 1, 0));
  m.assign(gather_code, head.slice(rw + beat_codes - 1, rw));
  m.assign(ref_off_h, head.slice(2 * rw + beat_codes - 1, rw + beat_codes));
  m.assign(ref_off_t, head.slice(3 * rw + beat_codes - 1, 2 * rw + beat_codes));
  m.assign(beat_last, head[ew - 1]);
  return m;
}

vlog::Design RingWalkBlock::design(const HwConfig& c, int words, int chunk, int list_w, int depth) {
  check(c, words, chunk, list_w, depth);
  return RingChunksBlock::plan_design(c, words, chunk, list_w, depth, generate(c, words, chunk, list_w, depth));
}

}  // namespace kaleido::hw
