#include <gtest/gtest.h>

#include <filesystem>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "golden/gemm.hpp"
#include "golden/metrics.hpp"
#include "golden/threshold.hpp"
#include "helpers.hpp"

namespace kaleido {
namespace {

using testing::temp_path;

ReuseConfig base() {
  ReuseConfig c;
  c.grid = {4, 8, 8};
  c.channels = 32;
  c.group_w = 8;
  c.out_cols = 8;
  return c;
}

IntMatrix latent(const ReuseConfig& c, uint64_t seed) {
  SyntheticSpec s;
  s.grid = c.grid;
  s.channels = c.channels;
  s.seed = seed;
  return quantize(make_latent(s), c.data_w).q;
}

TEST(Thresholds, KnobTimesGroupRms) {
  ReuseConfig c = base();
  c.grid = {1, 1, 2};
  c.channels = 16;  // two groups
  c.data_w = 4;     // tau_max 15
  IntMatrix a(2, 16);
  for (int i = 0; i < 2; ++i)
    for (int ch = 0; ch < 16; ++ch) a.at(i, ch) = ch < 8 ? (ch % 2 ? 3 : -3) : (i ? 6 : 0);
  // Group 0: every value +-3, RMS 3. Group 1: half 0, half 6, RMS sqrt(18) = 4.2426.
  EXPECT_EQ(thresholds_from_knob(c, a, 1.5), (std::vector<uint32_t>{5, 6}));  // 4.5 rounds up; 6.36
  EXPECT_EQ(thresholds_from_knob(c, a, 0.0), (std::vector<uint32_t>{0, 0}));
  EXPECT_EQ(thresholds_from_knob(c, a, 100.0), (std::vector<uint32_t>{15, 15}));  // at most tau_max
  EXPECT_THROW(thresholds_from_knob(c, a, -1.0), ConfigError);
}

TEST(Thresholds, BlockScheduleRoundTripAndLookup) {
  KnobSchedule k;
  k.source = "test";
  k.group_w = 8;
  k.policy = "adaptive";
  k.distance = "max";
  k.steps.push_back({10, 0.9, 30.0, {{"qk", {0.5, 0.25}}, {"qkv", {1.0}}}});
  k.steps.push_back({10, 0.9, 20.0, {{"qk", {0.75, 0.5}}, {"qkv", {2.0}}}});
  k.steps.push_back({30, 0.5, 30.0, {{"qk", {1.5, 1.25}}, {"qkv", {3.0}}}});
  const std::string path = temp_path("knobs.json");
  write_file_atomic(path, k.to_json());
  const KnobSchedule r = KnobSchedule::load(path);
  EXPECT_EQ(r.to_json(), k.to_json());
  EXPECT_EQ(r.knob("qk", 1, 30, -1.0), 1.25);
  EXPECT_EQ(r.knob("qk", 0, 10, 20.0), 0.75);
  EXPECT_EQ(r.knob("qkv", 0, 10, 30.0), 1.0);
  EXPECT_THROW(r.knob("qk", 0, 10, -1.0), ConfigError);  // two targets at step 10: say which
  EXPECT_THROW(r.knob("qk", 0, 20, -1.0), ConfigError);  // no step 20
  EXPECT_THROW(r.knob("qk", 2, 30, -1.0), ConfigError);  // two heads
  EXPECT_THROW(r.knob("pv", 0, 30, -1.0), ConfigError);
  EXPECT_THROW(r.knob("qk", 0, 30, 25.0), ConfigError);
  // Not a schedule, or a negative knob: the file is named.
  write_file_atomic(path, R"({"tau": [[1, 2]]})");
  EXPECT_THROW(KnobSchedule::load(path), FileError);
  std::string text = k.to_json();
  text.replace(text.find("0.25"), 4, "-0.2");
  write_file_atomic(path, text);
  try {
    KnobSchedule::load(path);
    FAIL() << "a negative knob must be refused";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("knob -0.2"), std::string::npos) << e.what();
  }
}

TEST(Thresholds, ScheduleFromCsvAndJson) {
  const std::string csv = temp_path("sched.csv"), json = temp_path("sched.json");
  write_file_atomic(csv, "# step, one value per group\n4, 5\n 8 ,9\n");
  write_file_atomic(json, R"({"tau": [[1, 2], [3, 4], [5, 6]]})");
  const auto s = ThresholdSchedule::load(csv);
  ASSERT_EQ(s.steps(), 2);
  EXPECT_EQ(s.at_step(1), (std::vector<uint32_t>{8, 9}));
  EXPECT_NO_THROW(s.validate(2, 8));
  EXPECT_THROW(s.validate(3, 8), ConfigError);  // wrong length
  EXPECT_THROW(s.at_step(2), ConfigError);
  EXPECT_EQ(ThresholdSchedule::load(json).at_step(2), (std::vector<uint32_t>{5, 6}));
  write_file_atomic(csv, "4, x\n");
  EXPECT_THROW(ThresholdSchedule::load(csv), FileError);
  EXPECT_THROW(ThresholdSchedule::load(csv + ".missing"), FileError);
  std::filesystem::remove(csv);
  std::filesystem::remove(json);
}

TEST(Thresholds, CalibrationReachesTheReuseTargetWithTheSmallestThresholds) {
  ReuseConfig c = base();
  const IntMatrix a = latent(c, 4);
  for (double target : {0.2, 0.5, 0.8}) {
    const Calibration cal = calibrate_reuse_ratio(c, a, target);
    ReuseConfig probe = c;
    probe.tau = cal.tau;
    const IntReuse r = run_reuse(probe, a);
    for (int g = 0; g < c.groups(); ++g) {
      EXPECT_GE(r.counters.group_ratio(g, c.grid.tokens()), target) << "group " << g;
      if (cal.tau[g] == 0) continue;
      ReuseConfig lower = probe;
      lower.tau[g] -= 1;  // one less falls short (groups are independent)
      EXPECT_LT(run_reuse(lower, a).counters.group_ratio(g, c.grid.tokens()), target) << "group " << g;
    }
  }
}

TEST(Thresholds, CalibrationForPsnrMeetsTheTarget) {
  ReuseConfig c = base();
  const IntMatrix a = latent(c, 5);
  const IntMatrix b = make_int_uniform(c.channels, c.out_cols, 8, 6);
  const Calibration cal = calibrate_psnr(c, a, b, 40.0);
  EXPECT_GE(cal.achieved, 40.0);
  ReuseConfig probe = c;
  probe.tau = cal.tau;
  const Quality q = compare(gemm_exact(run_reuse(probe, a).a_eff, b), gemm_exact(a, b));
  EXPECT_GE(q.psnr_db, 40.0);
  EXPECT_GT(run_reuse(probe, a).counters.reused_pairs, 0);
}

}  // namespace
}  // namespace kaleido
