// Block test of kld_ring_chunks (the ring's chunk sequencer): `iterations` runs, each on a random
// grid (T, H, W up to MAX_*, W a multiple of GATHER_W), random scan tiles (0, the whole frame, or
// any height; any width that is a multiple of GATHER_W, so edge tiles are too; every eighth run
// whole frames) and 1 to MAX_M / COLS m-tiles, with idle cycles between runs and start_i also
// raised at random while a run is busy (to be ignored). The consumer takes an offered chunk at
// random cycles.
//
// What is checked, every cycle, against the model's cut of the scan (hw::ring_chunks, written
// from golden/scan.hpp's ScanOrder, not from the RTL): the run's steps are its chunks in order,
// once per m-tile; while a chunk is offered, its code row (the words of the m-tile's chunks before
// it, a chunk starting a word), words, last word's lanes, positions, ring row (the positions of the
// run before it / GATHER_W, mod RING_DEPTH / GATHER_W), m-tile, last flag, and its tile's h and t
// distances in rows (from the tile of its first position; checked against ScanOrder's reference
// distances inside the chunk). `chunk_valid_o` is high exactly from RingChunksBlock::kTileEdges
// edges after the edge that took the run or a tile's last chunk, and from kChunkEdges after a take
// inside a tile; `busy_o` from the run's take to its last chunk's. Every third run has a random
// block mask (ring_common.hpp: key blocks of 1 to all the m-tiles, pairs dropped at random, the
// first tile in every key block), read through mask_tile_o / mask_kb_o a cycle ahead like a
// registered memory: a dropped chunk is never offered and is passed over at the edge it would
// have been offered at, except in the first m-tile, which offers it marked (chunk_masked_o); the
// ring rows count the offered chunks only.
// The run fails without edge tiles, whole-frame tiles, a ring row that wraps, a short last chunk
// of a tile, several m-tiles, or (with masks) a tile whose chunks are all dropped.
#include <algorithm>

#include "Vkld_ring_chunks.h"
#include "golden/config.hpp"
#include "golden/scan.hpp"
#include "hw/blocks.hpp"
#include "hw/ring_plan.hpp"
#include "ring_common.hpp"
#include "unit_common.hpp"

