// Properties of the closed-loop reuse decision (DESIGN.md section 2).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "common/error.hpp"
#include "golden/gemm.hpp"
#include "golden/reuse.hpp"
#include "golden/scan.hpp"
#include "helpers.hpp"

namespace kaleido {
namespace {

using testing::random_case;

TEST(Reuse, OutputEqualsEffectiveInputsTimesBExactlyOverManySeeds) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const auto c = random_case(seed);
    const IntReuse r = run_reuse(c.cfg, c.a);
    // Two routes to the output: copying partials of the computing token, and Ahat . B.
    const WideMatrix via_partials = reuse_output(c.cfg, c.a, c.b, r);
    const WideMatrix via_ahat = gemm_wrap(r.a_eff, c.b, c.cfg.acc_w);
    ASSERT_EQ(via_partials.data, via_ahat.data) << "seed " << seed;
  }
}

TEST(Reuse, EffectiveInputsStayWithinTauAndErrorsWithinTheBound) {
  int reused_somewhere = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const auto c = random_case(seed);
    const IntReuse r = run_reuse(c.cfg, c.a);
    const int G = c.cfg.groups(), gw = c.cfg.group_w;
    for (int64_t i = 0; i < c.a.rows; ++i)
      for (int g = 0; g < G; ++g) {
        const PairDecision& p = r.at(static_cast<int32_t>(i), g);
        for (int ch = g * gw; ch < (g + 1) * gw; ++ch) {
          ASSERT_LE(std::llabs(static_cast<long long>(c.a.at(i, ch)) - r.a_eff.at(i, ch)), c.cfg.tau_of(g));
          // Ahat of a pair is the raw input of the token that computed it.
          ASSERT_EQ(r.a_eff.at(i, ch), c.a.at(p.root, ch));
        }
        if (p.kind == PairKind::Reuse) ++reused_somewhere;
      }
    const WideMatrix exact = gemm_exact(c.a, c.b);
    const WideMatrix approx = gemm_exact(r.a_eff, c.b);
    const auto bound = error_bound_per_column(c.cfg, c.b);
    for (int64_t i = 0; i < exact.rows; ++i)
      for (int64_t m = 0; m < exact.cols; ++m)
        ASSERT_LE(std::fabs(static_cast<double>(approx.at(i, m) - exact.at(i, m))), bound[static_cast<size_t>(m)])
            << "seed " << seed;
  }
  EXPECT_GT(reused_somewhere, 1000);  // the property was exercised, not vacuous
}

TEST(Reuse, TauZeroReusesOnlyIdenticalGroups) {
  ReuseConfig cfg;
  cfg.grid = {3, 4, 4};
  cfg.channels = 8;
  cfg.group_w = 4;
  cfg.policy = Policy::Fixed;
  // Values in {0, 1}: many identical groups, many different ones.
  IntMatrix a = make_int_uniform(cfg.grid.tokens(), cfg.channels, 2, 5);
  for (auto& v : a.data) v = v < 0 ? 0 : 1;
  const IntReuse r = run_reuse(cfg, a);
  const ScanOrder scan(cfg.grid, 0, 0);
  int64_t identical_first_ref = 0;
  for (int32_t i = 0; i < a.rows; ++i)
    for (int g = 0; g < 2; ++g) {
      const PairDecision& p = r.at(i, g);
      bool any_identical = false;
      for (Axis ax : cfg.fixed_axes) {
        const int32_t ref = scan.reference(i, ax);
        if (ref >= 0 && group_difference(a, r.a_eff, i, ref, g, 4) == 0) any_identical = true;
      }
      if (p.kind == PairKind::Reuse) {
        EXPECT_EQ(group_difference(a, r.a_eff, i, p.ref, g, 4), 0);
        ++identical_first_ref;
      }
      EXPECT_EQ(p.kind == PairKind::Reuse, any_identical) << "token " << i << " group " << g;
    }
  EXPECT_GT(identical_first_ref, 0);
}

