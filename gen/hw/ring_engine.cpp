#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

void RingEngineBlock::check(const HwConfig& c, int words, int chunk, int list_w, int depth) {
  RingDetectBlock::check(c, words, chunk, list_w);
  RingABuffersBlock::check(c, chunk);
  RingAReplayBlock::check(c, chunk);
  RingChunksBlock::check(c, words, chunk, list_w, depth);
  RingPassesBlock::check(words, chunk, list_w);
  RingWalkBlock::check(c, RingFrontBlock::walk_words(chunk, list_w), chunk, list_w, depth);
}

int RingEngineBlock::a_edges(const HwConfig& c, int chunk) { return RingABuffersBlock::read_edges(c, chunk); }

Module RingEngineBlock::generate(const HwConfig& c, int words, int chunk, int list_w, int depth,
                                 const Module& detect, const Module& chunks, const Module& passes,
                                 const Module& walk, const Module& a_buffers, const Module& a_replay) {
  check(c, words, chunk, list_w, depth);
  const int gb = RingListsBlock::lane_bits(c.gather_w), rw = clog2(depth / c.gather_w), cw = clog2(words);
  const int tw_w = clog2(c.max_w + 1);
  const int aw = clog2(c.max_h * c.max_w + 1), nw = clog2(chunk + 1), bw = clog2(chunk / c.gather_w + 1);
  const int slot_words = RingListsBlock::rows(chunk, list_w), walk_words = RingFrontBlock::walk_words(chunk, list_w);
  const int wrw = clog2(walk_words), S = RingFrontBlock::kWalkSlots, sb = clog2(S), cb = clog2(2 * S);
  const int ww = clog2(slot_words + 1), G = c.max_groups(), GW = c.gather_w;
  Module m("kld_ring_engine",
           "The window-bounded ring's engine (docs/hardware.md, \"The ring's engine\"): the detector "
           "(kld_ring_detect), the chunk sequencer (kld_ring_chunks), the pass engine (kld_ring_passes) "
           "and the gather's walk (kld_ring_walk) joined. The detector decides the run's positions from "
           "A's stream into the code words; a run's chunks go to the passes once their words are "
           "written; chunk n's words are kept in walk-buffer slot n mod 4 and what its walk "
           "needs (beats, ring row, distances) in entry n mod 4 of a small table; once its partials "
           "have landed in the ring (landed_i) the walk reads its codes from that slot and hands its "
           "beats to the merge, and its last read frees the slot for chunk n + 4. The issue's A: the "
           "detector's beats are kept in the A buffers (kld_ring_a_buffers), which the first m-tile's issue "
           "reads and writes out (save_*_o); the later m-tiles' issue reads it streamed back "
           "(kld_ring_a_replay, replay_*_i)");
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr start = m.input("start_i", 1, Sign::Unsigned, "a run begins (taken while not busy_o)");
  const RingChunksBlock::RunPorts run = RingChunksBlock::RunPorts::declare(m, c);
  const Expr busy = m.output("busy_o", 1, Sign::Unsigned,
                             "the run's positions are being decided or its chunks offered, or a chunk taken "
                             "has not had its last read by the walk");
  const RingDetectBlock::DetectPorts detection = RingDetectBlock::DetectPorts::declare(m, c);
  const Expr written_out = m.output("codes_written_o", clog2(words + 1), Sign::Unsigned,
                                    "code words of the run written (rows 0 up): a chunk goes to the passes "
                                    "once its last word is among them");
  const Expr codes_error = m.output("codes_error_o", 1, Sign::Unsigned,
                                    "the run has more code words than CODE_WORDS (kld_ring_detect's): its "
                                    "later chunks have no decisions; kld_top's registers keep such runs out, "
                                    "and what follows the error is undefined until a reset");
  const Expr codes_written = m.signal("codes_written", clog2(words + 1), Sign::Unsigned,
                                      "the detector's words written");
  RingIssueBlock::OuterPorts outer = RingIssueBlock::OuterPorts::declare_pass_side(m, c);
  outer.declare_beat(m, c, chunk, list_w);
  const int tagw = RingMergeBlock::tag_width(c, depth), ktw = c.max_kt() > 1 ? clog2(c.max_kt()) : 0;
  const int pew = RingListsBlock::entry_w(chunk, list_w), segs = c.segs();
  const Expr beat_tag = m.output("beat_tag_o", segs * tagw, Sign::Unsigned,
                                 "segment s's slot at s*TAG_W, kld_ring_merge's tap tag: {k-tile, ring row, "
                                 "bank} of its position (the beat's chunk's first ring row + position / "
                                 "GATHER_W, wrapped; position mod GATHER_W); from the beat's registers");
  const int mtw = clog2(c.max_mt()), kw = clog2(c.max_kt());
  const Expr wt_valid = m.output("wt_valid_o", 1, Sign::Unsigned,
                                 "the next pass is known (its chunk taken by the passes): the weight loader "
                                 "loads its B tile, wt_mt_o's columns and wt_kt_o's rows, and raises "
                                 "wt_ready_i; pass_take_o moves on to the pass after");
  const Expr wt_mt = m.output("wt_mt_o", mtw, Sign::Unsigned, "the next pass's m-tile");
  const Expr wt_kt = m.output("wt_kt_o", kw, Sign::Unsigned, "the next pass's k-tile");
  const Expr landed = m.input("landed_i", 1, Sign::Unsigned,
                              "the partials of the oldest chunk issued and not yet landed are all in the ring");
  const Expr gather_en = m.input("gather_en_i", 1, Sign::Unsigned, "the merge's gather advances at this edge");
  const Expr gather_valid = m.output("gather_valid_o", GW, Sign::Unsigned, "a beat enters the merge (every lane)");
  const Expr gather_row = m.output("gather_row_o", rw, Sign::Unsigned, "its ring row");
  const Expr gather_code =
      m.output("gather_code_o", GW * G * 2, Sign::Unsigned, "its codes: lane j, group g at (j*G + g)*2");
  const Expr ref_off_h = m.output("ref_off_h_o", rw, Sign::Unsigned, "its tile's h distance in ring rows");
  const Expr ref_off_t = m.output("ref_off_t_o", rw, Sign::Unsigned, "its tile's t distance in ring rows");
  const Expr gather_last = m.output("gather_last_o", 1, Sign::Unsigned, "it is its chunk's last beat");
  const Expr gather_masked = m.output("gather_masked_o", 1, Sign::Unsigned,
                                      "its chunk's pair is dropped by the block mask: a first m-tile's chunk, "
                                      "run so that its A is saved; kld_top discards its outputs");
  const Expr window_error = m.output("window_error_o", 1, Sign::Unsigned,
                                     "the offered chunk's tile has a t distance (area / GATHER_W) of RING_DEPTH / "
                                     "GATHER_W rows or more: past the ring. It is not taken: the run stops there "
                                     "(kld_top's registers keep such tiles out; a reset recovers)");
  const int gbits = c.group_w * c.data_w, RA = a_edges(c, chunk), RR = RingAReplayBlock::read_edges(chunk);
  const Expr issue_a_valid = m.output("issue_a_valid_o", segs, Sign::Unsigned,
                                      "segment s's A for the issue beat " + std::to_string(RA) +
                                          " edges before is on issue_a_o: its position's group beat_kt_o*SEGS + s");
  const Expr issue_a = m.output("issue_a_o", segs * gbits, Sign::Unsigned,
                                "segment s's at s*GROUP_W*DATA_W: the A buffers' in the first m-tile, the "
                                "replay's in the later ones");
  const Expr issue_wbuf = m.output("issue_wbuf_o", 1, Sign::Unsigned,
                                   "the weight buffer of that beat's pass (beat_wbuf_o, delayed with it)");
  const Expr issue_tag = m.output("issue_tag_o", segs * tagw, Sign::Unsigned,
                                  "its segments' tap tags (beat_tag_o, registered and delayed with it; held "
                                  "where a segment does not issue): with issue_a_o and issue_wbuf_o the array's "
                                  "issue port");
  const Expr issue_chunk_last = m.output("issue_chunk_last_o", 1, Sign::Unsigned,
                                         "it is its chunk's last beat (beat_chunk_last_o, delayed with it): "
                                         "landed_i follows it by the array's latency");
  const Expr save_valid = m.output("save_valid_o", 1, Sign::Unsigned,
                                   "a beat of the first m-tile's issued A, written out in issue order for the "
                                   "later m-tiles' replay (no back-pressure: one beat a cycle at most)");
  const Expr save_lanes = m.output("save_lanes_o", segs, Sign::Unsigned, "segment s's group is in the beat");
  const Expr save_a = m.output("save_a_o", segs * gbits, Sign::Unsigned, "the groups, segment s's at s*GROUP_W*DATA_W");
  const Expr save_pass_last = m.output("save_pass_last_o", 1, Sign::Unsigned,
                                       "the beat ends its pass (an empty pass: a beat with no lane)");
  const Expr replay_valid = m.input("replay_valid_i", 1, Sign::Unsigned,
                                    "a beat of the saved A streamed back: every later m-tile's kept chunks' "
                                    "passes in issue order, each pass as saved");
  const Expr replay_ready = m.output("replay_ready_o", 1, Sign::Unsigned, "it is taken at this edge");
  const Expr replay_lanes = m.input("replay_lanes_i", segs, Sign::Unsigned, "segment s's next group is in the beat");
  const Expr replay_a =
      m.input("replay_a_i", segs * gbits, Sign::Unsigned, "the groups, segment s's at s*GROUP_W*DATA_W");
  const Expr replay_pass_last = m.input("replay_pass_last_i", 1, Sign::Unsigned, "the beat ends its pass");

  // The chunk offered by the sequencer.
  const Expr ch_valid = m.signal("ch_valid", 1), ch_ready = m.signal("ch_ready", 1), ch_busy = m.signal("ch_busy", 1);
  const Expr ch_masked = m.signal("ch_masked", 1);
  const Expr ch_row = m.signal("ch_row", cw), ch_words = m.signal("ch_words", ww);
  const Expr ch_lanes = m.signal("ch_lanes", list_w), ch_len = m.signal("ch_len", nw);
  const Expr ch_slot_row = m.signal("ch_slot_row", rw), ch_off_h = m.signal("ch_off_h", tw_w - gb);
  const Expr ch_off_t = m.signal("ch_off_t", aw - gb), ch_mt = m.signal("ch_mt", clog2(c.max_mt()));
  const Expr ch_last = m.signal("ch_last", 1);
  m.unused(ch_last, "the run's last chunk: for kld_top's output (not yet joined); the run's end is busy_o");
  const int dw = cw + 1;
  // Registered, so no path runs from the sequencer's row through the sum and compare into the
  // passes' take: a chunk goes on at the earliest in the second cycle it is offered. Its row and
  // words are held while it is offered, and the words written only grow within a run.
  const Expr decided = m.signal("decided_q", 1, Sign::Unsigned,
                                "the chunk offered, offered in the cycle before too, has its code words written");
  Always& decide = m.always_ff(clk, rst_n, "the offered chunk's decisions, written");
  decide.flop(decided, ch_valid && zext(ch_row, dw) + zext(ch_words, dw) <= zext(codes_written, dw), 0);
  // The tile's t distance (its largest, an h distance is at most it) must name a row of the ring.
  const int rows = depth / GW, xw = std::max(aw - gb, clog2(rows + 1));
  const Expr past = m.wire("past_ring", zext(ch_off_t, xw) >= constant(xw, static_cast<uint64_t>(rows)),
                           "the offered chunk's t distance is past the ring");
  m.assign(window_error, ch_valid && past);
  const Expr pass_ready = m.signal("pass_ready", 1);
  const Expr pass_valid = m.wire("pass_valid", ch_valid && decided && !past,
                                 "a chunk whose decisions are written, its distances inside the ring, is offered");
  const Expr take = m.wire("take", pass_valid && pass_ready, "the passes take the offered chunk");
  m.assign(ch_ready, decided && !past && pass_ready);

  // Chunks counted mod 8: taken by the passes, landed, taken by the walk, walked (at most four
  // taken are unwalked: kld_ring_passes waits for a walk-buffer slot).
  const Expr taken_q = m.signal("taken_q", cb, Sign::Unsigned, "chunks the passes have taken (mod 8)");
  const Expr landed_q = m.signal("landed_q", cb, Sign::Unsigned, "chunks whose partials have landed (mod 8)");
  const Expr walks_q = m.signal("walks_q", cb, Sign::Unsigned, "chunks the walk has taken (mod 8)");
  const Expr walked_q = m.signal("walked_q", cb, Sign::Unsigned, "chunks whose last beat the walk has read (mod 8)");
  const Expr walk_ready = m.signal("walk_ready", 1), walk_read = m.signal("walk_read", 1);
  const Expr walk_valid = m.wire("walk_valid", landed_q != walks_q, "a landed chunk waits for the walk");
  const Expr walk_take = m.wire("walk_take", walk_valid && walk_ready, "the walk takes the oldest landed chunk");
  const Expr issued_q = m.signal("issued_q", cb, Sign::Unsigned, "chunks whose last beat is issued (mod 8)");
  Always& count = m.always_ff(clk, rst_n, "the chunks' counts");
  count.flop(issued_q, mux(outer.beat_chunk_last, issued_q + constant(cb, 1), issued_q), 0);
  count.flop(taken_q, mux(take, taken_q + constant(cb, 1), taken_q), 0);
  count.flop(landed_q, mux(landed, landed_q + constant(cb, 1), landed_q), 0);
  count.flop(walks_q, mux(walk_take, walks_q + constant(cb, 1), walks_q), 0);
  count.flop(walked_q, mux(walk_read, walked_q + constant(cb, 1), walked_q), 0);
  const Expr det_busy = m.signal("det_busy", 1);
  const Expr engaged = m.wire("engaged", det_busy || ch_busy || taken_q != walked_q, "busy_o");
  m.assign(busy, engaged);
  // A run is taken only once the last one's walk has read its last word: the new run's decisions
  // overwrite the code memory's rows from 0.
  const Expr run_start = m.wire("run_start", start && !engaged, "start_i, taken");

  // What the walk needs of chunk n, kept in entry n mod 4 from its take by the passes until the
  // walk takes it (entry n is written again for chunk n + 4, after chunk n's last read).
  if (gb > 0)
    m.unused(ch_len.slice(gb - 1, 0),
             "a chunk is whole ring rows: CHUNK and the tiles' widths are multiples of GATHER_W");
  const Expr beats =
      m.wire("ch_beats", resize(ch_len.slice(nw - 1, gb), bw), "the chunk's beats: positions / GATHER_W");
  const Expr off_h = m.wire("ch_off_h_rows", resize(ch_off_h, rw), "its h distance at the ring row's width");
  const Expr off_t = m.wire("ch_off_t_rows", resize(ch_off_t, rw), "its t distance at the ring row's width");
  const Expr entry_in = m.wire("entry_in", concat({ch_mt, off_t, off_h, ch_slot_row, beats}),
                               "the taken chunk's entry: {m-tile, off_t, off_h, ring row, beats}");
  const int ew = bw + 3 * rw + mtw;
  std::vector<Expr> entry;
  for (int e = 0; e < S; ++e)
    entry.push_back(m.signal("entry_" + std::to_string(e) + "_q", ew, Sign::Unsigned,
                             e == 0 ? "chunk n's walk: entry n mod 4" : ""));
  Always& table = m.always_ff(clk, rst_n, "the walks of the chunks taken, by walk-buffer slot");
  for (int e = 0; e < S; ++e)
    table.flop(entry[static_cast<size_t>(e)],
               mux(take && taken_q.slice(sb - 1, 0) == constant(sb, static_cast<uint64_t>(e)), entry_in,
                   entry[static_cast<size_t>(e)]),
               0);
  const Expr walk_slot = walks_q.slice(sb - 1, 0);
  const Expr head = m.wire("walk_entry", select(walk_slot, entry, zero(ew)), "the entry of the chunk walked next");
  // The issued beat's chunk is the oldest whose last beat is not out: entry issued mod 4 (it is
  // rewritten only after that chunk's walk).
  const Expr issuing = m.wire("issuing_entry", select(issued_q.slice(sb - 1, 0), entry, zero(ew)),
                              "the entry of the chunk whose beats are issued");
  const Expr issuing_row = issuing.slice(bw + rw - 1, bw);
  const Expr issuing_first = m.wire("issuing_first_mt", issuing.slice(ew - 1, ew - mtw) == zero(mtw),
                                    "the issued chunk is the first m-tile's: its A is in the A buffers");
  m.unused(concat({issuing.slice(ew - mtw - 1, bw + rw), issuing.slice(bw - 1, 0)}),
           "of the issued chunk's entry its ring row names the beats' slots, its m-tile their A");
  m.unused(head.slice(ew - 1, bw + 3 * rw), "the walked chunk's m-tile: its weights', not its walk's");

  // The pass the weights are asked for next: the k-tile after the last pass begun, of the chunk
  // whose passes are under way, or k-tile 0 of the next chunk taken. Chunk n's entry (n mod 4)
  // keeps its m-tile from its take until after its walk, so through its passes. A chunk has
  // ceil(G / SEGS) passes: its last is the one whose (k-tile + 1) x SEGS reaches G.
  const Expr pass_kt_q = m.signal("wt_kt_q", kw, Sign::Unsigned, "the next pass's k-tile");
  const Expr pass_chunk_q = m.signal("wt_chunk_q", cb, Sign::Unsigned, "chunks whose passes have all begun (mod 8)");
  const int kx = std::max(clog2(c.max_kt() * segs + 1), outer.groups.width());
  const Expr chunk_done = m.wire("wt_chunk_done",
                                 zext(pass_kt_q, kx) * constant(kx, static_cast<uint64_t>(segs)) +
                                         constant(kx, static_cast<uint64_t>(segs)) >=
                                     zext(outer.groups, kx),
                                 "the next pass is its chunk's last");
  Always& wts = m.always_ff(clk, rst_n, "the next pass: its chunk and k-tile");
  wts.flop(pass_kt_q, mux(outer.pass_take, mux(chunk_done, zero(kw), pass_kt_q + constant(kw, 1)), pass_kt_q), 0);
  wts.flop(pass_chunk_q, mux(outer.pass_take && chunk_done, pass_chunk_q + constant(cb, 1), pass_chunk_q), 0);
  const Expr passing = m.wire("wt_entry", select(pass_chunk_q.slice(sb - 1, 0), entry, zero(ew)),
                              "the entry of the next pass's chunk");
  m.unused(passing.slice(ew - mtw - 1, 0), "of the next pass's chunk only its m-tile names its weights");
  m.assign(wt_valid, pass_chunk_q != taken_q);
  const Expr next_mt = m.wire("wt_next_mt", passing.slice(ew - 1, ew - mtw), "the next pass's m-tile");
  m.assign(wt_mt, next_mt);
  m.assign(wt_kt, pass_kt_q);
  std::vector<Expr> tags;
  for (int sg = 0; sg < segs; ++sg) {
    const std::string sn = std::to_string(sg);
    const Expr pos = outer.beat_pos.slice((sg + 1) * pew - 1, sg * pew);
    const Expr sum = m.wire("slot_sum_" + sn, zext(issuing_row, rw + 1) + resize(pos.slice(pew - 1, gb), rw + 1),
                            sg == 0 ? "segment s's ring row before the wrap (below 1.5 x the ring's rows)" : "");
    const uint64_t rows_low = static_cast<uint64_t>(rows) & ((uint64_t{1} << rw) - 1);  // rows mod 2^rw
    const Expr row = m.wire(
        "slot_row_" + sn,
        mux(sum >= static_cast<int64_t>(rows), trunc(sum, rw) - constant(rw, rows_low), trunc(sum, rw)),
        sg == 0 ? "its ring row" : "");
    std::vector<Expr> fields;
    if (ktw > 0) fields.push_back(outer.beat_kt.slice(ktw - 1, 0));
    fields.push_back(row);
    if (gb > 0) fields.push_back(pos.slice(gb - 1, 0));
    tags.push_back(concat(fields));
  }
  std::reverse(tags.begin(), tags.end());
  m.assign(beat_tag, concat(tags));
  std::vector<Expr> slot_rows;
  for (int e = 0; e < S; ++e) slot_rows.push_back(constant(wrw, static_cast<uint64_t>(e * slot_words)));
  const Expr walk_row0 =
      m.wire("walk_row0", select(walk_slot, slot_rows, zero(wrw)), "its first word's row in the walk buffer");

  const Expr walk_row = m.signal("walk_row", wrw), walk_code = m.signal("walk_code", list_w * G * 2);
  // The detector: the run's decisions into the code words, counted for the chunks' offers.
  const int L = c.det_lanes(), lg = RingListsBlock::lane_bits(list_w);
  const RingCodesBlock::DecisionPorts dec{m.signal("dec_valid", L),          m.signal("dec_group", L * clog2(G)),
                                          m.signal("dec_reuse", L),          m.signal("dec_axis", 2 * L),
                                          m.signal("dec_lane", lg > 0 ? lg : 1), m.signal("dec_row", cw),
                                          m.signal("dec_commit", 1)};
  std::vector<Connection> detect_ports = {{"clk_i", clk},          {"rst_ni", rst_n},         {"start_i", run_start},
                                          {"busy_o", det_busy},    {"grid_t_i", run.grid_t},  {"grid_h_i", run.grid_h},
                                          {"grid_w_i", run.grid_w}, {"tile_h_i", run.tile_h}, {"tile_w_i", run.tile_w},
                                          {"groups_i", outer.groups}};
  // A's stream is taken when the detector and the A buffers both take it. The buffers write the
  // detector's presented beat, a cycle after its take, so a beat is taken only if there is room
  // for it even when the beat presented fills a buffer.
  const Expr buf_chunks = m.signal("abuf_chunks", 2), a_beat_valid = m.signal("a_beat_valid", 1);
  const Expr a_beat = m.signal("a_beat", c.det_lanes() * gbits), a_beat_last = m.signal("a_beat_chunk_last", 1);
  const Expr det_a_ready = m.signal("det_a_ready", 1);
  const Expr a_room = m.wire("a_room",
                             buf_chunks == zero(2) || (buf_chunks == constant(2, 1) && !(a_beat_valid && a_beat_last)),
                             "a buffer has room for a beat taken now, written next cycle");
  m.assign(detection.a_ready, det_a_ready && a_room);
  for (const Connection& p : detection.connect()) {
    if (p.port == "a_valid_i")
      detect_ports.push_back({p.port, detection.a_valid && a_room});
    else if (p.port == "a_ready_o")
      detect_ports.push_back({p.port, det_a_ready});
    else
      detect_ports.push_back(p);
  }
  std::vector<Connection> decisions_out = {{"dec_valid_o", dec.valid}, {"dec_group_o", dec.group},
                                           {"dec_reuse_o", dec.reuse}, {"dec_axis_o", dec.axis},
                                           {"dec_lane_o", dec.lane},   {"dec_row_o", dec.row},
                                           {"dec_commit_o", dec.commit}, {"codes_written_o", codes_written},
                                           {"codes_error_o", codes_error}, {"a_beat_valid_o", a_beat_valid},
                                           {"a_beat_o", a_beat}, {"a_beat_chunk_last_o", a_beat_last}};
  detect_ports.insert(detect_ports.end(), decisions_out.begin(), decisions_out.end());
  m.instance(detect, "u_detect", detect_ports, "the run's decisions, from A's stream, into the code words");
  m.assign(written_out, codes_written);

  std::vector<Connection> chunk_ports = {{"clk_i", clk}, {"rst_ni", rst_n}, {"start_i", run_start}};
  for (const Connection& p : run.connect()) chunk_ports.push_back(p);
  for (const Connection& p : std::vector<Connection>{
           {"busy_o", ch_busy}, {"chunk_valid_o", ch_valid}, {"chunk_ready_i", ch_ready}})
    chunk_ports.push_back(p);
  const RingCodesBlock::ChunkWordPorts offered{ch_row, ch_words, ch_lanes};
  for (const Connection& p : offered.connect("chunk", "_o")) chunk_ports.push_back(p);
  for (const Connection& p : std::vector<Connection>{{"chunk_len_o", ch_len},
                                                     {"chunk_slot_row_o", ch_slot_row},
                                                     {"chunk_off_h_o", ch_off_h},
                                                     {"chunk_off_t_o", ch_off_t},
                                                     {"chunk_mt_o", ch_mt},
                                                     {"chunk_last_o", ch_last}})
    chunk_ports.push_back(p);
  chunk_ports.push_back({"chunk_masked_o", ch_masked});
  m.instance(chunks, "u_chunks", chunk_ports, "the run's chunks, in scan order, once per m-tile");

  std::vector<Connection> pass_ports = {{"chunk_valid_i", pass_valid}, {"chunk_ready_o", pass_ready}};
  for (const std::vector<Connection>& part :
       {offered.connect("chunk", "_i"), outer.beat(),
        std::vector<Connection>{{"walk_row_i", walk_row}, {"walk_code_o", walk_code}, {"walked_i", walk_read}}})
    pass_ports.insert(pass_ports.end(), part.begin(), part.end());
  // A later m-tile's pass begins only once its A is all in the replay's FIFOs.
  const Expr replay_pass_ready = m.signal("replay_pass_ready", 1);
  const Expr pass_a_ready = m.wire("pass_a_ready", next_mt == zero(mtw) || replay_pass_ready,
                                   "the next pass's A is at hand: in the A buffers, or in the replay's FIFOs");
  std::vector<Connection> pass_head = {{"clk_i", clk}, {"rst_ni", rst_n}};
  for (const Connection& p : outer.pass_side())
    pass_head.push_back(p.port == "wt_ready_i" ? Connection{p.port, outer.wt_ready && pass_a_ready} : p);
  m.instance(passes, "u_passes", dec.connect(pass_head, pass_ports),
             "decision codes, the chunks' lists and their issue; the walk buffer");

  m.instance(walk, "u_walk",
             {{"clk_i", clk},
              {"rst_ni", rst_n},
              {"chunk_valid_i", walk_valid},
              {"chunk_ready_o", walk_ready},
              {"chunk_read_o", walk_read},
              {"chunk_row_i", walk_row0},
              {"chunk_beats_i", head.slice(bw - 1, 0)},
              {"chunk_slot_row_i", head.slice(bw + rw - 1, bw)},
              {"chunk_off_h_i", head.slice(bw + 2 * rw - 1, bw + rw)},
              {"chunk_off_t_i", head.slice(bw + 3 * rw - 1, bw + 2 * rw)},
              {"code_row_o", walk_row},
              {"code_i", walk_code},
              {"gather_en_i", gather_en},
              {"gather_valid_o", gather_valid},
              {"gather_row_o", gather_row},
              {"gather_code_o", gather_code},
              {"ref_off_h_o", ref_off_h},
              {"ref_off_t_o", ref_off_t},
              {"beat_chunk_last_o", gather_last}},
             "the gather's walk of the landed chunks, from the walk buffer");

  // Which chunks the mask drops (run in the first m-tile only for their A), by chunk mod 16 from
  // the passes' take to their last gather beat: at most 4 chunks are taken and not walked, and at
  // most a walk queue's worth (RingWalkBlock::fifo_depth, 5 at most) walked and not gathered.
  const int mb = 4;
  if (S + RingWalkBlock::fifo_depth(walk_words) >= (1 << mb))
    throw InternalError("kld_ring_engine: the mask marks' table is shallower than the chunks it must hold");
  const Expr mtaken_q = m.signal("masked_taken_q", mb, Sign::Unsigned, "chunks the passes have taken (mod 16)");
  const Expr mgathered_q = m.signal("masked_gathered_q", mb, Sign::Unsigned,
                                    "chunks whose last gather beat has gone to the merge (mod 16)");
  const Expr gathered_last = m.wire("gathered_last", gather_valid[0] && gather_en && gather_last,
                                    "a chunk's last gather beat goes to the merge");
  Always& masked_table = m.always_ff(clk, rst_n, "the chunks dropped by the mask, from take to gather");
  masked_table.flop(mtaken_q, mux(take, mtaken_q + constant(mb, 1), mtaken_q), 0);
  masked_table.flop(mgathered_q, mux(gathered_last, mgathered_q + constant(mb, 1), mgathered_q), 0);
  std::vector<Expr> mask_bits;
  for (int e = 0; e < (1 << mb); ++e) {
    mask_bits.push_back(m.signal("masked_" + std::to_string(e) + "_q", 1, Sign::Unsigned,
                                 e == 0 ? "chunk n's pair is dropped by the mask: entry n mod 16" : ""));
    masked_table.flop(mask_bits.back(),
                      mux(take && mtaken_q == constant(mb, static_cast<uint64_t>(e)), ch_masked, mask_bits.back()), 0);
  }
  m.assign(gather_masked, select(mgathered_q, mask_bits, bit(false)));

  // The first m-tile issues every chunk of the scan in order (the mask drops none there), so the
  // A buffers free the older chunk held with each such chunk's last issue beat.
  const Expr free = m.wire("abuf_free", outer.beat_chunk_last && issuing_first,
                           "a first m-tile's chunk has its last beat issued (its last A read)");

  const Expr buf_wr_ready = m.signal("abuf_wr_ready", 1);
  m.unused(buf_wr_ready, "a beat is taken from A's stream only with room for it (a_room)");
  const Expr buf_rd_valid = m.signal("abuf_rd_valid", segs), buf_rd_a = m.signal("abuf_rd_a", segs * gbits);
  const int pw = clog2(chunk);
  std::vector<Expr> rd_pos;
  for (int sg = segs - 1; sg >= 0; --sg)
    rd_pos.push_back(resize(outer.beat_pos.slice((sg + 1) * pew - 1, sg * pew), pw));
  m.instance(a_buffers, "u_a_buffers",
             {{"clk_i", clk},
              {"rst_ni", rst_n},
              {"wr_valid_i", a_beat_valid},
              {"wr_ready_o", buf_wr_ready},
              {"wr_a_i", a_beat},
              {"wr_chunk_last_i", a_beat_last},
              {"free_i", free},
              {"chunks_o", buf_chunks},
              {"rd_valid_i", mux(issuing_first, outer.beat_valid, zero(segs))},
              {"rd_pos_i", concat(rd_pos)},
              {"rd_kt_i", outer.beat_kt},
              {"rd_valid_o", buf_rd_valid},
              {"rd_a_o", buf_rd_a}},
             "the A of two chunks of the first m-tile: written from the detector's beats, read by the issue");

  // The later m-tiles' reads take the replay's FIFO heads, delayed to land with the buffers' reads
  // (the buffers' banks are at least as deep as the FIFOs, so they never read in fewer edges).
  if (RR > RA) throw InternalError("kld_ring_engine: the A replay reads in more edges than the A buffers");
  Expr replay_rd = mux(issuing_first, zero(segs), outer.beat_valid);
  if (RA > RR) {
    Always& delay = m.always_ff(clk, rst_n, "the replay's reads, delayed to the A buffers' read edges");
    for (int k = 0; k < RA - RR; ++k) {
      const Expr q = m.signal("replay_rd_" + std::to_string(k) + "_q", segs, Sign::Unsigned,
                              k == 0 ? "the later m-tiles' reads, k + 1 edges late" : "");
      delay.flop(q, replay_rd, 0);
      replay_rd = q;
    }
  }
  const Expr rep_rd_valid = m.signal("replay_rd_valid", segs), rep_rd_a = m.signal("replay_rd_a", segs * gbits);
  m.instance(a_replay, "u_a_replay",
             {{"clk_i", clk},
              {"rst_ni", rst_n},
              {"in_valid_i", replay_valid},
              {"in_ready_o", replay_ready},
              {"in_lanes_i", replay_lanes},
              {"in_a_i", replay_a},
              {"in_pass_last_i", replay_pass_last},
              {"pass_ready_o", replay_pass_ready},
              {"pass_begin_i", outer.pass_take && next_mt != zero(mtw)},
              {"rd_i", replay_rd},
              {"rd_valid_o", rep_rd_valid},
              {"rd_a_o", rep_rd_a}},
             "the later m-tiles' A, streamed back into a FIFO per segment");
  std::vector<Expr> a_out;  // most significant first
  for (int sg = segs - 1; sg >= 0; --sg)
    a_out.push_back(mux(rep_rd_valid[sg], rep_rd_a.slice((sg + 1) * gbits - 1, sg * gbits),
                        buf_rd_a.slice((sg + 1) * gbits - 1, sg * gbits)));
  m.assign(issue_a_valid, buf_rd_valid | rep_rd_valid);
  m.assign(issue_a, concat(a_out));

  // The beat's fields, delayed to land with its A: the array's issue port. A segment's tag moves
  // only with an issuing segment (no toggling while it idles).
  Expr d_valid = outer.beat_valid, d_wbuf = outer.beat_wbuf, d_tag = beat_tag, d_last = outer.beat_chunk_last;
  Always& align = m.always_ff(clk, rst_n, "the issue beat's fields, delayed to land with its A");
  for (int k = 0; k < RA; ++k) {
    const std::string ks = std::to_string(k);
    const Expr wbuf_q = m.signal("issue_wbuf_" + ks + "_q", 1, Sign::Unsigned, k == 0 ? "... its weight buffer" : "");
    const Expr tag_q = m.signal("issue_tag_" + ks + "_q", segs * tagw, Sign::Unsigned, k == 0 ? "... its tags" : "");
    const Expr last_q = m.signal("issue_last_" + ks + "_q", 1, Sign::Unsigned, k == 0 ? "... its chunk's end" : "");
    std::vector<Expr> tag_next;  // most significant first
    for (int sg = segs - 1; sg >= 0; --sg)
      tag_next.push_back(mux(d_valid[sg], d_tag.slice((sg + 1) * tagw - 1, sg * tagw),
                             tag_q.slice((sg + 1) * tagw - 1, sg * tagw)));
    align.flop(wbuf_q, d_wbuf, 0);
    align.flop(tag_q, concat(tag_next), 0);
    align.flop(last_q, d_last, 0);
    if (k + 1 < RA) {  // the tags' enables (the last stage's segments are issue_a_valid_o)
      const Expr valid_q = m.signal("issue_valid_" + ks + "_q", segs, Sign::Unsigned,
                                    k == 0 ? "an issue beat's segments, k + 1 edges on" : "");
      align.flop(valid_q, d_valid, 0);
      d_valid = valid_q;
    }
    d_wbuf = wbuf_q;
    d_tag = tag_q;
    d_last = last_q;
  }
  m.assign(issue_wbuf, d_wbuf);
  m.assign(issue_tag, d_tag);
  m.assign(issue_chunk_last, d_last);

  // The first m-tile's reads written out as they land, each pass's end with them.
  Expr pass_end = outer.beat_pass_last && issuing_first;
  Always& ends = m.always_ff(clk, rst_n, "the first m-tile's pass ends, delayed to their last reads' A");
  for (int k = 0; k < RA; ++k) {
    const Expr q = m.signal("save_end_" + std::to_string(k) + "_q", 1, Sign::Unsigned,
                            k == 0 ? "a first m-tile's pass ended k + 1 edges ago" : "");
    ends.flop(q, pass_end, 0);
    pass_end = q;
  }
  m.assign(save_valid, buf_rd_valid != zero(segs) || pass_end);
  m.assign(save_lanes, buf_rd_valid);
  m.assign(save_a, buf_rd_a);
  m.assign(save_pass_last, pass_end);
  return m;
}

vlog::Design RingEngineBlock::design(const HwConfig& c, int words, int chunk, int list_w, int depth) {
  check(c, words, chunk, list_w, depth);
  std::vector<std::pair<std::string, std::string>> params = RingFrontBlock::plan_params(words, chunk, list_w);
  params.emplace_back("RING_DEPTH", std::to_string(depth));
  vlog::Design d = empty_design(c, params);
  RingDetectBlock::add(d, c, words, chunk, list_w);
  RingPassesBlock::add(d, c, words, chunk, list_w);
  d.add(RingChunksBlock::generate(c, words, chunk, list_w, depth));
  d.add(RingWalkBlock::generate(c, RingFrontBlock::walk_words(chunk, list_w), chunk, list_w, depth));
  RingABuffersBlock::add(d, c, chunk);
  RingAReplayBlock::add(d, c, chunk);
  d.add(generate(c, words, chunk, list_w, depth, d.module("kld_ring_detect"), d.module("kld_ring_chunks"),
                 d.module("kld_ring_passes"), d.module("kld_ring_walk"), d.module("kld_ring_a_buffers"),
                 d.module("kld_ring_a_replay")));
  d.check();
  return d;
}

}  // namespace kaleido::hw
