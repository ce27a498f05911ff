#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

namespace {
constexpr const char* kChunkStateNames[] = {"StIdle", "StDims", "StArea", "StLeft", "StCut", "StOffer"};
enum ChunkState { kSeqIdle = 0, kDims = 1, kArea = 2, kLeft = 3, kCut = 4, kOffer = 5 };
}  // namespace

RingChunksBlock::RunPorts RingChunksBlock::RunPorts::declare(Module& m, const HwConfig& c) {
  const int tw_h = clog2(c.max_h + 1), tw_w = clog2(c.max_w + 1), mtcw = clog2(c.max_mt() + 1);
  RunPorts p;
  p.grid_t = m.input("grid_t_i", clog2(c.max_t + 1), Sign::Unsigned, "frames of the run, 1..MAX_T (held through it)");
  p.grid_h = m.input("grid_h_i", tw_h, Sign::Unsigned, "rows of a frame, 1..MAX_H");
  p.grid_w = m.input("grid_w_i", tw_w, Sign::Unsigned, "columns of a frame, 1..MAX_W");
  p.tile_h = m.input("tile_h_i", tw_h, Sign::Unsigned, "rows of a scan tile (0: the whole frame)");
  p.tile_w = m.input("tile_w_i", tw_w, Sign::Unsigned,
                     "columns of a scan tile (0: the whole frame); tiles, edge tiles too, whole rows of the "
                     "ring: multiples of GATHER_W");
  p.mtiles = m.input("mtiles_i", mtcw, Sign::Unsigned, "m-tiles of the run, 1..MAX_M / COLS");
  // The block mask (docs/hardware.md, "The ring's chunks"): query blocks are the scan tiles, key
  // blocks KB_MTS m-tiles of COLS output columns; a dropped pair's chunks are cut but not offered.
  p.mask_en = m.input("mask_en_i", 1, Sign::Unsigned, "drop the (tile, key block) pairs the mask clears");
  p.kb_mts = m.input("kb_mts_i", mtcw, Sign::Unsigned, "m-tiles of a key block, 1..MAX_M / COLS");
  p.mask_tile = m.output("mask_tile_o", clog2(max_tiles(c)), Sign::Unsigned,
                         "the mask read: the tile's number in scan order (every m-tile from 0)");
  p.mask_kb = m.output("mask_kb_o", clog2(c.max_mt()), Sign::Unsigned, "... and the m-tile's key block");
  p.mask_keep = m.input("mask_keep_i", 1, Sign::Unsigned,
                        "the pair's keep bit, for the mask_*_o of the edge before (a registered read)");
  return p;
}

std::vector<Connection> RingChunksBlock::RunPorts::connect() const {
  return {{"grid_t_i", grid_t},   {"grid_h_i", grid_h},       {"grid_w_i", grid_w},   {"tile_h_i", tile_h},
          {"tile_w_i", tile_w},   {"mtiles_i", mtiles},       {"mask_en_i", mask_en}, {"kb_mts_i", kb_mts},
          {"mask_tile_o", mask_tile}, {"mask_kb_o", mask_kb}, {"mask_keep_i", mask_keep}};
}

void RingChunksBlock::check(const HwConfig& c, int words, int chunk, int list_w, int depth) {
  RingListsBlock::check(chunk, list_w);
  const int gw = c.gather_w;
  if (gw < 1 || (gw & (gw - 1)) != 0)
    throw ConfigError("gather-w", std::to_string(gw),
                      "the chunk sequencer counts ring rows of GATHER_W slots by shifts: a power of two");
  if (c.max_w < gw)
    throw ConfigError("max-w", std::to_string(c.max_w),
                      "at least GATHER_W (" + std::to_string(gw) + "): a tile row is whole ring rows");
  if (chunk % gw != 0)
    throw ConfigError("chunks", std::to_string(chunk), "a multiple of GATHER_W (" + std::to_string(gw) + ")");
  if (depth % gw != 0 || depth < 2 * chunk)
    throw ConfigError("ring depth", std::to_string(depth),
                      "a multiple of GATHER_W (" + std::to_string(gw) + ") and at least two chunks (" +
                          std::to_string(2 * chunk) + ")");
  if (words < 2) throw ConfigError("code words", std::to_string(words), "the code memory holds at least two words");
}