TEST(Reuse, TauAtMaximumReusesEveryPairThatHasAReference) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    auto c = random_case(seed);
    c.cfg.tau.assign(static_cast<size_t>(c.cfg.groups()), c.cfg.tau_max());
    c.cfg.group_enable.clear();
    const IntReuse r = run_reuse(c.cfg, c.a);
    const ScanOrder scan(c.cfg.grid, c.cfg.tile_h, c.cfg.tile_w);
    for (int32_t i = 0; i < c.a.rows; ++i)
      for (int g = 0; g < c.cfg.groups(); ++g) {
        bool has_ref = false;
        for (Axis ax : c.cfg.allowed_axes(g)) {
          const int32_t ref = scan.reference(i, ax);
          if (ref >= 0 && scan.pos_of(i) - scan.pos_of(ref) <= r.window_depth) has_ref = true;
        }
        ASSERT_EQ(r.at(i, g).kind == PairKind::Reuse, has_ref) << "seed " << seed << " token " << i;
      }
  }
}

TEST(Reuse, FirstTokenInScanOrderAlwaysComputes) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    auto c = random_case(seed);
    c.cfg.tau.assign(static_cast<size_t>(c.cfg.groups()), c.cfg.tau_max());
    const IntReuse r = run_reuse(c.cfg, c.a);
    const ScanOrder scan(c.cfg.grid, c.cfg.tile_h, c.cfg.tile_w);
    for (int g = 0; g < c.cfg.groups(); ++g) EXPECT_EQ(r.at(scan.token_at(0), g).kind, PairKind::Compute);
  }
}

TEST(Reuse, ReferencesPrecedeDependantsAndRespectTheWindow) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const auto c = random_case(seed);
    const IntReuse r = run_reuse(c.cfg, c.a);
    const ScanOrder scan(c.cfg.grid, c.cfg.tile_h, c.cfg.tile_w);
    for (int32_t i = 0; i < c.a.rows; ++i)
      for (int g = 0; g < c.cfg.groups(); ++g) {
        const PairDecision& p = r.at(i, g);
        if (p.kind != PairKind::Reuse) continue;
        ASSERT_EQ(scan.reference(i, p.axis), p.ref);
        const int64_t dist = scan.pos_of(i) - scan.pos_of(p.ref);
        ASSERT_GT(dist, 0);
        ASSERT_LE(dist, r.window_depth);
        bool allowed = false;
        for (Axis ax : c.cfg.allowed_axes(g)) allowed |= ax == p.axis;
        ASSERT_TRUE(allowed);
        ASSERT_TRUE(c.cfg.group_enabled(g));
      }
  }
}

TEST(Reuse, ClosedLoopStaysWithinTauAlongALongChainWhileOpenLoopDrifts) {
  // One row of 64 tokens whose value ramps by 1 per token: every neighbour
  // passes tau = 2, so a chain along w forms.
  ReuseConfig cfg;
  cfg.grid = {1, 1, 64};
  cfg.channels = 1;
  cfg.group_w = 1;
  cfg.out_cols = 1;
  cfg.policy = Policy::Fixed;
  cfg.fixed_axes = {Axis::W};
  cfg.tau = {2};
  IntMatrix a(64, 1);
  for (int w = 0; w < 64; ++w) a.at(w, 0) = w - 32;

  const IntReuse closed = run_reuse(cfg, a);
  int64_t closed_worst = 0;
  for (int w = 0; w < 64; ++w) closed_worst = std::max<int64_t>(closed_worst, std::llabs(a.at(w, 0) - closed.a_eff.at(w, 0)));
  EXPECT_LE(closed_worst, 2);
  EXPECT_GT(closed.counters.reused_pairs, 30);

  cfg.closed_loop = false;
  const IntReuse open = run_reuse(cfg, a);
  int64_t open_worst = 0;
  for (int w = 0; w < 64; ++w) open_worst = std::max<int64_t>(open_worst, std::llabs(a.at(w, 0) - open.a_eff.at(w, 0)));
  EXPECT_EQ(open_worst, 63);  // every token reuses the first one: error grows along the chain
}

