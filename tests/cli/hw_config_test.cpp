// One configuration: HwConfig's field table drives the command line, JSON,
// parameter_list and name(); name() identifies every parameter; the
// algorithm's widths must match the hardware's in sim and flow.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/process.hpp"
#include "hw/hw_config.hpp"
#include "support/test_dir.hpp"

namespace kaleido::hw {
namespace {

TEST(HwConfigName, PinnedByAnIndependentHash) {
  // Computed outside kaleido (Python): FNV-1a 64 over "ROWS=8;COLS=8;DATA_W=8;ACC_W=32;GROUP_W=8;MAX_T=4;MAX_H=16;
  // MAX_W=16;MAX_K=64;MAX_M=64;LANES=4;WIN_CAP=256;POLICIES=7;MUL_PIPE=0;", high and low 32 bits XORed
  // (the 16x16: ROWS=16;COLS=16;...;LANES=8;...).
  EXPECT_EQ(default_config_8x8().name(), "r8c8_d8a32_g8_27531cf5");
  EXPECT_EQ(default_config_16x16().name(), "r16c16_d8a32_g8_d9c5082f");
}

TEST(HwConfigName, ChangesWithEveryParameter) {
  const HwConfig base = default_config_8x8();
  for (const HwField& f : hw_fields()) {
    HwConfig c = base;
    f.set(c, f.resolved(base) + 1);
    EXPECT_NE(c.name(), base.name()) << f.key;
  }
}

TEST(HwConfigName, AutomaticValuesNameTheHardwareTheyResolveTo) {
  HwConfig a = default_config_8x8(), b = a;
  b.lanes = a.det_lanes();
  b.win_cap = a.window_cap();
  EXPECT_EQ(a.name(), b.name());
}

TEST(HwConfigLanes, SizedByTheScheduleUnlessGiven) {
  // 4 lanes per segment keep detection within the first m-tile's passes up to r = 3/4; never more
  // lanes than groups.
  const auto lanes = [](int rows, int group_w, int max_k, int given) {
    HwConfig c;
    c.rows = c.cols = rows;
    c.group_w = group_w;
    c.max_k = max_k;
    c.lanes = given;
    c.validate();
    return c.det_lanes();
  };
  EXPECT_EQ(lanes(8, 8, 64, 0), 4);     // 8 groups, one segment
  EXPECT_EQ(lanes(16, 8, 64, 0), 8);    // 8 groups, two segments: all
  EXPECT_EQ(lanes(2, 2, 64, 0), 4);     // 32 groups, one segment
  EXPECT_EQ(lanes(8, 2, 64, 0), 16);    // 32 groups, four segments
  EXPECT_EQ(lanes(16, 2, 64, 0), 32);   // 32 groups, eight segments: all
  EXPECT_EQ(lanes(8, 8, 16, 0), 2);     // 2 groups
  EXPECT_EQ(lanes(8, 8, 64, 8), 8);     // given
  EXPECT_EQ(lanes(8, 8, 64, 1), 1);
}

TEST(HwConfigFields, OneTableForParametersAndJson) {
  const HwConfig c = default_config_16x16();
  const auto params = c.parameter_list();
  ASSERT_EQ(params.size(), hw_fields().size());
  const nlohmann::json j = c;
  ASSERT_EQ(j.size(), hw_fields().size());
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(params[i].first, hw_fields()[i].param);
    EXPECT_EQ(j.at(hw_fields()[i].key).get<int64_t>(), std::stoll(params[i].second)) << hw_fields()[i].key;
  }
  const HwConfig back = j.get<HwConfig>();
  EXPECT_EQ(back.name(), c.name());
  EXPECT_EQ(back.parameter_list(), params);
}

TEST(HwConfigFields, JsonIsStrict) {
  auto error_of = [](const char* text) -> std::string {
    try {
      nlohmann::json::parse(text).get<HwConfig>();
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(R"({"rows": 4, "max_kk": 16})").find("max_kk = 16: unknown hardware parameter; did you mean max_k?"),
            std::string::npos)
      << error_of(R"({"rows": 4, "max_kk": 16})");
  EXPECT_NE(error_of(R"({"rows": "4"})").find("must be an integer (ROWS)"), std::string::npos);
  EXPECT_NE(error_of(R"({"rows": 4.5})").find("must be an integer"), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("must be a JSON object"), std::string::npos);
  EXPECT_EQ(error_of(R"({"rows": 4})"), "");  // missing keys keep their defaults
}

TEST(HwConfigFields, EveryParameterHasItsCommandLineOption) {
  // A valid value other than the default for every parameter.
  const std::map<std::string, int> values = {
      {"rows", 16},   {"cols", 4},    {"data_w", 6},  {"acc_w", 24},  {"group_w", 4},   {"max_t", 2},   {"max_h", 8},
      {"max_w", 8},   {"max_k", 32},  {"max_m", 32},  {"lanes", 2},   {"win_cap", 512}, {"policies", 3}, {"mul_pipe", 1},
      {"gather_w", 2}, {"lane_groups", 2}};
  ASSERT_EQ(values.size(), hw_fields().size());
  for (const HwField& f : hw_fields()) {
    HwConfig expected;
    f.set(expected, values.at(f.key));
    expected.validate();
    const ProcessResult r = run_process(
        {KALEIDO_TEST_KALEIDO_BIN, "gen", "--print-name", f.option, std::to_string(values.at(f.key))});
    ASSERT_TRUE(r.ok()) << f.option << ": " << r.output;
    EXPECT_EQ(r.output, expected.name() + "\n") << f.option;
    EXPECT_NE(r.output, default_config_8x8().name() + "\n") << f.option;
  }
}

TEST(OneConfiguration, MismatchedWidthsAreRefusedNamingBothValues) {
  EXPECT_NO_THROW(check_algorithm_widths(default_config_8x8(), 8, 32, 8));
  try {
    check_algorithm_widths(default_config_8x8(), 8, 32, 4);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("GROUP_W = 8 in the hardware: the algorithm's value is 4"), std::string::npos)
        << e.what();
  }
  testing::TestDir dir("one_config");
  const std::string out = (dir / "out").string();
  const ProcessResult sim = run_process({KALEIDO_TEST_KALEIDO_BIN, "sim", "--hw-data-w", "16", "--data-w", "8", "--grid",
                                         "1x2x2", "-K", "8", "-M", "2", "-o", out});
  EXPECT_EQ(sim.exit_code, kExitUserError) << sim.output;
  EXPECT_NE(sim.output.find("DATA_W = 16 in the hardware: the algorithm's value is 8"), std::string::npos) << sim.output;
  const ProcessResult flow = run_process({KALEIDO_TEST_KALEIDO_BIN, "flow", "--hw-acc-w", "40", "--acc-w", "32", "--clip",
                                          "", "--report", (dir / "report").string(), "--work", out});
  EXPECT_EQ(flow.exit_code, kExitUserError) << flow.output;
  EXPECT_NE(flow.output.find("ACC_W = 40 in the hardware: the algorithm's value is 32"), std::string::npos)
      << flow.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "report"));
}

