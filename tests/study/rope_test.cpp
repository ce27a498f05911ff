// 3D RoPE: scores depend on relative position only; the bands rotate at the
// documented frequencies.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "golden/random.hpp"
#include "workload/models.hpp"
#include "workload/qkv.hpp"
#include "workload/rope.hpp"

namespace kaleido::workload {
namespace {

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

std::vector<float> rotated(std::vector<float> v, const Rope3d& r, int t, int h, int w) {
  rope_rotate(v.data(), r, t, h, w);
  return v;
}

TEST(Rope, ScoreDependsOnlyOnRelativePositionForEveryModel) {
  Rng rng(42);
  for (const ModelShape& m : model_shapes()) {
    const Rope3d rope = model_rope(m);
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<float> q(static_cast<size_t>(rope.head_dim())), k(q.size());
      for (auto& x : q) x = static_cast<float>(rng.normal());
      for (auto& x : k) x = static_cast<float>(rng.normal());
      const int p[3] = {static_cast<int>(rng.range(0, 30)), static_cast<int>(rng.range(0, 60)), static_cast<int>(rng.range(0, 80))};
      const int r[3] = {static_cast<int>(rng.range(0, 30)), static_cast<int>(rng.range(0, 60)), static_cast<int>(rng.range(0, 80))};
      const int s[3] = {static_cast<int>(rng.range(-20, 20)), static_cast<int>(rng.range(-20, 20)), static_cast<int>(rng.range(-20, 20))};
      const double base = dot(rotated(q, rope, p[0], p[1], p[2]), rotated(k, rope, r[0], r[1], r[2]));
      const double moved =
          dot(rotated(q, rope, p[0] + s[0], p[1] + s[1], p[2] + s[2]), rotated(k, rope, r[0] + s[0], r[1] + s[1], r[2] + s[2]));
      EXPECT_NEAR(moved, base, 1e-3 * (1.0 + std::fabs(base))) << m.name;
      // Rotations keep the norm.
      EXPECT_NEAR(dot(rotated(q, rope, p[0], p[1], p[2]), rotated(q, rope, p[0], p[1], p[2])), dot(q, q), 1e-3 * dot(q, q));
    }
  }
}

TEST(Rope, ScoreChangesWithRelativePositionAlongEachAxis) {
  // q = k: the score at offset 0 is |q|^2 and strictly smaller at other offsets
  // (a generic vector has energy at non-zero frequencies in every band).
  const Rope3d rope = model_rope(find_model("wan2.1-1.3b"));
  Rng rng(3);
  std::vector<float> q(128);
  for (auto& x : q) x = static_cast<float>(rng.normal());
  const double self = dot(q, q);
  for (int axis = 0; axis < 3; ++axis) {
    int d[3] = {0, 0, 0};
    d[axis] = 1;
    const double off = dot(rotated(q, rope, 5, 5, 5), rotated(q, rope, 5 + d[0], 5 + d[1], 5 + d[2]));
    EXPECT_LT(off, self - 1e-3) << "axis " << axis;
  }
}

TEST(Rope, BandsRotateTheirOwnPairsAtThetaPowers) {
  // Wan2.1: t band channels 0-43, h 44-85, w 86-127; pair k of a band of size
  // B turns by pos * theta^(-2k/B).
  const Rope3d rope{{44, 42, 42}, 10000.0};
  std::vector<float> e(128, 0.0f);
  e[0] = 1.0f;    // t band, pair 0: frequency 1
  e[46] = 1.0f;   // h band, pair 1: 10000^(-2/42)
  e[126] = 1.0f;  // w band, pair 20 (last): 10000^(-40/42)
  const auto r = rotated(e, rope, 2, 3, 7);
  EXPECT_NEAR(r[0], std::cos(2.0), 1e-6);
  EXPECT_NEAR(r[1], std::sin(2.0), 1e-6);
  const double fh = 3.0 * std::pow(10000.0, -2.0 / 42.0);
  EXPECT_NEAR(r[46], std::cos(fh), 1e-6);
  EXPECT_NEAR(r[47], std::sin(fh), 1e-6);
  const double fw = 7.0 * std::pow(10000.0, -40.0 / 42.0);
  EXPECT_NEAR(r[126], std::cos(fw), 1e-6);
  EXPECT_NEAR(r[127], std::sin(fw), 1e-6);
  for (int c : {2, 3, 44, 45, 86, 87}) EXPECT_EQ(r[static_cast<size_t>(c)], 0.0f) << c;
}

TEST(Rope, HunyuanUsesThetaTwoHundredFiftySix) {
  const Rope3d rope = model_rope(find_model("hunyuanvideo"));
  EXPECT_EQ(rope.theta, 256.0);
  std::vector<float> e(128, 0.0f);
  e[16 + 2] = 1.0f;  // h band (56 channels), pair 1
  const auto r = rotated(e, rope, 0, 4, 0);
  EXPECT_NEAR(r[18], std::cos(4.0 * std::pow(256.0, -2.0 / 56.0)), 1e-6);
}

}  // namespace
}  // namespace kaleido::workload