TEST(Reuse, AdaptivePicksTheSmallestPassingDifference) {
  ReuseConfig cfg;
  cfg.grid = {2, 2, 2};
  cfg.channels = 2;
  cfg.group_w = 2;
  cfg.policy = Policy::Adaptive;
  cfg.tau = {10};
  IntMatrix a(8, 2, 0);
  // Token (1,1,1) = index 7; refs: t -> 3, h -> 5, w -> 6.
  a.at(3, 0) = 9;
  a.at(5, 0) = 4;
  a.at(6, 0) = 7;
  a.at(7, 0) = 0;
  // Keep the references themselves computing so their Ahat equals A.
  cfg.tau = {3};
  IntReuse r = run_reuse(cfg, a);
  EXPECT_EQ(r.at(7, 0).kind, PairKind::Compute);  // no reference within 3 of 0 (ref values 9, 4, 7)
  a.at(7, 0) = 6;  // differences: t 3, h 2, w 1 -> w wins
  r = run_reuse(cfg, a);
  ASSERT_EQ(r.at(7, 0).kind, PairKind::Reuse);
  EXPECT_EQ(r.at(7, 0).axis, Axis::W);
  cfg.policy = Policy::RopeOrthogonal;  // no RoPE: all axes in order t, h, w; first passing wins
  r = run_reuse(cfg, a);
  ASSERT_EQ(r.at(7, 0).kind, PairKind::Reuse);
  EXPECT_EQ(r.at(7, 0).axis, Axis::T);
}

TEST(Reuse, RopeOrthogonalGroupsNeverReuseAlongTheirOwnAxes) {
  ReuseConfig cfg;
  cfg.grid = {3, 3, 3};
  cfg.channels = 128;
  cfg.group_w = 8;
  cfg.band = parse_band_split("wan2.1");
  // 44/42/42: group 5 (channels 40..47) straddles t and h, so only w is allowed.
  EXPECT_EQ(cfg.rope_mask(0), axis_bit(Axis::T));
  EXPECT_EQ(cfg.rope_mask(5), axis_bit(Axis::T) | axis_bit(Axis::H));
  EXPECT_EQ(cfg.rope_mask(15), axis_bit(Axis::W));
  ASSERT_EQ(cfg.allowed_axes(5).size(), 1u);
  EXPECT_EQ(cfg.allowed_axes(5)[0], Axis::W);
  cfg.tau.assign(16, cfg.tau_max());
  const IntMatrix a = make_int_uniform(27, 128, 8, 3);
  const IntReuse r = run_reuse(cfg, a);
  for (int32_t i = 0; i < 27; ++i)
    for (int g = 0; g < 16; ++g)
      if (r.at(i, g).kind == PairKind::Reuse) {
        EXPECT_FALSE(cfg.rope_mask(g) & axis_bit(r.at(i, g).axis));
      }
}

TEST(Reuse, TokenLevelBaselineReusesWholeTokensOnly) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    auto c = random_case(seed);
    c.cfg.mode = Mode::TokenReuse;
    const IntReuse r = run_reuse(c.cfg, c.a);
    for (int32_t i = 0; i < c.a.rows; ++i)
      for (int g = 1; g < c.cfg.groups(); ++g) {
        ASSERT_EQ(r.at(i, g).kind, r.at(i, 0).kind);
        ASSERT_EQ(r.at(i, g).ref, r.at(i, 0).ref);
      }
    EXPECT_EQ(r.counters.reused_pairs, r.counters.tokens_fully_reused * c.cfg.groups());
    // Channel-wise decisions reuse at least as many pairs as whole-token ones
    // on the same thresholds only when policies agree; check the dense baseline instead.
    c.cfg.mode = Mode::Dense;
    EXPECT_EQ(run_reuse(c.cfg, c.a).counters.reused_pairs, 0);
  }
}

TEST(Reuse, CountersAddUp) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const auto c = random_case(seed);
    const ReuseCounters k = run_reuse(c.cfg, c.a).counters;
    const int64_t per_pair = static_cast<int64_t>(c.cfg.group_w) * c.cfg.out_cols;
    EXPECT_EQ(k.pairs, c.cfg.grid.tokens() * c.cfg.groups());
    EXPECT_EQ(k.macs_issued + k.macs_skipped, c.cfg.grid.tokens() * c.cfg.channels * c.cfg.out_cols);
    EXPECT_EQ(k.macs_skipped, k.reused_pairs * per_pair);
    int64_t by_group = 0, by_axis = 0;
    for (int64_t v : k.reused_per_group) by_group += v;
    for (int64_t v : k.reused_per_axis) by_axis += v;
    EXPECT_EQ(by_group, k.reused_pairs);
    EXPECT_EQ(by_axis, k.reused_pairs);
  }
}

