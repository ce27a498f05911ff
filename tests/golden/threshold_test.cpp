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