namespace {

using kaleido::hw::RingChunksBlock;
using kaleido::hw::RingListsBlock;
using namespace kld_unit;
using kld_ring::Step;

int run(const Job& job) {
  const kaleido::hw::HwConfig& c = job.hw;
  const int chunk = job.raw.at("chunk").get<int>(), LW = job.raw.at("list_w").get<int>();
  const int words = job.raw.at("words").get<int>(), depth = job.raw.at("ring_depth").get<int>();
  const int GW = c.gather_w, rows = depth / GW;
  Vkld_ring_chunks dut;
  Clock<Vkld_ring_chunks> clock(dut);
  Checker chk(job);
  kaleido::Rng rng(job.seed);

  dut.rst_ni = 0;
  dut.start_i = 0;
  dut.chunk_ready_i = 0;
  clock.edge();
  dut.rst_ni = 1;

  // The mask memory's registered read (ring_common.hpp): the pair named at each edge, back after it.
  kld_ring::BlockMask mask;
  auto tick = [&] {
    clock.settle();
    const uint64_t bit = kld_ring::mask_read(mask, rng, dut.mask_tile_o, dut.mask_kb_o);
    clock.edge();
    dut.mask_keep_i = bit;
  };
  int64_t masked_runs = 0, dropped = 0, dropped_tiles = 0, masked_chunks = 0;
  int64_t runs_with_edge_tiles = 0, whole_frame_runs = 0, wraps = 0, short_chunks = 0, multi_mt = 0, steps_seen = 0;
  int64_t ignored_starts = 0;
  for (int64_t run_index = 0; run_index < job.iterations; ++run_index) {
    kaleido::ReuseConfig cfg;
    cfg.grid.t = static_cast<int>(rng.range(1, c.max_t));
    cfg.grid.h = static_cast<int>(rng.range(1, c.max_h));
    cfg.grid.w = static_cast<int>(rng.range(1, c.max_w / GW)) * GW;
    // Every eighth run of whole frames (tiles 0 x 0); the others each side 0 one time in four.
    const bool whole = run_index % 8 == 0;
    cfg.tile_h = whole || rng.range(0, 3) == 0 ? 0 : static_cast<int>(rng.range(1, cfg.grid.h));
    cfg.tile_w = whole || rng.range(0, 3) == 0 ? 0 : static_cast<int>(rng.range(1, cfg.grid.w / GW)) * GW;
    // A masked run has several m-tiles where it can: the first offers every chunk.
    const int mtiles = static_cast<int>(rng.range(run_index % 3 == 1 ? std::min(2, c.max_mt()) : 1, c.max_mt()));
    const int th = cfg.tile_h_eff(), tw = cfg.tile_w > 0 ? cfg.tile_w : cfg.grid.w;
    if (cfg.grid.h % th != 0 || cfg.grid.w % tw != 0) ++runs_with_edge_tiles;
    if (cfg.tile_h == 0 && cfg.tile_w == 0) ++whole_frame_runs;
    if (mtiles > 1) ++multi_mt;

    // Every third run a random block mask (its first tile dropped in every key block).
    mask = {};
    if (run_index % 3 == 1) {
      mask = kld_ring::random_mask(rng, kaleido::hw::ring_chunks(cfg, chunk).back().block + 1, mtiles);
      ++masked_runs;
    }
    // The run's steps: every chunk of the scan, once per m-tile, some dropped by the mask.
    const std::vector<Step> steps = kld_ring::run_steps(cfg, chunk, LW, GW, rows, mtiles, words, mask);
    int64_t base = 0;
    for (const Step& s : steps) {
      short_chunks += s.len < chunk;
      base += s.kept ? s.len : 0;
      dropped += !s.kept;
      dropped_tiles += !s.kept && s.ends_tile;
      masked_chunks += s.masked;
    }
    if (base / GW >= rows) ++wraps;

    // Idle, then the run's registers and start_i.
    for (int64_t i = rng.range(0, 3); i > 0; --i) {
      dut.start_i = 0;
      clock.settle();
      chk.equal(dut.busy_o, 0, "busy_o between runs, cycle " + std::to_string(clock.cycle()));
      chk.equal(dut.chunk_valid_o, 0, "chunk_valid_o between runs, cycle " + std::to_string(clock.cycle()));
      tick();
    }
    kld_ring::drive_run(dut, cfg, mtiles, mask, rng.range(0, c.max_mt()));
    dut.start_i = 1;
    clock.settle();
    chk.equal(dut.busy_o, 0, "busy_o before the run, cycle " + std::to_string(clock.cycle()));
    tick();

    // From the run's take: the first chunk is due kTileEdges edges on; a chunk inside its tile
    // kChunkEdges after the one before is taken, a tile's first kTileEdges after the last tile's last.
    int64_t due = clock.cycle() + RingChunksBlock::kTileEdges;
    size_t next = 0;
    while (next < steps.size()) {
      const bool stray_start = rng.range(0, 4) == 0;
      dut.start_i = stray_start;
      const bool take = rng.range(0, 2) != 0;
      dut.chunk_ready_i = take;
      clock.settle();
      const std::string when = "cycle " + std::to_string(clock.cycle()) + ", step " + std::to_string(next) + " of " +
                               std::to_string(steps.size()) + " (run " + std::to_string(run_index) + ")";
      chk.equal(dut.busy_o, 1, when + ": busy_o");
      const bool due_now = clock.cycle() >= due, offered = due_now && steps[next].kept;
      chk.equal(dut.chunk_valid_o, offered, when + ": chunk_valid_o");
      if (offered) {
        const Step& s = steps[next];
        chk.equal(dut.chunk_row_o, s.row, when + ": chunk_row_o");
        chk.equal(dut.chunk_words_o, s.words, when + ": chunk_words_o");
        chk.equal(dut.chunk_lanes_o, s.lanes, when + ": chunk_lanes_o");
        chk.equal(dut.chunk_len_o, s.len, when + ": chunk_len_o");
        chk.equal(dut.chunk_slot_row_o, s.slot_row, when + ": chunk_slot_row_o");
        chk.equal(dut.chunk_off_h_o, s.off_h, when + ": chunk_off_h_o");
        chk.equal(dut.chunk_off_t_o, s.off_t, when + ": chunk_off_t_o");
        chk.equal(dut.chunk_mt_o, s.mt, when + ": chunk_mt_o");
        chk.equal(dut.chunk_last_o, s.last, when + ": chunk_last_o");
        chk.equal(dut.chunk_masked_o, s.masked, when + ": chunk_masked_o");
        if (stray_start) ++ignored_starts;
      }
      tick();
      // A dropped chunk is passed over at the edge it would have been offered at.
      if (due_now && (take || !steps[next].kept)) {
        steps_seen += steps[next].kept;
        due = clock.cycle() + (steps[next].ends_tile ? RingChunksBlock::kTileEdges : RingChunksBlock::kChunkEdges);
        ++next;
      }
    }
    dut.start_i = 0;
    clock.settle();
    chk.equal(dut.busy_o, 0, "busy_o after run " + std::to_string(run_index));
  }
  if (runs_with_edge_tiles == 0) chk.fail("no run with edge tiles");
  if (whole_frame_runs == 0) chk.fail("no run of whole frames");
  if (wraps == 0) chk.fail("no ring row wrapped");
  if (short_chunks == 0) chk.fail("no tile ended in a short chunk");
  if (multi_mt == 0) chk.fail("no run of several m-tiles");
  if (ignored_starts == 0) chk.fail("no start_i raised during a run");
  if (masked_runs > 0 && dropped_tiles == 0) chk.fail("no tile's chunks all dropped by a mask");
  if (masked_runs > 0 && masked_chunks == 0) chk.fail("no chunk offered masked in a first m-tile");
  dut.final();
  return chk.finish("kld_ring_chunks, grids up to " + std::to_string(c.max_t) + "x" + std::to_string(c.max_h) + "x" +
                    std::to_string(c.max_w) + ", chunks of up to " + std::to_string(chunk) + ", LIST_W " +
                    std::to_string(LW) + ", GATHER_W " + std::to_string(GW) + ", ring of " + std::to_string(depth) +
                    " slots, " + std::to_string(job.iterations) + " runs (" + std::to_string(runs_with_edge_tiles) +
                    " with edge tiles, " + std::to_string(whole_frame_runs) + " of whole frames, " +
                    std::to_string(wraps) + " wrapping the ring), " + std::to_string(steps_seen) + " chunks (" +
                    std::to_string(short_chunks) + " short; " + std::to_string(dropped) +
                    " more dropped by the masks of " + std::to_string(masked_runs) + " runs, " +
                    std::to_string(masked_chunks) + " offered masked), " +
                    std::to_string(clock.cycle()) + " cycles");
}

}  // namespace

int main(int argc, char** argv) { return harness_main(argc, argv, run); }