// `kaleido sim` sizes MAX_K to the workload before it validates, so LANES is held to the fitted
// MAX_K / GROUP_W: 40 lanes pass at K = 80, GROUP_W 2 (the unfitted MAX_K 64 allows 32), and 5
// lanes are refused at K = 8 (4 groups), naming the fitted bound.
TEST(OneConfiguration, SimHoldsLanesToTheMaxKItSizesForTheWorkload) {
  testing::TestDir dir("sim_lanes");
  const std::vector<std::string> base = {KALEIDO_TEST_KALEIDO_BIN, "sim", "--rows", "2", "--cols", "2", "--hw-group-w", "2",
                                         "--grid", "1x2x2", "-M", "2", "--json", "-o", (dir / "out").string()};
  std::vector<std::string> wide = base;
  for (const char* a : {"-K", "80", "--lanes", "40"}) wide.push_back(a);
  const ProcessResult ok = run_process(wide);
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  const nlohmann::json j = nlohmann::json::parse(ok.output.substr(ok.output.find('{')));
  EXPECT_TRUE(j.at("bit_exact").get<bool>());
  EXPECT_EQ(j.at("config").at("lanes").get<int>(), 40);
  EXPECT_EQ(j.at("config").at("max_k").get<int>(), 80);
  std::vector<std::string> narrow = base;
  for (const char* a : {"-K", "8", "--lanes", "5"}) narrow.push_back(a);
  const ProcessResult refused = run_process(narrow);
  EXPECT_EQ(refused.exit_code, kExitUserError) << refused.output;
  EXPECT_NE(refused.output.find("MAX_K/GROUP_W = 4"), std::string::npos) << refused.output;
}

}  // namespace
}  // namespace kaleido::hw
