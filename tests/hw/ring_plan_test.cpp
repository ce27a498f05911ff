// The ring architecture's model (hw/ring_plan.hpp): its output against the golden model's reuse
// product (written independently: partials of each pair's root, gen/golden/gemm.cpp), the least
// ring depth, the memories' formulas and the schedule's cycles, each worked out by hand below.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/process.hpp"
#include "golden/gemm.hpp"
#include "golden/quant.hpp"
#include "golden/reuse.hpp"
#include "golden/threshold.hpp"
#include "golden/workload.hpp"
#include "hw/ring_plan.hpp"
#include "hw_test_util.hpp"

namespace kaleido::hw {
namespace {

ReuseConfig workload_config(Grid grid, int k, int m, int tile_h = 0, int tile_w = 0) {
  ReuseConfig cfg;
  cfg.grid = grid;
  cfg.channels = k;
  cfg.out_cols = m;
  cfg.group_w = 8;
  cfg.tile_h = tile_h;
  cfg.tile_w = tile_w;
  cfg.tau.assign(static_cast<size_t>(k / 8), 0);
  return cfg;
}

// Every pair computes (its own root); the test then marks the pairs it wants reused.
IntReuse all_compute(const ReuseConfig& cfg) {
  IntReuse r;
  r.groups = cfg.groups();
  r.decisions.resize(static_cast<size_t>(cfg.grid.tokens() * cfg.groups()));
  for (int32_t tok = 0; tok < cfg.grid.tokens(); ++tok)
    for (int g = 0; g < cfg.groups(); ++g) r.decisions[static_cast<size_t>(tok * cfg.groups() + g)].root = tok;
  return r;
}

TEST(RingPlan, OutputThroughTheRingIsTheGoldenModels) {
  const HwConfig hw = default_config_8x8();
  struct Case {
    Grid grid;
    int tile_h, tile_w;
    double target;
  };
  // Odd grids, scan tiles (edge tiles clipped), M = 20 (a partial last m-tile), reuse from none to
  // most: long t-chains whose roots leave the ring are resolved through it.
  const Case cases[] = {{{3, 6, 5}, 0, 0, 0.0}, {{3, 6, 5}, 0, 0, 0.5}, {{4, 6, 5}, 0, 0, 0.95},
                        {{4, 7, 6}, 3, 4, 0.8}};
  for (const Case& c : cases) {
    ReuseConfig cfg = workload_config(c.grid, 32, 20, c.tile_h, c.tile_w);
    SyntheticSpec spec;
    spec.grid = c.grid;
    spec.channels = 32;
    spec.static_w = c.grid.w / 2;
    const IntMatrix a = quantize(make_latent(spec), 8).q;
    const IntMatrix b = make_int_weights(32, 20, 8, 7);
    cfg.tau = calibrate_reuse_ratio(cfg, a, c.target).tau;
    const IntReuse reuse = run_reuse(cfg, a);
    const WideMatrix golden = reuse_output(cfg, a, b, reuse);
    for (const int chunk : {1, 7, 16, static_cast<int>(c.grid.tokens())}) {
      for (const int lead : {1, 3}) {
        SCOPED_TRACE("grid " + std::to_string(c.grid.t) + "x" + std::to_string(c.grid.h) + "x" +
                     std::to_string(c.grid.w) + ", reuse " + std::to_string(reuse.counters.reuse_ratio()) +
                     ", chunk " + std::to_string(chunk) + ", lead " + std::to_string(lead));
        const WideMatrix out = ring_output(hw, cfg, a, b, reuse, {chunk, lead}, ring_depth(cfg, {chunk, lead}));
        EXPECT_EQ(out.data, golden.data);
      }
    }
    if (c.target > 0.4) {
      EXPECT_GT(reuse.counters.reuse_ratio(), 0.3);
    }
  }
}

// Grid 3x2x2: the t reference is 4 positions back (W = 4). Chunks of C = 2: chunk 4 (positions 8,
// 9) is gathered while chunk 5 (10, 11) is written, so the ring holds positions 4..11: W + 2C = 8
// slots. Position 8 reuses position 4 along t; with 7 slots position 11's write lands on slot 4
// first.
TEST(RingPlan, AShallowerRingReadsAnOverwrittenSlot) {
  const HwConfig hw = default_config_8x8();
  const ReuseConfig cfg = workload_config({3, 2, 2}, 16, 8);
  EXPECT_EQ(ring_window(cfg), 4);
  EXPECT_EQ(ring_depth(cfg, {2, 1}), 8);
  IntReuse r = all_compute(cfg);
  PairDecision& d = r.decisions[static_cast<size_t>(8 * 2 + 0)];  // token 8, group 0
  d.kind = PairKind::Reuse;
  d.axis = Axis::T;
  d.ref = 4;
  d.root = 4;
  const IntMatrix a = quantize(make_latent(SyntheticSpec{{3, 2, 2}, 16}), 8).q;
  const IntMatrix b = make_int_weights(16, 8, 8, 3);
  EXPECT_EQ(ring_output(hw, cfg, a, b, r, {2, 1}, 8).data, reuse_output(cfg, a, b, r).data);
  EXPECT_THROW(ring_output(hw, cfg, a, b, r, {2, 1}, 7), InternalError);
  // Lead 2 with two m-tiles (M = 16): chunk 4 is gathered after chunks 5 and 6 (m-tile 1's
  // positions 0 and 1, flattened 12 and 13) are written: W + 3C = 10 slots; with 9, 13 lands on 4.
  const ReuseConfig two = workload_config({3, 2, 2}, 16, 16);
  const IntMatrix b2 = make_int_weights(16, 16, 8, 3);
  EXPECT_EQ(ring_depth(two, {2, 2}), 10);
  EXPECT_EQ(ring_output(hw, two, a, b2, r, {2, 2}, 10).data, reuse_output(two, a, b2, r).data);
  EXPECT_THROW(ring_output(hw, two, a, b2, r, {2, 2}, 9), InternalError);
  // Without the reuse no slot is read twice, so 2C slots suffice.
  EXPECT_NO_THROW(ring_output(hw, cfg, a, b, all_compute(cfg), {2, 1}, 4));
}

// The built merge takes a beat as a whole row of GATHER_W slots: every tile width, the edge tile's
// and the chunk must be multiples of it. The 480p head's tiles of 16 are 16 and 4 wide (52 = 3 x 16
// + 4).
TEST(RingPlan, TheBuiltMergeTakesTileWidthsAndChunksInWholeRows) {
  ReuseConfig cfg = workload_config({21, 30, 52}, 128, 64);
  cfg.tile_h = cfg.tile_w = 16;
  EXPECT_EQ(ring_rtl_misfit(cfg, {256, 1}, 4), "");
  EXPECT_EQ(ring_rtl_misfit(cfg, {256, 1}, 1), "");
  EXPECT_NE(ring_rtl_misfit(cfg, {256, 1}, 8).find("edge tiles 4"), std::string::npos);  // 4 not a multiple of 8
  EXPECT_NE(ring_rtl_misfit(cfg, {254, 1}, 4).find("chunks (254)"), std::string::npos);
  cfg.tile_w = 5;  // widths 5 and 2
  EXPECT_NE(ring_rtl_misfit(cfg, {256, 1}, 2).find("scan-tile widths (5, edge tiles 2)"), std::string::npos);
  cfg.tile_w = 0;  // the whole frame, 52 wide
  EXPECT_EQ(ring_rtl_misfit(cfg, {256, 1}, 4), "");
  EXPECT_NE(ring_rtl_misfit(cfg, {256, 1}, 8).find("scan-tile widths (52)"), std::string::npos);
}

// 8x8 array (COLS 8, GROUP_W 8, DATA_W 8: PARTIAL_W = 16 + clog2(8) = 19), grid 2x4x4 (N = 32,
// W = 16), K = 32 (G = 4), chunk 4.
TEST(RingPlan, MemoriesFollowTheirFormulas) {
  const HwConfig hw = default_config_8x8();
  const ReuseConfig cfg = workload_config({2, 4, 4}, 32, 16);
  const std::vector<SramRole> roles = ring_storage(hw, cfg, {4, 1, 4});
  ASSERT_EQ(roles.size(), 9u);
  EXPECT_EQ(roles[0].bits(), 4 * 8 * (16 + 8) * 19);  // ring: G*COLS x (W + 2C) x PARTIAL_W
  EXPECT_EQ(roles[1].bits(), 32 * 2 * 4);             // codes: N x 2G, the chunks whole words
  // Otherwise every chunk starts a word: N = 40 in chunks of 20, LIST_W 8, is 2 x 3 words of 8 x 2G.
  EXPECT_EQ(ring_storage(hw, workload_config({2, 4, 5}, 32, 16), {20, 1, 8})[1].bits(), 2 * 3 * 8 * 2 * 4);
  EXPECT_EQ(roles[2].bits(), 16 * 32 * 8);            // Ahat window: W x K*DATA_W
  EXPECT_EQ(roles[3].bits(), 2 * 4 * 32 * 8);         // A chunks: 2 x C x K*DATA_W
  EXPECT_EQ(roles[4].bits(), 2 * 4 * 4 * 2);          // lists: 2G x C x clog2(C), C a multiple of LIST_W
  // Otherwise the lists' banks hold whole words: G*LIST_W x 2 ceil(C / LIST_W) x ENTRY_W, with
  // ENTRY_W = clog2(ceil(C / LIST_W)) + log2(LIST_W): C = 20 at LIST_W 8 is 4*8 x 2*3 x (2 + 3).
  EXPECT_EQ(ring_storage(hw, workload_config({2, 4, 5}, 32, 16), {20, 1, 8})[4].bits(), 4 * 8 * 2 * 3 * 5);
  EXPECT_EQ(roles[5].bits(), 32 / 4);             // chunk summaries: ceil(N / C) x 1
  EXPECT_EQ(roles[6].bits(), 2 * 32 * 8 * 8);     // B slices: 2 x K x COLS*DATA_W
  EXPECT_EQ(roles[7].bits(), 4 * 1 * 4 * 2 * 4);  // walk buffer: 4 chunks of 1 word of LIST_W x 2G
  EXPECT_EQ(roles[8].bits(), 1 * 2 * 4 * 8 * 8);  // A replay: SEGS x 2C x GROUP_W*DATA_W
  // Lists of up to 257: a FIFO of 514 entries is 8 parts of 65 rows, as kld_ring_a_replay holds it.
  EXPECT_EQ(ring_storage(hw, workload_config({2, 16, 16}, 32, 16), {257, 1, 8})[8].depth, 8 * 65);
  // Chunks of 20 at LIST_W 8 are 3 words each: 4 x 3 words of 8 x 2G.
  EXPECT_EQ(ring_storage(hw, workload_config({2, 4, 5}, 32, 16), {20, 1, 8})[7].bits(), 4 * 3 * 8 * 2 * 4);
  EXPECT_EQ(sram_bits_total(roles), 14592 + 256 + 4096 + 2048 + 64 + 8 + 4096 + 128 + 512);
  EXPECT_THROW(ring_storage(hw, cfg, {0, 1}), ConfigError);
  EXPECT_THROW(ring_storage(hw, cfg, {4, 0}), ConfigError);
  EXPECT_THROW(ring_storage(hw, cfg, {4, 1, 0}), ConfigError);
  EXPECT_EQ(ring_storage(hw, cfg, {4, 3})[0].depth, 16 + 4 * 4);  // W + (L + 1) C
}

// Dense, 8x8 array, N = 32, K = 32 (KT = 4 passes, SEGS 1), M = 16 (MT = 2), so 8 chunks of 8:
// the first weights arrive at ROWS = 8, then every pass issues 8 positions while the next one's
// weights load, and the last chunk lands LAT = GROUP_W + COLS + MUL_PIPE = 16 cycles after its last
// issue and is gathered in C = 8 beats: 8 + 2*4*4*8 + 16 + 8 = 288. With chunks of 4 every pass
// waits for its weights: pass i issues in cycles [8 + 8i, 12 + 8i), the 64th ends at 516, then 16
// + 4: 536; the waits are 8 + 63 * 4.
TEST(RingPlan, DenseCyclesFollowTheSchedule) {
  const HwConfig hw = default_config_8x8();
  const ReuseConfig cfg = workload_config({2, 4, 4}, 32, 16);
  const RingCycles c8 = ring_cycles(hw, cfg, nullptr, {8, 1});
  EXPECT_EQ(c8.total, 288);
  EXPECT_EQ(c8.issue, 256);
  EXPECT_EQ(c8.weight_wait, 8);
  EXPECT_EQ(c8.ring_wait, 0);
  EXPECT_EQ(c8.tail, 16 + 8);
  const RingCycles c4 = ring_cycles(hw, cfg, nullptr, {4, 1});
  EXPECT_EQ(c4.total, 536);
  EXPECT_EQ(c4.weight_wait, 8 + 63 * 4);
  EXPECT_EQ(c4.gather_beats, 2 * 32);
}

// 16x16 array (SEGS 2, 8 lanes), one chunk of 32 positions, K = 32 (G = 4, KT = 2), M = 16. Groups
// 0 and 2 compute everywhere, 1 and 3 reuse everywhere. The detector decides the 4 groups in one
// round: 32 + 2 cycles. K-tile pairing: passes {0, 1} and {2, 3} of 32 each, then LAT = 8 + 16 and
// 32 beats: 34 + 64 + 24 + 32 = 154. Paired by count, {0, 2} share a pass and {1, 3} has none: 122.
TEST(RingPlan, PairingGroupsByCountSavesThePassesOfSparseGroups) {
  const HwConfig hw = default_config_16x16();
  ASSERT_EQ(hw.segs(), 2);
  ASSERT_EQ(hw.det_lanes(), 8);
  const ReuseConfig cfg = workload_config({2, 4, 4}, 32, 16);
  IntReuse r = all_compute(cfg);
  for (int32_t tok = 0; tok < 32; ++tok)
    for (int g : {1, 3}) {
      PairDecision& d = r.decisions[static_cast<size_t>(tok * 4 + g)];
      d.kind = PairKind::Reuse;
    }
  const RingCycles ktile = ring_cycles(hw, cfg, &r.decisions, {32, 1});
  EXPECT_EQ(ktile.detect_wait, 34);
  EXPECT_EQ(ktile.issue, 64);
  EXPECT_EQ(ktile.total, 154);
  const RingCycles paired = ring_cycles(hw, cfg, &r.decisions, {32, 1}, GroupPairing::ByCount);
  EXPECT_EQ(paired.issue, 32);
  EXPECT_EQ(paired.total, 122);
}

// 16x16 array (SEGS 2, 8 lanes), one chunk of 32, K = 32: groups 0..3 compute 32, 8, 16 and 0 of
// their pairs; the detector ends at 34, the last pass lands 24 cycles after it and 32 beats follow.
//   k-tile passes {0, 1} 34..66 and {2, 3} 66..82 (ROWS = 16 rows of weights were ready at 50): 138
//   by count {0, 2} 34..66 and {1, 3} 66..74: 130
//   independent: segment 0 takes group 0 (34..66), segment 1 group 2 (34..50) then group 1, whose
//   GROUP_W rows loaded in 42..50 (50..58): the chunk ends at 66, 122
TEST(RingPlan, IndependentSegmentsDoNotWaitForEachOther) {
  const HwConfig hw = default_config_16x16();
  const ReuseConfig cfg = workload_config({2, 4, 4}, 32, 16);
  IntReuse r = all_compute(cfg);
  const int computes[4] = {32, 8, 16, 0};
  for (int32_t tok = 0; tok < 32; ++tok)
    for (int g = 0; g < 4; ++g)
      if (tok >= computes[g]) r.decisions[static_cast<size_t>(tok * 4 + g)].kind = PairKind::Reuse;
  EXPECT_EQ(ring_cycles(hw, cfg, &r.decisions, {32, 1}).total, 138);
  EXPECT_EQ(ring_cycles(hw, cfg, &r.decisions, {32, 1}, GroupPairing::ByCount).total, 130);
  const RingCycles indep = ring_cycles(hw, cfg, &r.decisions, {32, 1}, GroupPairing::Independent);
  EXPECT_EQ(indep.issue, 32);
  EXPECT_EQ(indep.weight_wait, 0);
  EXPECT_EQ(indep.total, 122);
}

// 8x8 array (4 lanes), N = 32 in 4 chunks of 8, K = 8 (one group), M = 8: one position per chunk
// computes. The detector ends chunk c at 8(c + 1) + 2; each pass issues 1 cycle, each gather takes
// 8 beats 16 cycles after its pass, so the passes of chunk q wait for the gather of q - 2:
//   q0: detector until 10, issue -> 11; gather 27..35
//   q1: detector until 18 (+7), issue -> 19; gather 35..43
//   q2: detector until 26 (+7), ring until 35 (+9), issue -> 36; gather 52..60
//   q3: ring until 43 (+7), issue -> 44; gather 60..68
TEST(RingPlan, PassesWaitForTheDetectorAndForTheGatherToFreeTheRing) {
  const HwConfig hw = default_config_8x8();
  ASSERT_EQ(hw.det_lanes(), 4);
  const ReuseConfig cfg = workload_config({2, 4, 4}, 8, 8);
  IntReuse r = all_compute(cfg);
  for (int32_t tok = 0; tok < 32; ++tok)
    if (tok % 8 != 0) r.decisions[static_cast<size_t>(tok)].kind = PairKind::Reuse;
  const RingCycles c = ring_cycles(hw, cfg, &r.decisions, {8, 1});
  EXPECT_EQ(c.detect_wait, 10 + 7 + 7);
  EXPECT_EQ(c.ring_wait, 9 + 7);
  EXPECT_EQ(c.weight_wait, 0);
  EXPECT_EQ(c.issue, 4);
  EXPECT_EQ(c.total, 68);
  EXPECT_EQ(c.tail, 68 - 44);
}

// The same with two m-tiles (M = 16). M-tile 1 rebuilds each chunk's lists from the codes, one
// position a cycle (LIST_W 1), into a buffer freed when the passes of the chunk before the last end:
//   q4: lists max(34, q3's start 43) + 8 = 51 (+7), ring until 60 (+9), issue -> 61; gather 77..85
//   q5: lists max(51, 60) + 8 = 68 (+7), issue -> 69; gather 85..93
//   q6: lists max(68, 68) + 8 = 76 (+7), ring until 85 (+9), issue -> 86; gather 102..110
//   q7: lists max(76, 85) + 8 = 93 (+7), issue -> 94; gather 110..118
TEST(RingPlan, LaterMTilesWaitForTheListBuilder) {
  const HwConfig hw = default_config_8x8();
  const ReuseConfig cfg = workload_config({2, 4, 4}, 8, 16);
  IntReuse r = all_compute(cfg);
  for (int32_t tok = 0; tok < 32; ++tok)
    if (tok % 8 != 0) r.decisions[static_cast<size_t>(tok)].kind = PairKind::Reuse;
  const RingCycles c = ring_cycles(hw, cfg, &r.decisions, {8, 1, 1});
  EXPECT_EQ(c.list_wait, 4 * 7);
  EXPECT_EQ(c.ring_wait, 9 + 7 + 9 + 9);
  EXPECT_EQ(c.total, 118);
  // Chunk 1 all reused (token 8 too): its summary bit spares m-tile 1 its list (q5 waits for none);
  // q2 now waits 8 for the detector and q6 8 for its list, since q5 started at 60.
  IntReuse none = r;
  none.decisions[8].kind = PairKind::Reuse;
  const RingCycles skip = ring_cycles(hw, cfg, &none.decisions, {8, 1, 1});
  EXPECT_EQ(skip.list_wait, 7 + 0 + 8 + 7);
  EXPECT_EQ(skip.total, 118);
  // Eight positions a cycle: each list is ready a cycle after its buffer frees, before the ring.
  const RingCycles fast = ring_cycles(hw, cfg, &r.decisions, {8, 1, 8});
  EXPECT_EQ(fast.list_wait, 0);
}

// Scan tiles of 3 x 4 on a 4 x 7 x 6 grid: 3 x 2 query blocks (raster order of the tiles, the
// last row of tiles one row high); M = 24 in key blocks of 8 columns (one m-tile each). Every other
// (query block, key block) dropped: the ring's output is the golden model's reuse product with
// those entries 0, for chunks that fit a tile or not and leads 1 and 2.
TEST(RingPlan, ABlockMaskDropsItsBlocksAndKeepsTheRestBitExact) {
  const HwConfig hw = default_config_8x8();
  const Grid grid{4, 7, 6};
  ReuseConfig cfg = workload_config(grid, 32, 24, 3, 4);
  ASSERT_EQ(ring_query_blocks(cfg), 6);
  SyntheticSpec spec;
  spec.grid = grid;
  spec.channels = 32;
  spec.static_w = 3;
  const IntMatrix a = quantize(make_latent(spec), 8).q;
  const IntMatrix b = make_int_weights(32, 24, 8, 11);
  cfg.tau = calibrate_reuse_ratio(cfg, a, 0.8).tau;
  const IntReuse reuse = run_reuse(cfg, a);
  RingMask mask;
  mask.key_block = 8;
  ASSERT_EQ(ring_key_blocks(cfg, mask), 3);
  for (int qb = 0; qb < 6; ++qb)
    for (int kb = 0; kb < 3; ++kb) mask.keep.push_back(static_cast<uint8_t>((qb + kb) % 2));
  WideMatrix golden = reuse_output(cfg, a, b, reuse);
  for (int h = 0; h < grid.h; ++h)
    for (int w = 0; w < grid.w; ++w) {
      const int qb = (h / 3) * 2 + w / 4;
      for (int t = 0; t < grid.t; ++t)
        for (int m = 0; m < 24; ++m)
          if ((qb + m / 8) % 2 == 0) golden.at(grid.index(t, h, w), m) = 0;
    }
  for (const int chunk : {5, 12, 48})
    for (const int lead : {1, 2}) {
      SCOPED_TRACE("chunk " + std::to_string(chunk) + ", lead " + std::to_string(lead));
      const RingShape shape{chunk, lead};
      EXPECT_EQ(ring_output(hw, cfg, a, b, reuse, shape, ring_depth(cfg, shape), &mask).data, golden.data);
    }
  mask.key_block = 12;  // not a whole number of m-tiles
  EXPECT_THROW(ring_cycles(hw, cfg, nullptr, {8, 1}, GroupPairing::KTile, &mask), ConfigError);
  mask.key_block = 8;
  mask.keep.pop_back();
  EXPECT_THROW(ring_cycles(hw, cfg, nullptr, {8, 1}, GroupPairing::KTile, &mask), ConfigError);
}

// Dense, 8x8 array, grid 2x4x4 in scan tiles of 4 x 2: two query blocks of 16 positions; K = 8
// (one pass), M = 16 in two key blocks of 8. Unmasked, four steps of 16: the first issues 8..24
// and is gathered 40..56, the second 24..40 (56..72), the third waits for the first's gather
// (ring) and issues 56..72 (88..104), the fourth 72..88 (104..120): 120. Keeping only (0, 0) and
// (1, 1): the first m-tile still runs both blocks (block 1's outputs discarded: its A is saved for
// the second), the second m-tile block 1 alone, so three steps as the first three above: 104.
TEST(RingPlan, ABlockMaskSkipsTheCyclesOfItsDroppedBlocks) {
  const HwConfig hw = default_config_8x8();
  const ReuseConfig cfg = workload_config({2, 4, 4}, 8, 16, 4, 2);
  const RingCycles all = ring_cycles(hw, cfg, nullptr, {16, 1});
  EXPECT_EQ(all.steps, 4);
  EXPECT_EQ(all.ring_wait, 16);
  EXPECT_EQ(all.total, 120);
  const RingMask mask{8, {1, 0, 0, 1}};
  const RingCycles kept = ring_cycles(hw, cfg, nullptr, {16, 1}, GroupPairing::KTile, &mask);
  EXPECT_EQ(kept.steps, 3);
  EXPECT_EQ(kept.total, 104);
  // Keeping (1, 0) and (0, 1) instead: both blocks in the first m-tile, block 0 in the second.
  const RingMask swapped{8, {0, 1, 1, 0}};
  EXPECT_EQ(ring_cycles(hw, cfg, nullptr, {16, 1}, GroupPairing::KTile, &swapped).steps, 3);
}

TEST(RingPlanCommand, ChecksTheRingAgainstTheGoldenModelOnEachWorkloadKind) {
  const ProcessResult ok = run_process({KALEIDO_TEST_KALEIDO_BIN, "ring-plan", "--grid", "2x6x6", "--channels", "32",
                                        "--out-cols", "16", "--target-reuse", "0.6", "--chunks", "8,0", "--check",
                                        "--json"});
  ASSERT_TRUE(ok.ok()) << ok.output;
  const nlohmann::json j = nlohmann::json::parse(ok.output);
  ASSERT_EQ(j["chunks"].size(), 2u);
  EXPECT_EQ(j["chunks"][1]["chunk"], 64);  // 0: 8 x ROWS
  for (const auto& row : j["chunks"]) {
    EXPECT_TRUE(row["bit_exact"].get<bool>());
    EXPECT_LE(row["achieved_over_ideal"].get<double>(), 1.0);
    EXPECT_LE(row["speedup"].get<double>(), row["ideal_speedup"].get<double>());
  }
  // A random block mask over scan tiles of 3 x 3 (4 query blocks) and key blocks of 8 columns (2):
  // 4 of the 8 kept, the output checked against the golden model's masked product.
  const ProcessResult sparse = run_process({KALEIDO_TEST_KALEIDO_BIN, "ring-plan", "--grid", "2x6x6", "--channels",
                                            "32", "--out-cols", "16", "--tile", "3x3", "--target-reuse", "0.6",
                                            "--chunks", "8", "--key-block", "8", "--keep", "0.5", "--check", "--json"});
  ASSERT_TRUE(sparse.ok()) << sparse.output;
  const nlohmann::json m = nlohmann::json::parse(sparse.output);
  EXPECT_EQ(m["mask"]["query_blocks"], 4);
  EXPECT_EQ(m["mask"]["key_blocks"], 2);
  EXPECT_EQ(m["mask"]["kept"], 4);
  EXPECT_TRUE(m["chunks"][0]["bit_exact"].get<bool>());
  EXPECT_LT(m["chunks"][0]["dense_cycles"].get<int64_t>(), m["chunks"][0]["dense_cycles_without_mask"].get<int64_t>());
  const ProcessResult no_key_block = run_process({KALEIDO_TEST_KALEIDO_BIN, "ring-plan", "--grid", "2x6x6",
                                                  "--channels", "32", "--tau", "4", "--keep", "0.5"});
  EXPECT_FALSE(no_key_block.ok());
  EXPECT_NE(no_key_block.output.find("--key-block"), std::string::npos) << no_key_block.output;
  // One attention head of the clip: the plan covers every key (M = N = 32), the thresholds and the
  // check the first key tile, calibrated for the default SNR; a whole-head mask is not checked.
  const ProcessResult qk = run_process(
      {KALEIDO_TEST_KALEIDO_BIN, "ring-plan", "--workload", "qk", "--grid", "2x4x4", "--chunks", "8", "--check", "--json"});
  ASSERT_TRUE(qk.ok()) << qk.output;
  const nlohmann::json q = nlohmann::json::parse(qk.output);
  EXPECT_EQ(q["config"]["M"], 32);
  EXPECT_EQ(q["config"]["K"], 128);
  EXPECT_NE(q["thresholds"].get<std::string>().find("SNR"), std::string::npos);
  EXPECT_TRUE(q["chunks"][0]["bit_exact"].get<bool>());
  // The decisions' quality on the checked tile: calibrated for 30 dB, measured against A . B.
  EXPECT_GE(q["quality"]["snr_db"].get<double>(), 30.0);
  EXPECT_GT(q["skipped_fraction"].get<double>(), 0.0);
  const ProcessResult qk_mask = run_process({KALEIDO_TEST_KALEIDO_BIN, "ring-plan", "--workload", "qk", "--grid", "2x4x4",
                                            "--key-block", "8", "--check"});
  EXPECT_FALSE(qk_mask.ok());
  // No threshold option: calibrating for the default SNR forms the product, refused past 2e9 MACs
  // (here 32,760 x 128 x 32,768) before any work; a small workload is calibrated.
  const ProcessResult none = run_process({KALEIDO_TEST_KALEIDO_BIN, "ring-plan", "--grid", "21x30x52", "--channels",
                                          "128", "--out-cols", "32768"});
  EXPECT_FALSE(none.ok());
  const ProcessResult small = run_process({KALEIDO_TEST_KALEIDO_BIN, "ring-plan", "--grid", "2x6x6", "--channels",
                                           "32", "--out-cols", "16", "--chunks", "8", "--json"});
  ASSERT_TRUE(small.ok()) << small.output;
  EXPECT_NE(nlohmann::json::parse(small.output)["thresholds"].get<std::string>().find("SNR 30"), std::string::npos);
  EXPECT_NE(none.output.find("--target-reuse"), std::string::npos) << none.output;
  const ProcessResult bad = run_process(
      {KALEIDO_TEST_KALEIDO_BIN, "ring-plan", "--grid", "2x6x6", "--channels", "32", "--tau", "4", "--chunks", "8,x"});
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.output.find("chunks"), std::string::npos) << bad.output;
}

// --rtl writes the ring's merge and front end for the plan: tiles of 3 x 4 (W = 12; edge tiles 2 wide) and chunks
// of 8 give a ring of 12 + 2 x 8 = 28 slots; K = 32 in groups of 8 is 4 groups, so 4 x 2 bits of
// code per lane; GATHER_W 2 banks each ring into two banks of 14 rows, each read by its lane and
// written by the taps and its lane's copy. Tiles 3 wide cannot be banked by two: refused.
TEST(RingPlanCommand, WritesTheRingsMergeSizedByThePlan) {
  hwtest::TempDir dir("ring_plan_rtl");
  const std::string rtl = (dir.path() / "rtl").string();
  const ProcessResult r = run_process({KALEIDO_TEST_KALEIDO_BIN, "ring-plan", "--grid", "2x6x6", "--channels", "32",
                                       "--out-cols", "16", "--tau", "4", "--tile", "3x4", "--chunks", "8",
                                       "--gather-w", "2", "--rtl", rtl, "--json"});
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output)["chunks"][0]["ring_depth"], 28);
  const std::string merge = read_file(dir.path() / "rtl" / "kld_ring_merge.v");
  EXPECT_NE(merge.find("//   RING_DEPTH = 28\n"), std::string::npos);
  EXPECT_NE(merge.find("input wire [15:0] gather_code_i"), std::string::npos);
  EXPECT_NE(merge.find("kld_sram_14x19_w2_sync u_ring_3_7_l1"), std::string::npos);  // last group, column, lane
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "rtl" / "kld_sram_14x19_w2_sync.v"));
  // The front end: the plan's code words read into the list builder. A chunk starts at each scan
  // tile: tiles of 3 x 4 and 3 x 2 over t = 2 hold 24 and 12 positions, chunks of 8, 8, 8 and of
  // 8, 4, a word each at LIST_W 8: 2 x (3 + 2) = 10 words.
  const std::string front = read_file(dir.path() / "rtl" / "kld_ring_front.v");
  EXPECT_NE(front.find("//   CODE_WORDS = 10\n"), std::string::npos) << front.substr(0, 2000);
  EXPECT_NE(front.find("kld_ring_codes u_codes ("), std::string::npos);
  EXPECT_NE(front.find("kld_ring_lists u_lists ("), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "rtl" / "kld_ring_codes.v"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "rtl" / "kld_ring_lists.v"));
  // Its walk buffer: four slots of a chunk's one word (8 lanes x 4 groups x 2 bits).
  EXPECT_NE(front.find("kld_sram_4x64_sync u_walk ("), std::string::npos) << front;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "rtl" / "kld_sram_4x64_sync.v"));
  // The issue: the plan's chunk, the 8x8 preset sized for 32 channels (4 groups of 8, one segment):
  // lengths of 0..8 (4 bits) of 4 groups in 2 buffers.
  const std::string passes = read_file(dir.path() / "rtl" / "kld_ring_passes.v");
  EXPECT_NE(passes.find("kld_ring_front u_front ("), std::string::npos);
  EXPECT_NE(passes.find("kld_ring_issue u_issue ("), std::string::npos);
  const std::string issue = read_file(dir.path() / "rtl" / "kld_ring_issue.v");
  EXPECT_NE(issue.find("//   CHUNK = 8\n"), std::string::npos) << issue.substr(0, 2000);
  EXPECT_NE(issue.find("input wire [31:0] len_i"), std::string::npos) << issue.substr(0, 4000);
  // The chunk sequencer: the plan's ring of 28 slots in 14 rows of GATHER_W 2 (4 bits a row), the
  // workload's 2 frames (2 bits).
  const std::string chunks = read_file(dir.path() / "rtl" / "kld_ring_chunks.v");
  EXPECT_NE(chunks.find("//   RING_DEPTH = 28\n"), std::string::npos) << chunks.substr(0, 2000);
  EXPECT_NE(chunks.find("output wire [3:0] chunk_slot_row_o"), std::string::npos) << chunks.substr(0, 4000);
  EXPECT_NE(chunks.find("input wire [1:0] grid_t_i"), std::string::npos);
  // The gather's walk: a beat of GATHER_W 2 lanes x 4 groups x 2 bits of codes.
  const std::string walk = read_file(dir.path() / "rtl" / "kld_ring_walk.v");
  EXPECT_NE(walk.find("output wire [15:0] gather_code_o"), std::string::npos) << walk.substr(0, 4000);
  // The engine holds the detector, its window the plan's (tiles of 3 x 4: 12 positions) rounded
  // up to a power of two, not the sized array's whole frame (6 x 6: 64).
  const std::string engine = read_file(dir.path() / "rtl" / "kld_ring_engine.v");
  EXPECT_NE(engine.find("kld_ring_detect u_detect ("), std::string::npos);
  EXPECT_NE(engine.find("//   WIN_CAP = 16\n"), std::string::npos) << engine.substr(0, 2000);
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "rtl" / "kld_ring_detect.v"));
  // The A chunk buffers: two chunks of 8 positions, a word of the 4 groups a position streams in
  // one beat (4 x 8 channels x 8 bits) in the one segment's bank.
  const std::string a_buffers = read_file(dir.path() / "rtl" / "kld_ring_a_buffers.v");
  EXPECT_NE(a_buffers.find("kld_sram_16x256_sync u_bank_0 ("), std::string::npos) << a_buffers;
  // The later m-tiles' A: a FIFO of two lists of 8 groups of 8 x 8 bits for the one segment.
  const std::string a_replay = read_file(dir.path() / "rtl" / "kld_ring_a_replay.v");
  EXPECT_NE(a_replay.find("kld_sram_16x64_sync u_fifo_0 ("), std::string::npos) << a_replay;
  // Eight groups on the 8x8 preset's four lanes of one group: the ring's detector cannot decide a
  // position's groups at once, so --rtl is refused (the plan alone is not).
  const ProcessResult lanes = run_process({KALEIDO_TEST_KALEIDO_BIN, "ring-plan", "--grid", "2x6x6", "--channels",
                                           "64", "--tau", "4", "--chunks", "8", "--rtl", rtl + "lanes"});
  EXPECT_FALSE(lanes.ok());
  EXPECT_NE(lanes.output.find("--lane-groups"), std::string::npos) << lanes.output;
  EXPECT_FALSE(std::filesystem::exists(rtl + "lanes"));
  EXPECT_TRUE(run_process({KALEIDO_TEST_KALEIDO_BIN, "ring-plan", "--grid", "2x6x6", "--channels", "64", "--tau", "4",
                           "--chunks", "8", "--lane-groups", "2", "--rtl", rtl + "pairs"})
                  .ok());
  const ProcessResult odd = run_process({KALEIDO_TEST_KALEIDO_BIN, "ring-plan", "--grid", "2x6x6", "--channels", "32",
                                         "--out-cols", "16", "--tau", "4", "--tile", "3x3", "--chunks", "8",
                                         "--gather-w", "2", "--rtl", rtl + "odd"});
  EXPECT_FALSE(odd.ok());
  EXPECT_NE(odd.output.find("multiples of GATHER_W (2)"), std::string::npos) << odd.output;
  EXPECT_FALSE(std::filesystem::exists(rtl + "odd"));
  const ProcessResult two = run_process({KALEIDO_TEST_KALEIDO_BIN, "ring-plan", "--grid", "2x6x6", "--channels", "32",
                                         "--tau", "4", "--chunks", "8,16", "--rtl", rtl + "2"});
  EXPECT_FALSE(two.ok());
  EXPECT_NE(two.output.find("single --chunks"), std::string::npos) << two.output;
  EXPECT_FALSE(std::filesystem::exists(rtl + "2"));
}

}  // namespace
}  // namespace kaleido::hw
