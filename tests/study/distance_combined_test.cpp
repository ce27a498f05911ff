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

}  // namespace
}  // namespace kaleido::study
