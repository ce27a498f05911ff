// The random soak (gen/soak): a short local soak on one configuration is
// bit-exact, and about a quarter of its runs go through a reset in the middle
// of a run (the testbench reports each reset as applied, or the run fails).
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "soak/soak.hpp"
#include "support/test_dir.hpp"

namespace kaleido {
namespace {

TEST(Soak, ShortLocalSoakIsBitExactAndSomeRunsAreCutByAReset) {
  testing::TestDir dir("soak");
  soak::Options opt;
  opt.runs = 16;
  opt.seed = 7;
  opt.configs = 1;  // one testbench to build
  opt.jobs = 2;
  opt.out = dir.path();
  const soak::Summary s = soak::run_local(opt);
  EXPECT_EQ(s.runs, 16);
  EXPECT_EQ(s.failures, 0) << s.to_json().dump(1);
  EXPECT_EQ(s.not_run, 0);
  // 1 in 4 on average: 16 runs with this seed have some with a reset and some without.
  EXPECT_GT(s.runs_with_reset, 0);
  EXPECT_LT(s.runs_with_reset, 16);
}

TEST(Soak, ConfigsOutOfRangeIsAConfigError) {
  soak::Options opt;
  opt.configs = static_cast<int>(soak::soak_configs().size()) + 1;
  EXPECT_THROW(soak::drawn_configs(opt), ConfigError);
  opt.configs = 2;
  EXPECT_EQ(soak::drawn_configs(opt).size(), 2u);
}

}  // namespace
}  // namespace kaleido
