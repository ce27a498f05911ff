// Block layouts and the peers' mask generators on small hand-checkable cases.
#include <gtest/gtest.h>

#include <cmath>

#include "golden/random.hpp"
#include "helpers.hpp"
#include "study/blocks.hpp"
#include "study/peers.hpp"

namespace kaleido::study {
namespace {

using testing::random_matrix;

TEST(Blocks, LayoutClipsEdgeBlocksAndCountsMacs) {
  const BlockLayout L(Grid{5, 4, 6}, BlockShape{4, 4, 4});
  ASSERT_EQ(L.count(), 4);  // 2 (t) x 1 (h) x 2 (w)
  EXPECT_EQ(L.size(0), 64);
  EXPECT_EQ(L.size(1), 32);  // w 4..5
  EXPECT_EQ(L.size(2), 16);  // t 4
  EXPECT_EQ(L.size(3), 8);
  EXPECT_EQ(L.block_of(Grid{5, 4, 6}.index(4, 3, 5)), 3);
  EXPECT_EQ(L.bt(3), 1);
  EXPECT_EQ(L.bw(3), 1);
  BlockMask m(4, 4);
  m.set(0, 0);
  m.set(0, 3);
  m.set(2, 1);
  // (64*64 + 64*8 + 16*32) * d
  EXPECT_EQ(mask_macs(L, m, 2), (64 * 64 + 64 * 8 + 16 * 32) * 2);
  EXPECT_EQ(m.kept(), 3);
  EXPECT_EQ(m.kept_in_row(0), 2);
}

TEST(Blocks, MeanPairwiseCosine) {
  FloatMatrix x(3, 2);
  x.at(0, 0) = 1;  // (1,0)
  x.at(1, 1) = 2;  // (0,1)
  x.at(2, 0) = 3;  // (1,0)
  // pairs: 0-1: 0, 0-2: 1, 1-2: 0 -> mean 1/3
  EXPECT_NEAR(mean_pairwise_cosine(x, {0, 1, 2}), 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(mean_pairwise_cosine(x, {0, 2}), 1.0, 1e-12);
  EXPECT_EQ(mean_pairwise_cosine(x, {1}), 1.0);
}

TEST(Spade, TopKCountFormula) {
  // k = ceil((1 - sim)(1 - progress) factor N), clamped to [0, N].
  EXPECT_EQ(spade_topk(0.5, 0.5, 2.0, 10), 5);
  EXPECT_EQ(spade_topk(0.9, 0.0, 1.0, 16), 2);   // 1.6 -> 2
  EXPECT_EQ(spade_topk(0.8, 0.5, 1.0, 20), 2);   // exactly 2.0 stays 2
  EXPECT_EQ(spade_topk(0.3, 0.2, 0.0, 50), 0);
  EXPECT_EQ(spade_topk(0.0, 0.0, 5.0, 12), 12);  // clamped
  EXPECT_EQ(spade_topk(1.0, 0.0, 9.0, 12), 0);
}

// A 1 x 1 x 16 grid in 4 blocks of 1 x 1 x 4 tokens with hand-made q and k.
struct Tiny {
  Grid grid{1, 1, 16};
  FloatMatrix q{16, 2}, k{16, 2};
};

TEST(Spade, EstimateIsTheMaxOfTwoDotProducts) {
  Tiny t;
  for (int i = 0; i < 16; ++i) {
    t.q.at(i, 0) = static_cast<float>(i % 4);  // block qmax = (3, ...), qmin = (0, ...)
    t.q.at(i, 1) = -1.0f;
    t.k.at(i, 0) = static_cast<float>(i / 4) - 1.0f;  // block b: k0 = b - 1 for all its tokens
    t.k.at(i, 1) = static_cast<float>(i % 2);         // kmax 1, kmin 0
  }
  const SpadePlan p = spade_plan(t.q, t.k, t.grid, {BlockShape{1, 1, 4}});
  ASSERT_EQ(p.layout.count(), 4);
  // qmax + qmin = (3, -2); kmax_b = (b-1, 1), kmin_b = (b-1, 0):
  // max(3(b-1) - 2, 3(b-1)) = 3(b-1).
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) EXPECT_NEAR(p.estimate[static_cast<size_t>(a * 4 + b)], 3.0 * (b - 1), 1e-6);
}

TEST(Spade, TopKPlusSinkAndDiagonal) {
  Tiny t;
  Rng rng(1);
  for (int i = 0; i < 16; ++i) {
    t.q.at(i, 0) = static_cast<float>(1.0 + 0.01 * rng.normal());
    t.q.at(i, 1) = static_cast<float>(rng.normal());  // not all alike: sim < 1
    t.k.at(i, 0) = static_cast<float>(i / 4);        // the estimate grows with b
    t.k.at(i, 1) = 0.0f;
  }
  const SpadePlan p = spade_plan(t.q, t.k, t.grid, {BlockShape{1, 1, 4}});
  ASSERT_LT(p.sim, 0.95);
  // factor 0: k = 0, only the sink (block 0) and the diagonal remain.
  BlockMask m = spade_mask(p, 0.0, 0.0, 0.95);
  for (int a = 0; a < 4; ++a) {
    EXPECT_TRUE(m.at(a, 0));
    EXPECT_TRUE(m.at(a, a));
    EXPECT_EQ(m.kept_in_row(a), a == 0 ? 1 : 2);
  }
  // k = 1: the top block by estimate is block 3, added to sink and diagonal.
  const double factor = 1.0 / ((1.0 - p.sim) * 4.0);  // k = ceil(1.0)
  ASSERT_EQ(spade_topk(p.sim, 0.0, factor, 4), 1);
  m = spade_mask(p, factor, 0.0, 0.95);
  EXPECT_EQ(m.kept_in_row(0), 2);  // {0, 3}
  EXPECT_EQ(m.kept_in_row(1), 3);  // {0, 1, 3}
  EXPECT_EQ(m.kept_in_row(3), 2);  // {0, 3}
  EXPECT_TRUE(m.at(1, 3));
  EXPECT_FALSE(m.at(1, 2));
  // Late in denoising (progress 0.5) the same factor keeps fewer.
  EXPECT_EQ(spade_topk(p.sim, 0.5, 2 * factor, 4), 1);
}

TEST(Spade, HighSimilarityShortcutKeepsOnlySinkAndDiagonal) {
  Tiny t;
  for (int i = 0; i < 16; ++i) {
    t.q.at(i, 0) = 1.0f;  // every query alike: sim = 1
    t.k.at(i, 0) = static_cast<float>(i);
  }
  const SpadePlan p = spade_plan(t.q, t.k, t.grid, {BlockShape{1, 1, 4}});
  EXPECT_NEAR(p.sim, 1.0, 1e-9);
  bool shortcut = false;
  const BlockMask m = spade_mask(p, 1000.0, 0.0, 0.95, &shortcut);
  EXPECT_TRUE(shortcut);
  EXPECT_EQ(m.kept(), 4 + 3);  // each row: sink and diagonal (one tile for row 0)
  // Below the shortcut threshold the same plan uses its top-k.
  const BlockMask m2 = spade_mask(p, 1000.0, 0.0, 1.01, &shortcut);
  EXPECT_FALSE(shortcut);
}

TEST(Spade, PicksTheBlockShapeWithTheMostSimilarQueries) {
  // Queries constant along w and varying along t: 1 x 1 x 4 blocks hold identical queries.
  const Grid g{4, 1, 4};
  FloatMatrix q(16, 2), k = random_matrix(16, 2, 2);
  for (int t = 0; t < 4; ++t)
    for (int w = 0; w < 4; ++w) {
      q.at(g.index(t, 0, w), 0) = static_cast<float>(std::cos(1.3 * t));
      q.at(g.index(t, 0, w), 1) = static_cast<float>(std::sin(1.3 * t));
    }
  const SpadePlan p = spade_plan(q, k, g, {BlockShape{4, 1, 1}, BlockShape{1, 1, 4}});
  EXPECT_EQ(p.layout.shape().name(), "1x1x4");
  EXPECT_NEAR(p.sim, 1.0, 1e-6);
}

TEST(Sparge, CumulativeThresholdAndWholeBlocks) {
  SpargePlan p;
  p.layout = BlockLayout(Grid{1, 1, 3}, BlockShape{1, 1, 1});
  p.p = {0.5, 0.3, 0.2,  //
         0.1, 0.1, 0.8,  //
         0.3, 0.3, 0.4};
  p.q_whole = {0, 0, 0};
  p.k_whole = {0, 0, 0};
  BlockMask m = sparge_mask(p, 0.6);
  EXPECT_TRUE(m.at(0, 0) && m.at(0, 1) && !m.at(0, 2));  // 0.5 < 0.6, 0.8 >= 0.6
  EXPECT_TRUE(!m.at(1, 0) && !m.at(1, 1) && m.at(1, 2));
  EXPECT_EQ(m.kept_in_row(2), 2);  // 0.4 then 0.3 (ties by index: block 0)
  EXPECT_TRUE(m.at(2, 0));
  m = sparge_mask(p, 0.0);  // at least the top block
  EXPECT_EQ(m.kept(), 3);
  p.q_whole = {0, 1, 0};
  p.k_whole = {0, 0, 1};
  m = sparge_mask(p, 0.5);
  EXPECT_EQ(m.kept_in_row(1), 3);  // an unreliable query block keeps every key block
  EXPECT_TRUE(m.at(0, 2));          // an unreliable key block is kept by every row
}

TEST(Sparge, CompressedAttentionRowsAreSoftmaxOfPooledScores) {
  const Grid g{1, 1, 8};
  const FloatMatrix q = random_matrix(8, 4, 5), k = random_matrix(8, 4, 6);
  const SpargePlan p = sparge_plan(q, k, g, BlockShape{1, 1, 4}, 0.0);
  ASSERT_EQ(p.layout.count(), 2);
  // By hand: means of each block, logits mean_q . mean_k / 2 + ln 4.
  double qm[2][4] = {}, km[2][4] = {};
  for (int i = 0; i < 8; ++i)
    for (int c = 0; c < 4; ++c) {
      qm[i / 4][c] += q.at(i, c) / 4.0;
      km[i / 4][c] += k.at(i, c) / 4.0;
    }
  for (int a = 0; a < 2; ++a) {
    double l[2];
    for (int b = 0; b < 2; ++b) {
      l[b] = 0;
      for (int c = 0; c < 4; ++c) l[b] += qm[a][c] * km[b][c] / 2.0;
    }
    const double p0 = 1.0 / (1.0 + std::exp(l[1] - l[0]));
    EXPECT_NEAR(p.p[static_cast<size_t>(a * 2)], p0, 1e-6);
    EXPECT_NEAR(p.p[static_cast<size_t>(a * 2 + 1)], 1.0 - p0, 1e-6);
  }
}

TEST(Greedy, KeepsTheDiagonalThenTheHighestValuesWithinTheBudget) {
  BlockLayout L(Grid{1, 1, 3}, BlockShape{1, 1, 1});
  const GreedyPlan g = make_greedy_plan(L, {0.0, 0.9, 0.1,  //
                                            0.5, 0.0, 0.2,  //
                                            0.3, 0.8, 0.0});
  BlockMask m = greedy_mask(g, 5.5 / 9.0);  // room for two tiles beyond the diagonal
  EXPECT_EQ(m.kept(), 5);
  EXPECT_TRUE(m.at(0, 0) && m.at(1, 1) && m.at(2, 2));
  EXPECT_TRUE(m.at(0, 1) && m.at(2, 1));
  m = greedy_mask(g, 0.0);
  EXPECT_EQ(m.kept(), 3);  // the diagonal is always kept
  m = greedy_mask(g, 1.0);
  EXPECT_EQ(m.kept(), 9);
}

TEST(Veda, SingleTokenTilesReconstructExactAttention) {
  // With one token per tile the statistics are the tokens themselves, so the
  // reconstructed block attention is the exact softmax.
  const Grid g{1, 2, 3};
  const FloatMatrix q = random_matrix(6, 4, 8), k = random_matrix(6, 4, 9);
  const GreedyPlan p = veda_plan(q, k, g, {BlockShape{1, 1, 1}});
  for (int a = 0; a < 6; ++a) {
    double l[6], z = 0, mx = -1e9;
    for (int b = 0; b < 6; ++b) {
      l[b] = 0;
      for (int c = 0; c < 4; ++c) l[b] += q.at(a, c) * k.at(b, c) / 2.0;
      mx = std::max(mx, l[b]);
    }
    for (double& x : l) z += (x = std::exp(x - mx));
    for (int b = 0; b < 6; ++b) EXPECT_NEAR(p.value[static_cast<size_t>(a * 6 + b)], l[b] / z, 1e-5);
  }
}

TEST(Veda, HeadAwareTilingFollowsTheDirectionOfChange) {
  // Content changes along w only: the tiles narrowest along w describe their tokens best.
  const Grid g{8, 8, 16};
  FloatMatrix q(g.tokens(), 2), k(g.tokens(), 2);
  for (int t = 0; t < 8; ++t)
    for (int h = 0; h < 8; ++h)
      for (int w = 0; w < 16; ++w) {
        q.at(g.index(t, h, w), 0) = static_cast<float>(w * w);
        k.at(g.index(t, h, w), 1) = static_cast<float>(w);
      }
  const GreedyPlan p = veda_plan(q, k, g, candidate_shapes_64());
  EXPECT_EQ(p.layout.shape().w, 2) << p.layout.shape().name();
}

TEST(ScalingAttention, KeepsTheCalibratedHighMassTiles) {
  BlockLayout L(Grid{1, 1, 4}, BlockShape{1, 1, 2});  // two blocks of 2
  const GreedyPlan p = scaling_plan(L, {0.7, 0.3,  //
                                        0.9, 0.1});
  const BlockMask m = greedy_mask(p, 0.75);  // diagonal (2 tiles) + one more
  EXPECT_TRUE(m.at(1, 0));                   // mass 0.9 beats 0.3
  EXPECT_FALSE(m.at(0, 1));
}

TEST(SlidingTile, WindowInTileUnits) {
  const BlockLayout L(Grid{3, 3, 3}, BlockShape{1, 1, 1});
  BlockMask m = sliding_tile_mask(L, {1, 0, 0});
  EXPECT_EQ(m.kept_in_row(Grid{3, 3, 3}.index(1, 1, 1)), 3);  // t-1, t, t+1
  EXPECT_EQ(m.kept_in_row(0), 2);                               // a corner: t and t+1
  m = sliding_tile_mask(L, {1, 1, 1});
  EXPECT_EQ(m.kept_in_row(Grid{3, 3, 3}.index(1, 1, 1)), 27);
  EXPECT_EQ(m.kept_in_row(0), 8);
  const auto r = sliding_tile_radius(BlockLayout(Grid{6, 8, 13}, BlockShape{1, 1, 1}), 0.5);
  EXPECT_EQ(r[0], 3);  // round(0.5 * 5) = 3 (half away from zero)
  EXPECT_EQ(r[1], 4);  // round(0.5 * 7)
  EXPECT_EQ(r[2], 6);
}

}  // namespace
}  // namespace kaleido::study