TEST(Reuse, FloatPathKeepsTheBoundAndMatchesThePartialRoute) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const auto c = random_case(seed);
    const FloatMatrix a = make_latent(testing::latent_spec(c.cfg, seed));
    const FloatMatrix b = make_float_weights(c.cfg.channels, c.cfg.out_cols, seed);
    ReuseConfig cfg = c.cfg;
    cfg.tau_float.assign(static_cast<size_t>(cfg.groups()), 0.3f);
    const FloatReuse r = run_reuse(cfg, a);
    for (size_t k = 0; k < a.data.size(); ++k) ASSERT_LE(std::fabs(a.data[k] - r.a_eff.data[k]), 0.3f + 1e-6f);
    const FloatMatrix p = reuse_output(cfg, a, b, r);
    const FloatMatrix q = gemm(r.a_eff, b);
    for (size_t k = 0; k < p.data.size(); ++k) ASSERT_NEAR(p.data[k], q.data[k], 1e-4);
  }
}

// The streamed path keeps only the window (a ring of window_depth + 1 rows) yet decides every token as the whole
// matrix does: the same decisions (roots included), Ahat rows and counters, with the thresholds, windows, tiles,
// policies and distances of many random cases (a reference exactly window_depth back is the ring's oldest slot).
TEST(Reuse, StreamedRowsDecideExactlyAsTheWholeMatrix) {
  int reused = 0, ring_smaller = 0;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    const auto c = random_case(seed);
    SyntheticSpec s = testing::latent_spec(c.cfg, seed);
    s.spatial_corr = 0.9;
    s.temporal_corr = 0.95;
    const FloatMatrix a = make_latent(s);
    ReuseConfig cfg = c.cfg;
    cfg.distance = static_cast<Distance>(seed % 3);
    if (seed % 7 == 0) cfg.mode = Mode::TokenReuse;
    for (int g = 0; g < cfg.groups(); ++g) cfg.tau_float.push_back(0.05f + 0.1f * static_cast<float>((seed + g) % 5));
    const FloatReuse whole = run_reuse(cfg, a);
    StreamedReuse st(cfg);
    ASSERT_EQ(st.size(), a.rows);
    ASSERT_LE(st.ring_rows(), whole.window_depth + 1);
    ring_smaller += st.ring_rows() < a.rows;
    const int G = cfg.groups();
    while (st.next_token() >= 0) {
      const int32_t tok = st.next_token();
      const float* ahat = st.push(a.row(tok));
      for (int k = 0; k < cfg.channels; ++k) ASSERT_EQ(ahat[k], whole.a_eff.at(tok, k)) << "seed " << seed;
      const PairDecision* d = st.decisions_of_last();
      for (int g = 0; g < G; ++g) ASSERT_EQ(d[g], whole.at(tok, g)) << "seed " << seed << " token " << tok;
    }
    EXPECT_THROW(st.push(a.row(0)), InternalError);
    const ReuseCounters got = st.counters(), want = whole.counters;
    ASSERT_EQ(got.pairs, want.pairs);
    ASSERT_EQ(got.reused_pairs, want.reused_pairs);
    ASSERT_EQ(got.reused_per_group, want.reused_per_group);
    ASSERT_EQ(got.reused_per_axis, want.reused_per_axis);
    ASSERT_EQ(got.tokens_fully_reused, want.tokens_fully_reused);
    ASSERT_EQ(got.refs_beyond_window, want.refs_beyond_window);
    ASSERT_EQ(got.macs_issued, want.macs_issued);
    ASSERT_EQ(got.macs_skipped, want.macs_skipped);
    reused += want.reused_pairs > 0;
  }
  EXPECT_GT(reused, 60);        // the cases exercise reuse,
  EXPECT_GT(ring_smaller, 60);  // with rings smaller than the grid
}

TEST(Reuse, StreamedCountersAreRefusedBeforeTheLastToken) {
  const auto c = random_case(3);
  ReuseConfig cfg = c.cfg;
  cfg.tau_float.assign(static_cast<size_t>(cfg.groups()), 0.1f);
  StreamedReuse st(cfg);
  EXPECT_THROW(st.decisions_of_last(), InternalError);
  if (st.size() > 1) {
    std::vector<float> row(static_cast<size_t>(cfg.channels), 0.0f);
    st.push(row.data());
    EXPECT_THROW(st.counters(), InternalError);
  }
  std::vector<float> bad(static_cast<size_t>(cfg.channels), std::nanf(""));
  if (st.next_token() >= 0) {
    EXPECT_THROW(st.push(bad.data()), ConfigError);
  }
}

}  // namespace
}  // namespace kaleido
