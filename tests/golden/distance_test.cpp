// The group distance option (max, l1, l2) of the float path, on cases worked by hand; and that nothing which
// drives the hardware accepts anything but max.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"

#include "common/error.hpp"
#include "golden/reuse.hpp"
#include "helpers.hpp"
#include "support/test_dir.hpp"

namespace kaleido {
namespace {

// One group of 4 channels, no RoPE (every axis allowed), float thresholds.
ReuseConfig one_group(const Grid& grid, Distance distance, float tau, Policy policy = Policy::RopeOrthogonal) {
  ReuseConfig c;
  c.grid = grid;
  c.channels = 4;
  c.group_w = 4;
  c.out_cols = 1;
  c.policy = policy;
  c.distance = distance;
  c.tau_float = {tau};
  return c;
}

FloatMatrix rows(const std::vector<std::vector<float>>& v) {
  FloatMatrix m(static_cast<int64_t>(v.size()), static_cast<int64_t>(v.front().size()));
  for (size_t i = 0; i < v.size(); ++i)
    for (size_t c = 0; c < v[i].size(); ++c) m.at(static_cast<int64_t>(i), static_cast<int64_t>(c)) = v[i][c];
  return m;
}

bool token1_reuses(Distance d, float tau, const FloatMatrix& a) {
  return run_reuse(one_group(Grid{1, 1, 2}, d, tau), a).at(1, 0).kind == PairKind::Reuse;
}

TEST(Distance, TwoTokensOneGroupWorkedByHand) {
  // Token 1 (w = 1) against its w reference, token 0. Differences 0.5, 0.5, 0.5, 2:
  //   max |d|            = 2
  //   mean |d|  (l1)     = 3.5 / 4 = 0.875
  //   RMS of d  (l2)     = sqrt((3 * 0.25 + 4) / 4) = sqrt(1.1875) = 1.0897
  const FloatMatrix a = rows({{0, 0, 0, 0}, {0.5f, 0.5f, 0.5f, 2.0f}});
  EXPECT_FALSE(token1_reuses(Distance::Max, 1.0f, a));
  EXPECT_TRUE(token1_reuses(Distance::L1, 1.0f, a));
  EXPECT_FALSE(token1_reuses(Distance::L2, 1.0f, a));
  // Around each hand-computed distance: just below fails, at or above passes.
  EXPECT_FALSE(token1_reuses(Distance::Max, 1.99f, a));
  EXPECT_TRUE(token1_reuses(Distance::Max, 2.0f, a));
  EXPECT_FALSE(token1_reuses(Distance::L1, 0.87f, a));
  EXPECT_TRUE(token1_reuses(Distance::L1, 0.875f, a));
  EXPECT_FALSE(token1_reuses(Distance::L2, 1.089f, a));
  EXPECT_TRUE(token1_reuses(Distance::L2, 1.0898f, a));
  // A reused pair takes the reference's effective inputs.
  const FloatReuse r = run_reuse(one_group(Grid{1, 1, 2}, Distance::L1, 1.0f), a);
  for (int c = 0; c < 4; ++c) EXPECT_EQ(r.a_eff.at(1, c), 0.0f);
  EXPECT_EQ(r.counters.reused_pairs, 1);
}

TEST(Distance, ATauMeansTheSameForAUniformDifference) {
  // Every channel differs by 0.5: max, mean and RMS are all 0.5, so tau = 0.5 passes and 0.49 fails for each.
  const FloatMatrix a = rows({{1, 2, 3, 4}, {1.5f, 1.5f, 3.5f, 3.5f}});
  for (Distance d : {Distance::Max, Distance::L1, Distance::L2}) {
    EXPECT_TRUE(token1_reuses(d, 0.5f, a)) << distance_name(d);
    EXPECT_FALSE(token1_reuses(d, 0.49f, a)) << distance_name(d);
  }
}

TEST(Distance, AdaptiveRanksReferencesByTheChosenDistance) {
  // Grid 2 x 1 x 2. Token 3 = (t 1, w 1) has references token 1 (along t) and token 2 (along w):
  //   token 1 = (1, 0, 0, 0):         max 1,   sum |d| 1,   sum d^2 1
  //   token 2 = (0.6, 0.6, 0.6, 0.6): max 0.6, sum |d| 2.4, sum d^2 1.44
  // Token 0 is far from both, so tokens 1 and 2 compute and keep their raw values.
  const FloatMatrix a = rows({{10, 10, 10, 10}, {1, 0, 0, 0}, {0.6f, 0.6f, 0.6f, 0.6f}, {0, 0, 0, 0}});
  const Grid g{2, 1, 2};
  struct Want {
    Distance d;
    int32_t ref;
    Axis axis;
  };
  for (const Want& w :
       {Want{Distance::Max, 2, Axis::W}, Want{Distance::L1, 1, Axis::T}, Want{Distance::L2, 1, Axis::T}}) {
    const FloatReuse r = run_reuse(one_group(g, w.d, 2.0f, Policy::Adaptive), a);
    EXPECT_EQ(r.at(1, 0).kind, PairKind::Compute) << distance_name(w.d);
    EXPECT_EQ(r.at(2, 0).kind, PairKind::Compute) << distance_name(w.d);
    const PairDecision& p = r.at(3, 0);
    ASSERT_EQ(p.kind, PairKind::Reuse) << distance_name(w.d);
    EXPECT_EQ(p.ref, w.ref) << distance_name(w.d);
    EXPECT_EQ(p.axis, w.axis) << distance_name(w.d);
  }
}

TEST(Distance, HardwarePathsRefuseAnythingButMax) {
  ReuseConfig c;
  c.distance = Distance::L2;
  c.validate();  // a valid configuration for the study's float path
  try {
    c.validate_for_hardware();
    FAIL() << "l2 accepted for a hardware run";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("l2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("max"), std::string::npos) << e.what();
  }
  c.distance = Distance::Max;
  EXPECT_NO_THROW(c.validate_for_hardware());
  // The integer path models the detector: it refuses l1 and l2 too.
  c.distance = Distance::L1;
  const IntMatrix a(c.grid.tokens(), c.channels);
  EXPECT_THROW(run_reuse(c, a), ConfigError);
  EXPECT_THROW(parse_distance("l3"), ConfigError);
}

TEST(Distance, GoldenCommandRefusesL2NamingTheValueAndWhy) {
  const kaleido::testing::TestDir dir("distance_cli");
  const std::string log = (dir / "log").string(), out = (dir / "v.kvec").string();
  const std::string cmd = std::string(KALEIDO_TEST_KALEIDO_BIN) + " golden --distance l2 --tau 4 -o " + out + " > " +
                          log + " 2>&1";
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_NE(WEXITSTATUS(rc), 0);
  const std::string text = read_file(log);
  EXPECT_NE(text.find("l2"), std::string::npos) << text;
  EXPECT_NE(text.find("max |x - y|"), std::string::npos) << text;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(Distance, JsonKeepsTheDistanceAndOlderFilesMeanMax) {
  ReuseConfig c;
  c.distance = Distance::L1;
  nlohmann::json j = c;
  EXPECT_EQ(j["distance"], "l1");
  EXPECT_EQ(j.get<ReuseConfig>().distance, Distance::L1);
  j.erase("distance");
  EXPECT_EQ(j.get<ReuseConfig>().distance, Distance::Max);
}

}  // namespace
}  // namespace kaleido
