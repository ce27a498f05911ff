// The study's all-axes adaptive reuse with each group distance, and the combined method (reuse inside the kept
// tiles of the oracle block mask).
#include <gtest/gtest.h>

#include <cmath>

#include "golden/random.hpp"
#include "golden/reuse.hpp"
#include "study/attention.hpp"
#include "study/methods.hpp"

namespace kaleido::study {
namespace {

// Q, K, V of one head on `g` with smooth queries (neighbours alike, so that pairs are reused) and random K, V.
AttentionInputs smooth_head(const Grid& g, int d, uint64_t seed) {
  AttentionInputs in;
  in.grid = g;
  in.head_dim = d;
  in.rope = Rope3d{{d / 2, d / 4, d / 4}, 10000.0};
  Rng rng(seed);
  for (FloatMatrix* m : {&in.q, &in.k, &in.v}) {
    *m = FloatMatrix(g.tokens(), d);
    for (auto& x : m->data) x = static_cast<float>(rng.normal());
  }
  for (int64_t i = 0; i < in.q.rows; ++i)
    for (int c = 0; c < d; ++c)
      in.q.at(i, c) = static_cast<float>(std::sin(0.2 * static_cast<double>(i) + c) + 0.1 * rng.normal());
  return in;
}

// RMS of each group of gw columns over all rows, computed here in double.
std::vector<double> rms_of_groups(const FloatMatrix& x, int gw) {
  std::vector<double> out;
  for (int64_t g = 0; g < x.cols / gw; ++g) {
    double s = 0.0;
    for (int64_t i = 0; i < x.rows; ++i)
      for (int64_t c = g * gw; c < (g + 1) * gw; ++c) s += static_cast<double>(x.at(i, c)) * x.at(i, c);
    out.push_back(std::sqrt(s / static_cast<double>(x.rows * gw)));
  }
  return out;
}

TEST(DistanceVariants, AllAxesAdaptiveL1AndL2KeepEachReusedGroupWithinTau) {
  const Grid g{3, 4, 5};
  const int d = 16, gw = 4;
  const AttentionInputs in = smooth_head(g, d, 5);
  const std::vector<double> rms = rms_of_groups(in.q, gw);
  const double knob = 0.6;
  for (Distance dist : {Distance::L1, Distance::L2}) {
    ReuseMethodSpec spec;
    spec.name = std::string("channel-reuse-adaptive-") + distance_name(dist);
    spec.group_w = gw;
    spec.policy = Policy::Adaptive;
    spec.all_axes = true;
    spec.distance = dist;
    auto m = make_reuse_method(in, spec);
    const Execution e = m->execute(knob);
    const nlohmann::json det = m->detail();
    EXPECT_EQ(det["distance"], distance_name(dist));
    int64_t reused = 0;
    for (const auto& grp : det["groups"]) {
      EXPECT_EQ(grp["allowed_axes"], "thw");  // every axis, RoPE band or not
      EXPECT_NE(grp["rope_axes"], "-");        // the band is still named
    }
    // The same decisions from the golden model, then the distance of every reused group checked directly:
    // mean |d| (l1) or RMS of d (l2) between the raw query group and its effective (copied) group <= tau.
    ReuseConfig c;
    c.grid = g;
    c.channels = d;
    c.out_cols = static_cast<int>(g.tokens());
    c.group_w = gw;
    c.policy = Policy::Adaptive;
    c.distance = dist;
    for (double r : rms) c.tau_float.push_back(static_cast<float>(knob * r));
    const FloatReuse want = run_reuse(c, in.q);
    for (int64_t i = 0; i < in.q.rows; ++i)
      for (int grp = 0; grp < d / gw; ++grp) {
        const PairDecision& p = want.at(static_cast<int32_t>(i), grp);
        if (p.kind != PairKind::Reuse) continue;
        ++reused;
        double s = 0.0;
        for (int ch = grp * gw; ch < (grp + 1) * gw; ++ch) {
          const double diff = static_cast<double>(in.q.at(i, ch)) - want.a_eff.at(i, ch);
          s += dist == Distance::L1 ? std::fabs(diff) : diff * diff;
        }
        const double dist_value = dist == Distance::L1 ? s / gw : std::sqrt(s / gw);
        EXPECT_LE(dist_value, knob * rms[static_cast<size_t>(grp)] * (1 + 1e-6)) << i << " " << grp;
      }
    EXPECT_GT(reused, 0);
    EXPECT_EQ(e.qk, (g.tokens() * (d / gw) - reused) * gw * g.tokens());  // compute pairs x Gw x N keys
  }
}

TEST(BlockReuse, NeverMoreMacsThanTheBlockMaskAloneAndTheSameOutputAtTauZero) {
  const Grid g{4, 4, 4};
  const int d = 16;
  const AttentionInputs in = smooth_head(g, d, 9);
  PeerParams p;
  p.block = BlockShape{2, 2, 2};  // 8 query blocks
  ReuseMethodSpec spec;
  spec.group_w = 4;
  auto oracle = make_oracle_block_method(in, p);
  std::vector<int32_t> all(static_cast<size_t>(g.tokens()));
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int32_t>(i);
  const AttentionEvaluator ev(in, all, 1);
  bool saved_more = false;
  for (double tau : {0.0, 0.3, 1.0}) {
    auto combined = make_oracle_block_reuse_method(in, p, spec, tau);
    EXPECT_EQ(combined->name(), "oracle-block-reuse");
    for (double keep : {0.2, 0.4, 0.7, 1.0}) {
      const Execution eo = oracle->execute(keep);
      const Execution ec = combined->execute(keep);  // the same mask: the same plan and knob
      EXPECT_EQ(combined->detail()["tiles_kept"], oracle->detail()["tiles_kept"]);
      EXPECT_LE(ec.qk, eo.qk) << tau << " " << keep;
      EXPECT_LE(ec.pv, eo.pv) << tau << " " << keep;
      saved_more |= ec.qk + ec.pv < eo.qk + eo.pv;
      if (tau == 0.0) {
        // No two query groups are equal here (noisy queries): nothing is reused, the output is the mask's.
        EXPECT_EQ(ec.qk, eo.qk);
        EXPECT_EQ(ec.pv, eo.pv);
        const AttentionQuality qo = oracle->evaluate(ev), qc = combined->evaluate(ev);
        EXPECT_EQ(qc.out.snr_db, qo.out.snr_db) << keep;
        EXPECT_EQ(qc.out.cosine, qo.out.cosine) << keep;
        EXPECT_EQ(qc.scores.snr_db, qo.scores.snr_db) << keep;
      }
    }
  }
  EXPECT_TRUE(saved_more);
}

TEST(BlockReuse, MacsCountedByHand) {
  // Four tokens along w with one and the same query; blocks {0, 1} and {2, 3}; the mask keeps the diagonal only,
  // so K(block 0) = keys {0, 1}, K(block 1) = keys {2, 3}. d = 4, two groups of 2, every group reuses its w
  // reference (token i - 1).
  //   Q K^T: token 0 computes 2 groups x 2 channels x 2 keys = 8; token 1 copies token 0 (same keys): 0;
  //          token 2 copies token 1, whose partials cover keys {0, 1}, and computes keys {2, 3}: 2 x 2 x 2 = 8;
  //          token 3 copies token 2 (same keys): 0. Total 16, against 4 tokens x 2 keys x 4 = 32 for the mask.
  //   P V:   rows 1 and 3 are copies of a reference in the same block; rows 0 and 2 cost 2 keys x 4 = 8 each: 16.
  const Grid g{1, 1, 4};
  const int d = 4;
  AttentionInputs in = smooth_head(g, d, 3);
  for (int64_t i = 1; i < in.q.rows; ++i)
    for (int c = 0; c < d; ++c) in.q.at(i, c) = in.q.at(0, c);
  PeerParams p;
  p.block = BlockShape{1, 1, 2};
  ReuseMethodSpec spec;
  spec.group_w = 2;
  spec.policy = Policy::Fixed;  // t, h, w for every group: here the w reference
  auto oracle = make_oracle_block_method(in, p);
  auto combined = make_oracle_block_reuse_method(in, p, spec, 0.0);
  const double keep = 0.3;  // below the diagonal's share (0.5): the diagonal alone
  const Execution eo = oracle->execute(keep);
  ASSERT_EQ(eo.qk, 32);
  ASSERT_EQ(eo.pv, 32);
  const Execution ec = combined->execute(keep);
  EXPECT_EQ(ec.dense, 4 * 4 * d);
  EXPECT_EQ(ec.qk, 16);
  EXPECT_EQ(ec.pv, 16);
  EXPECT_EQ(combined->detail()["rows_copied"], 2);
  // Identical queries: reuse changes nothing, the output is the block mask's.
  const AttentionEvaluator ev(in, {0, 1, 2, 3}, 1);
  EXPECT_EQ(combined->evaluate(ev).out.snr_db, oracle->evaluate(ev).out.snr_db);
}

}  // namespace
}  // namespace kaleido::study