Module RingChunksBlock::generate(const HwConfig& c, int words, int chunk, int list_w, int depth) {
  check(c, words, chunk, list_w, depth);
  const int gw = c.gather_w, gb = RingListsBlock::lane_bits(gw), lb = RingListsBlock::lane_bits(list_w);
  const int tw_h = clog2(c.max_h + 1), tw_w = clog2(c.max_w + 1);
  const int aw = clog2(c.max_h * c.max_w + 1), pw = clog2(static_cast<int>(c.max_tokens()) + 1);
  const int nw = clog2(chunk + 1), rows = depth / gw, rw = clog2(rows), cw = clog2(words);
  const int ww = clog2(RingListsBlock::rows(chunk, list_w) + 1), mtw = clog2(c.max_mt()), mtcw = clog2(c.max_mt() + 1);
  const int tiw = clog2(max_tiles(c));
  Module m("kld_ring_chunks",
           "Chunk sequencer of the window-bounded ring (docs/hardware.md, \"The ring's chunks\"): a "
           "run's scan, tile by tile (every frame of a tile, rows of tile_w), cut into chunks of at most "
           "CHUNK positions that never cross a tile, offered in order once per m-tile with what the "
           "blocks after it need: the chunk's code words (first row, count, last word's lanes), its "
           "positions, the ring row of its first position (the run's position count, mod RING_DEPTH, "
           "in rows of GATHER_W slots) and its tile's neighbour distances in rows. With a block mask, "
           "the chunks of a dropped (tile, key block) pair are cut but not offered, except in the first "
           "m-tile: it offers every chunk, a dropped one marked (chunk_masked_o), since the A the first "
           "m-tile's issue reads is saved for every later m-tile");
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr start = m.input("start_i", 1, Sign::Unsigned, "a run begins (taken while idle)");
  const RunPorts run = RunPorts::declare(m, c);
  const Expr grid_t = run.grid_t, grid_h = run.grid_h, grid_w = run.grid_w, tile_h = run.tile_h, tile_w = run.tile_w;
  const Expr mtiles = run.mtiles, mask_en = run.mask_en, kb_mts = run.kb_mts, mask_keep = run.mask_keep;
  const Expr busy = m.output("busy_o", 1, Sign::Unsigned, "the run's chunks are being offered");
  const Expr valid = m.output("chunk_valid_o", 1, Sign::Unsigned, "a chunk is offered, held until taken");
  const Expr ready = m.input("chunk_ready_i", 1, Sign::Unsigned, "it is taken at this edge");
  const RingCodesBlock::ChunkWordPorts out = RingCodesBlock::ChunkWordPorts::declare(m, "chunk", true, words, chunk,
                                                                                     list_w);
  const Expr out_len = m.output("chunk_len_o", nw, Sign::Unsigned, "its positions n, 1..CHUNK");
  const Expr out_slot_row = m.output("chunk_slot_row_o", rw, Sign::Unsigned,
                                     "ring row of its first position: (positions before it in the run) / "
                                     "GATHER_W mod RING_DEPTH / GATHER_W");
  const Expr out_off_h = m.output("chunk_off_h_o", tw_w - gb, Sign::Unsigned,
                                  "rows from a position to its h neighbour: tile width / GATHER_W");
  const Expr out_off_t =
      m.output("chunk_off_t_o", aw - gb, Sign::Unsigned, "... to its t neighbour: tile area / GATHER_W");
  const Expr out_mt = m.output("chunk_mt_o", mtw, Sign::Unsigned, "its m-tile");
  const Expr out_last = m.output("chunk_last_o", 1, Sign::Unsigned, "the run's last chunk");
  const Expr out_masked = m.output("chunk_masked_o", 1, Sign::Unsigned,
                                   "the mask drops its pair: a first m-tile's chunk, offered so that its A is "
                                   "saved for the later m-tiles; its outputs are discarded");

  std::vector<Expr> st;
  for (int k : {kSeqIdle, kDims, kArea, kLeft, kCut, kOffer})
    st.push_back(
        m.localparam(kChunkStateNames[k], 3, static_cast<uint64_t>(k), k == kSeqIdle ? "sequencer states" : ""));
  const Expr state_q = m.signal("state_q", 3);
  const Expr h0_q = m.signal("h0_q", tw_h, Sign::Unsigned, "first row of the tile");
  const Expr w0_q = m.signal("w0_q", tw_w, Sign::Unsigned, "first column of the tile");
  const Expr th_q = m.signal("th_q", tw_h, Sign::Unsigned, "the tile's rows (an edge tile's fewer)");
  const Expr tw_q = m.signal("tw_q", tw_w, Sign::Unsigned, "the tile's columns");
  const Expr area_q = m.signal("area_q", aw, Sign::Unsigned, "the tile's positions in a frame");
  const Expr left_q =
      m.signal("left_q", pw, Sign::Unsigned, "positions of the tile not yet taken, the offered chunk's included");
  const Expr mt_q = m.signal("mt_q", mtw, Sign::Unsigned, "the m-tile");
  const Expr row_q = m.signal("row_q", cw, Sign::Unsigned, "code row of the offered chunk's first word");
  const Expr slot_row_q = m.signal("slot_row_q", rw, Sign::Unsigned, "ring row of its first position");
  const Expr end_q = m.signal("end_q", 1, Sign::Unsigned, "the offered chunk ends its tile");
  const Expr len_q = m.signal("len_q", nw, Sign::Unsigned, "its positions");
  const Expr words_q = m.signal("words_q", ww, Sign::Unsigned, "its code words");
  const Expr lanes_q = m.signal("lanes_q", list_w, Sign::Unsigned, "lanes of its last word");
  const Expr st_idle = m.wire("st_idle", state_q == st[kSeqIdle]);
  const Expr st_offer = m.wire("st_offer", state_q == st[kOffer]);
  const Expr st_dims = m.wire("st_dims", state_q == st[kDims]);

  // The chunk cut (in StCut, then offered from registers): the tile's next CHUNK positions, or
  // what is left of it.
  const int cmpw = std::max(pw, nw);
  const Expr tile_end = m.wire("tile_end", zext(left_q, cmpw) <= constant(cmpw, static_cast<uint64_t>(chunk)),
                               "the chunk cut ends its tile");
  const Expr len = m.wire("len", mux(tile_end, resize(left_q, nw), constant(nw, static_cast<uint64_t>(chunk))),
                          "the chunk cut's positions");
  // Lanes of its last word: lane l while l <= (n - 1) mod LIST_W (all at LIST_W 1).
  std::vector<Expr> lanes;
  const Expr last_lane =
      lb > 0 ? m.wire("last_lane", len.slice(lb - 1, 0) - constant(lb, 1), "(n - 1) mod LIST_W") : Expr();
  for (int l = list_w - 1; l >= 0; --l) lanes.push_back(l == 0 ? bit(true) : last_lane >= static_cast<int64_t>(l));
  // ceil(n / LIST_W): its whole words, one more for a partial one.
  const Expr whole_words = m.wire("whole_words", len.slice(nw - 1, lb), "n / LIST_W, rounded down");
  const Expr words_of = m.wire(
      "words_of", lb > 0 ? zext(whole_words, ww) + zext(reduce_or(len.slice(lb - 1, 0)), ww) : zext(whole_words, ww),
      "its code words");
  // Whole rows of the ring (CHUNK, tile widths and RING_DEPTH multiples of GATHER_W): the next
  // chunk's ring row, wrapped once at most (a chunk is at most half the ring).
  const Expr len_rows = m.wire("len_rows", len_q.slice(nw - 1, gb), "the offered chunk's ring rows");
  const Expr slot_sum = m.wire("slot_sum", zext(slot_row_q, rw + 1) + resize(len_rows, rw + 1),
                               "the next chunk's ring row, before the wrap");
  const uint64_t rows_low = static_cast<uint64_t>(rows) & ((uint64_t{1} << rw) - 1);  // rows mod 2^rw
  const Expr slot_next = m.wire(
      "slot_next",
      mux(slot_sum >= static_cast<int64_t>(rows), trunc(slot_sum, rw) - constant(rw, rows_low), trunc(slot_sum, rw)),
      "the next chunk's ring row");

  // Next tile: the next column of tiles, else the next row of tiles, else the next m-tile.
  const Expr tile_w_eff = m.wire("tile_w_eff", mux(tile_w == 0, grid_w, tile_w), "tile_w_i, the frame's for 0");
  const Expr tile_h_eff = m.wire("tile_h_eff", mux(tile_h == 0, grid_h, tile_h), "tile_h_i, the frame's for 0");
  const Expr w_next =
      m.wire("w_next", zext(w0_q, tw_w + 1) + zext(tile_w_eff, tw_w + 1), "first column of the tile to the right");
  const Expr h_next =
      m.wire("h_next", zext(h0_q, tw_h + 1) + zext(tile_h_eff, tw_h + 1), "first row of the tile below");
  // Registered with the tile's size (its place is fixed by then): no path from the run's inputs
  // through the tile's neighbours into the m-tile count.
  const Expr row_more = m.signal("row_more_q", 1, Sign::Unsigned, "a tile to the right");
  const Expr col_more = m.signal("col_more_q", 1, Sign::Unsigned, "a row of tiles below");

  const Expr mt_next = m.wire("mt_next", zext(mt_q, mtcw) + constant(mtcw, 1), "the next m-tile");
  const Expr mt_more = m.wire("mt_more", mt_next < mtiles, "an m-tile after this one");
  const Expr last = m.wire("last", end_q && !row_more && !col_more && !mt_more, "the offered chunk is the run's last");
  const Expr keep_q = m.signal("keep_q", 1, Sign::Unsigned,
                               "the tile's chunks are offered (its pair kept, or the first m-tile)");
  const Expr masked_q = m.signal("masked_q", 1, Sign::Unsigned, "the mask drops the tile's pair");
  const Expr take = m.wire("take", st_offer && (ready || !keep_q),
                           "the chunk is taken at this edge, or dropped (in its first cycle ready)");
  const Expr take_kept = m.wire("take_kept", st_offer && keep_q && ready, "an offered chunk is taken");
  const Expr next_tile = m.wire("next_tile", take && end_q, "the tile's last chunk is taken");
  const Expr next_mt = m.wire("next_mt", next_tile && !row_more && !col_more, "... and the m-tile's");

  // The tile's size: its rows and columns (the frame's edge cuts them), then its area, then its
  // positions, a registered step each: one multiplier of small operands per step.
  const Expr h_left = m.wire("h_left", grid_h - h0_q, "rows from the tile's first to the frame's end");
  const Expr w_left = m.wire("w_left", grid_w - w0_q, "columns ...");
  const Expr state_d = m.signal("state_d", 3, Sign::Unsigned, "the next state");
  Block& next = m.always_comb("the next state: a tile's size in three steps, then its chunks cut and offered");
  next.assign(state_d, state_q);
  CaseStmt& by_state = next.case_(state_q);
  by_state.item(st[kSeqIdle]).if_(start).then_().assign(state_d, st[kDims]);
  by_state.item(st[kDims]).assign(state_d, st[kArea]);
  by_state.item(st[kArea]).assign(state_d, st[kLeft]);
  by_state.item(st[kLeft]).assign(state_d, st[kCut]);
  by_state.item(st[kCut]).assign(state_d, st[kOffer]);
  // A taken chunk: the tile's next, else the next tile's size, else (the run's last) idle.
  IfStmt& taken = by_state.item(st[kOffer]).if_(take);
  IfStmt& tile_done = taken.then_().if_(end_q);
  tile_done.then_().assign(state_d, mux(last, st[kSeqIdle], st[kDims]));
  tile_done.else_().assign(state_d, st[kCut]);
  by_state.default_().assign(state_d, st[kSeqIdle]);
  Always& seq = m.always_ff(clk, rst_n, "the scan: tiles, their sizes, the chunks offered");
  seq.flop(state_q, state_d, 0);
  const Expr begin = m.wire("run_take", st_idle && start, "a run is taken at this edge");
  seq.flop(w0_q, mux(begin, zero(tw_w), mux(next_tile, mux(row_more, trunc(w_next, tw_w), zero(tw_w)), w0_q)), 0);
  seq.flop(h0_q,
           mux(begin, zero(tw_h), mux(next_tile && !row_more, mux(col_more, trunc(h_next, tw_h), zero(tw_h)), h0_q)),
           0);
  seq.flop(mt_q, mux(begin, zero(mtw), mux(next_mt, trunc(mt_next, mtw), mt_q)), 0);
  seq.flop(row_more, mux(st_dims, w_next < zext(grid_w, tw_w + 1), row_more), 0);
  seq.flop(col_more, mux(st_dims, h_next < zext(grid_h, tw_h + 1), col_more), 0);
  seq.flop(th_q, mux(st_dims, mux(tile_h_eff < h_left, tile_h_eff, h_left), th_q), 0);
  seq.flop(tw_q, mux(st_dims, mux(tile_w_eff < w_left, tile_w_eff, w_left), tw_q), 0);
  // Products at the width of their largest value (MAX_H x MAX_W, MAX_T x MAX_H x MAX_W).
  seq.flop(area_q, mux(state_q == st[kArea], resize(th_q, aw) * resize(tw_q, aw), area_q), 0);
  seq.flop(
      left_q,
      mux(state_q == st[kLeft], resize(grid_t, pw) * resize(area_q, pw), mux(take, left_q - resize(len_q, pw), left_q)),
      0);
  seq.flop(row_q, mux(begin || next_mt, zero(cw), mux(take, row_q + resize(words_q, cw), row_q)), 0);
  const Expr st_cut = state_q == st[kCut];
  seq.flop(end_q, mux(st_cut, tile_end, end_q), 0);
  seq.flop(len_q, mux(st_cut, len, len_q), 0);
  seq.flop(words_q, mux(st_cut, words_of, words_q), 0);
  seq.flop(lanes_q, mux(st_cut, concat(lanes), lanes_q), 0);
  seq.flop(slot_row_q, mux(begin, zero(rw), mux(take_kept, slot_next, slot_row_q)), 0);
  // The mask's read: the tile's number and the key block, counted in the tile's first step
  // (StDims, from flags the takes set, so no take drives an adder), read through StArea, the keep
  // bit back in StLeft and registered there.
  const Expr tile_q = m.signal("tile_q", tiw, Sign::Unsigned, "the tile's number in scan order");
  const Expr kbm_q = m.signal("kbm_q", mtw, Sign::Unsigned, "the m-tile's place in its key block");
  const Expr kb_q = m.signal("kb_q", mtw, Sign::Unsigned, "the m-tile's key block");
  const Expr first_q = m.signal("first_q", 1, Sign::Unsigned, "the next tile is its m-tile's first");
  const Expr new_mt_q = m.signal("new_mt_q", 1, Sign::Unsigned, "the next tile begins an m-tile after the first");
  const Expr kb_end = m.wire("kb_end", zext(kbm_q, mtcw) + constant(mtcw, 1) >= kb_mts, "the key block's last m-tile");
  const Expr step_kb = m.wire("step_kb", st_dims && new_mt_q, "a new m-tile's first tile begins: count it");
  seq.flop(first_q, mux(begin || next_mt, bit(true), mux(st_dims, bit(false), first_q)), 0);
  seq.flop(new_mt_q, mux(begin, bit(false), mux(next_mt, bit(true), mux(st_dims, bit(false), new_mt_q))), 0);
  seq.flop(tile_q, mux(st_dims, mux(first_q, zero(tiw), tile_q + constant(tiw, 1)), tile_q), 0);
  seq.flop(kbm_q, mux(begin || (step_kb && kb_end), zero(mtw), mux(step_kb, kbm_q + constant(mtw, 1), kbm_q)), 0);
  seq.flop(kb_q, mux(begin, zero(mtw), mux(step_kb && kb_end, kb_q + constant(mtw, 1), kb_q)), 0);
  const Expr dropped = m.wire("mask_drops", mask_en && !mask_keep, "the mask drops the tile's pair");
  seq.flop(keep_q, mux(state_q == st[kLeft], !dropped || mt_q == zero(mtw), keep_q), 0);
  seq.flop(masked_q, mux(state_q == st[kLeft], dropped, masked_q), 0);
  m.assign(run.mask_tile, tile_q);
  m.assign(run.mask_kb, kb_q);

  m.assign(busy, !st_idle);
  m.assign(valid, st_offer && keep_q);
  m.assign(out.row, row_q);
  m.assign(out.words, words_q);
  m.assign(out.lanes, lanes_q);
  m.assign(out_len, len_q);
  m.assign(out_slot_row, slot_row_q);
  m.assign(out_off_h, tw_q.slice(tw_w - 1, gb));
  m.assign(out_off_t, area_q.slice(aw - 1, gb));
  m.assign(out_mt, mt_q);
  m.assign(out_last, last);
  m.assign(out_masked, masked_q);
  return m;
}

vlog::Design RingChunksBlock::design(const HwConfig& c, int words, int chunk, int list_w, int depth) {
  check(c, words, chunk, list_w, depth);
  return RingChunksBlock::plan_design(c, words, chunk, list_w, depth, generate(c, words, chunk, list_w, depth));
}

vlog::Design RingChunksBlock::plan_design(const HwConfig& c, int words, int chunk, int list_w, int depth,
                                          vlog::Module top) {
  vlog::Design d = empty_design(c, {{"CODE_WORDS", std::to_string(words)},
                                    {"CHUNK", std::to_string(chunk)},
                                    {"LIST_W", std::to_string(list_w)},
                                    {"RING_DEPTH", std::to_string(depth)}});
  d.add(std::move(top));
  d.check();
  return d;
}

}  // namespace kaleido::hw
