// Checks of the RTL generator as a tool: the same configuration gives
// byte-identical files (twice, and in two folders); bad configurations give a
// ConfigError naming the parameter and the rule and write nothing; an output
// folder that cannot be written gives a FileError and leaves no partial
// output; `kaleido gen` exits non-zero with the message.
//
// GeneratorBugs lists valid configurations (HwConfig::validate accepts them)
// that the generator cannot build yet; each test names the rule that breaks.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "common/error.hpp"
#include "hw/blocks.hpp"
#include "hw_test_util.hpp"

namespace kaleido::hwtest {
namespace {

hw::HwConfig small_config() {
  hw::HwConfig c;
  c.rows = 4;
  c.cols = 3;
  c.group_w = 2;
  c.data_w = 8;
  c.acc_w = 24;
  c.max_t = 2;
  c.max_h = 3;
  c.max_w = 4;
  c.max_k = 12;
  c.max_m = 5;
  c.lanes = 2;
  c.win_cap = 8;
  c.mul_pipe = 1;
  return c;
}

// Every regular file of a folder, by name.
std::map<std::string, std::string> folder(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out[e.path().filename().string()] = read_file(e.path());
  return out;
}

// Names of the files that differ between two folders (empty when equal),
// so a failure prints names, not whole files.
std::string differences(const std::map<std::string, std::string>& got, const std::map<std::string, std::string>& want) {
  std::string out;
  for (const auto& [name, text] : want) {
    auto it = got.find(name);
    if (it == got.end()) out += name + " missing; ";
    else if (it->second != text) out += name + " differs; ";
  }
  for (const auto& [name, text] : got)
    if (!want.count(name)) out += name + " unexpected; ";
  return out;
}

// The parent's entries other than `keep` (staging and backup folders must not be left behind).
std::vector<std::string> leftovers(const fs::path& parent, const std::set<std::string>& keep) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(parent))
    if (!keep.count(e.path().filename().string())) out.push_back(e.path().filename().string());
  return out;
}

TEST(HwGenerator, SameConfigurationGivesByteIdenticalFiles) {
  for (const hw::HwConfig& c : {small_config(), hw::default_config_8x8()}) {
    const auto first = hw::generate_files(c);
    const auto second = hw::generate_files(c);
    ASSERT_EQ(first.size(), second.size());
    for (size_t i = 0; i < first.size(); ++i) {
      EXPECT_EQ(first[i].name, second[i].name);
      EXPECT_TRUE(first[i].text == second[i].text) << first[i].name << " differs between two runs";
    }
    TempDir tmp("determinism_" + c.name());
    hw::write_rtl(c, tmp.path() / "one");
    hw::write_rtl(c, tmp.path() / "two");
    const auto one = folder(tmp.path() / "one"), two = folder(tmp.path() / "two");
    EXPECT_EQ(differences(one, two), "");
    ASSERT_EQ(one.size(), first.size());
    for (const auto& f : first) EXPECT_TRUE(one.at(f.name) == f.text) << f.name << " differs from generate_files()";
    EXPECT_EQ(leftovers(tmp.path(), {"one", "two"}), std::vector<std::string>{});
    // The text says nothing about where or when it was written.
    for (const auto& [name, text] : one) {
      EXPECT_EQ(text.find(tmp.path().string()), std::string::npos) << name;
      EXPECT_EQ(text.find("/tmp"), std::string::npos) << name;
    }
  }
}

TEST(HwGenerator, RewritingAFolderReplacesItAsAWhole) {
  TempDir tmp("replace");
  const fs::path out = tmp.path() / "rtl";
  hw::write_rtl(hw::default_config_8x8(), out);
  write_file_atomic(out / "stale.v", "module stale; endmodule\n");
  const hw::HwConfig c = small_config();
  hw::write_rtl(c, out);
  std::map<std::string, std::string> want;
  for (const auto& f : hw::generate_files(c)) want[f.name] = f.text;
  EXPECT_EQ(differences(folder(out), want), "");
  EXPECT_EQ(leftovers(tmp.path(), {"rtl"}), std::vector<std::string>{});
}

struct BadConfig {
  std::string what;
  std::function<void(hw::HwConfig&)> edit;
  std::string param;  // ConfigError::param()
  std::string rule;   // part of the message
};

std::vector<BadConfig> bad_configs() {
  return {
      {"rows_not_multiple_of_group", [](hw::HwConfig& c) { c.rows = 6; c.group_w = 4; }, "ROWS",
       "multiple of the group width GROUP_W = 4"},
      {"group_not_power_of_two", [](hw::HwConfig& c) { c.rows = 6; c.group_w = 3; c.max_k = 12; }, "GROUP_W",
       "power of two"},
      {"group_zero", [](hw::HwConfig& c) { c.group_w = 0; }, "GROUP_W", "power of two"},
      {"data_w_3", [](hw::HwConfig& c) { c.data_w = 3; }, "DATA_W", "4 to 16"},
      {"data_w_17", [](hw::HwConfig& c) { c.data_w = 17; c.acc_w = 64; }, "DATA_W", "4 to 16"},
      {"acc_narrower_than_product", [](hw::HwConfig& c) { c.data_w = 8; c.acc_w = 15; }, "ACC_W", "2*DATA_W to 64"},
      {"acc_65", [](hw::HwConfig& c) { c.acc_w = 65; }, "ACC_W", "2*DATA_W to 64"},
      {"rows_0", [](hw::HwConfig& c) { c.rows = 0; }, "ROWS", "1 to 64"},
      {"rows_65", [](hw::HwConfig& c) { c.rows = 65; }, "ROWS", "1 to 64"},
      {"cols_0", [](hw::HwConfig& c) { c.cols = 0; }, "COLS", "1 to 64"},
      {"cols_65", [](hw::HwConfig& c) { c.cols = 65; }, "COLS", "1 to 64"},
      {"max_k_not_multiple", [](hw::HwConfig& c) { c.max_k = 13; }, "MAX_K", "multiple of GROUP_W = 2"},
      {"max_k_below_group", [](hw::HwConfig& c) { c.group_w = 4; c.max_k = 0; }, "MAX_K", "positive multiple"},
      {"max_t_0", [](hw::HwConfig& c) { c.max_t = 0; }, "MAX_T", "at least 1"},
      {"max_w_0", [](hw::HwConfig& c) { c.max_w = 0; }, "MAX_W", "at least 1"},
      {"too_many_tokens", [](hw::HwConfig& c) { c.max_t = 16; c.max_h = 256; c.max_w = 257; }, "MAX_T*MAX_H*MAX_W",
       "at most 2^20 tokens"},
      {"max_m_0", [](hw::HwConfig& c) { c.max_m = 0; }, "MAX_M", "at least 1"},
      {"lanes_above_groups", [](hw::HwConfig& c) { c.lanes = 7; }, "LANES", "MAX_K/GROUP_W = 6"},
      {"lanes_above_pairs", [](hw::HwConfig& c) { c.lane_groups = 2; c.lanes = 4; }, "LANES",
       "ceil(MAX_K/GROUP_W / 2) = 3 (each lane decides two groups)"},
      {"lane_groups_3", [](hw::HwConfig& c) { c.lane_groups = 3; }, "LANE_GROUPS", "1 to 2"},
      {"lanes_negative", [](hw::HwConfig& c) { c.lanes = -1; }, "LANES", "0 (sized by the schedule)"},
      {"win_cap_3", [](hw::HwConfig& c) { c.win_cap = 3; }, "WIN_CAP", "power of two"},
      {"policies_0", [](hw::HwConfig& c) { c.policies = 0; }, "POLICIES", "non-empty subset"},
      {"policies_8", [](hw::HwConfig& c) { c.policies = 8; }, "POLICIES", "non-empty subset"},
      {"mul_pipe_2", [](hw::HwConfig& c) { c.mul_pipe = 2; }, "MUL_PIPE", "0 or 1"},
  };
}

class HwGeneratorBadConfig : public ::testing::TestWithParam<BadConfig> {};

void PrintTo(const BadConfig& b, std::ostream* os) { *os << b.what; }

TEST_P(HwGeneratorBadConfig, ConfigErrorNamesParameterAndRuleAndWritesNothing) {
  const BadConfig& b = GetParam();
  hw::HwConfig c = small_config();
  b.edit(c);
  TempDir tmp("bad_" + b.what);
  // A fresh target, and an existing one whose content must survive.
  const fs::path fresh = tmp.path() / "fresh", kept = tmp.path() / "kept";
  fs::create_directories(kept);
  write_file_atomic(kept / "sentinel.txt", "old\n");
  for (const fs::path& out : {fresh, kept}) {
    try {
      hw::write_rtl(c, out);
      ADD_FAILURE() << b.what << ": no ConfigError";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.param(), b.param) << e.what();
      EXPECT_NE(std::string(e.what()).find(b.rule), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(b.param + " = ", 0), 0u) << e.what();
    }
  }
  EXPECT_FALSE(fs::exists(fresh));
  EXPECT_EQ(differences(folder(kept), {{"sentinel.txt", "old\n"}}), "");
  EXPECT_EQ(leftovers(tmp.path(), {"kept"}), std::vector<std::string>{});
  EXPECT_THROW(hw::generate_files(c), ConfigError);
}

INSTANTIATE_TEST_SUITE_P(Rules, HwGeneratorBadConfig, ::testing::ValuesIn(bad_configs()),
                         [](const ::testing::TestParamInfo<BadConfig>& i) { return i.param.what; });

TEST(HwGenerator, MissingParentFolderIsAFileError) {
  TempDir tmp("noparent");
  const fs::path out = tmp.path() / "missing" / "rtl";
  EXPECT_THROW(hw::write_rtl(small_config(), out), FileError);
  EXPECT_FALSE(fs::exists(tmp.path() / "missing"));
}

TEST(HwGenerator, TargetThatIsAFileIsAFileErrorAndStaysUntouched) {
  TempDir tmp("isfile");
  const fs::path out = tmp.path() / "rtl";
  write_file_atomic(out, "not a folder\n");
  EXPECT_THROW(hw::write_rtl(small_config(), out), FileError);
  EXPECT_EQ(read_file(out), "not a folder\n");
  EXPECT_EQ(leftovers(tmp.path(), {"rtl"}), std::vector<std::string>{});
}

TEST(HwGenerator, UnwritableFolderIsAFileError) {
  // /proc refuses new entries even to root, so this works whatever the user.
  if (!fs::is_directory("/proc/self")) GTEST_SKIP() << "no /proc on this system";
  try {
    hw::write_rtl(small_config(), "/proc/kaleido_hw_test_rtl");
    ADD_FAILURE() << "writing under /proc succeeded";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/kaleido_hw_test_rtl"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists("/proc/kaleido_hw_test_rtl"));
}

// A write that fails halfway (the file size limit is hit on a large file):
// the tool reports it, the old folder is intact and no staging folder is left.
TEST(HwGenerator, FailedWriteLeavesNoPartialOutput) {
  TempDir tmp("midway");
  const fs::path out = tmp.path() / "rtl";
  hw::write_rtl(small_config(), out);
  const auto before = folder(out);
  // With a 32 KiB limit the small files of the 16x16 default fit and the
  // large ones (kld_merge.v, the manifest: about 60 KiB) do not.
  const std::string cmd = std::string("trap '' XFSZ; ulimit -f 32; '") + KALEIDO_TEST_KALEIDO_BIN +
                          "' gen --preset 16x16 -o '" + out.string() + "'";
  const ToolRun r = run_tool("bash -c \"" + cmd + "\"");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("kaleido: error:"), std::string::npos) << r.output;
  EXPECT_EQ(differences(folder(out), before), "");
  EXPECT_EQ(leftovers(tmp.path(), {"rtl"}), std::vector<std::string>{});
}

// The counters' split increment is the same sum as one add, proven for every value by Yosys's SAT
// solver (a simulation would need 2^32 cycles to reach the low half's carry). Its mutant, the high
// half without the carry, is refuted.
TEST(HwCounters, SplitIncrementEqualsOneAddForEveryValue) {
  TempDir tmp("split_inc");
  auto prove = [&](bool with_carry) {
    vlog::Module m("split_increment_check", "split_increment against q + inc");
    const vlog::Expr q = m.input("q_i", 64), inc = m.input("inc_i", 1);
    const vlog::Expr split = m.output("split_o", 64), sum = m.output("sum_o", 64);
    m.assign(split, with_carry ? hw::split_increment(q, inc)
                               : vlog::concat({q.slice(63, 32), q.slice(31, 0) + vlog::zext(inc, 32)}));
    m.assign(sum, q + vlog::zext(inc, 64));
    const fs::path v = tmp.path() / (with_carry ? "split.v" : "mutant.v");
    std::ofstream(v) << m.emit({"kaleido test", {}});
    return run_tool("yosys -q -p 'read_verilog " + v.string() +
                    "; prep -top split_increment_check; sat -verify -prove split_o sum_o' 2>&1");
  };
  const ToolRun proven = prove(true);
  EXPECT_EQ(proven.status, 0) << proven.output;
  const ToolRun mutant = prove(false);
  EXPECT_NE(mutant.status, 0) << mutant.output;
  EXPECT_NE(mutant.output.find("proof did fail"), std::string::npos) << mutant.output;
}

TEST(HwGeneratorCli, BadConfigurationExitsNonZeroWithTheRule) {
  TempDir tmp("cli_bad");
  const fs::path out = tmp.path() / "rtl";
  const std::string bin = std::string("'") + KALEIDO_TEST_KALEIDO_BIN + "'";
  const struct {
    std::string args, message;
  } cases[] = {
      {"--rows 6 --hw-group-w 4 --max-k 8", "ROWS = 6: must be a multiple of the group width GROUP_W = 4"},
      {"--rows 6 --hw-group-w 3 --max-k 12", "GROUP_W = 3: must be a power of two"},
      {"--hw-data-w 20 --hw-acc-w 64", "DATA_W = 20: must be 4 to 16"},
      {"--lanes 9", "LANES = 9: must be 0 (sized by the schedule) to MAX_K/GROUP_W = 8"},
  };
  for (const auto& c : cases) {
    const ToolRun r = run_tool(bin + " gen " + c.args + " -o '" + out.string() + "'");
    EXPECT_NE(r.status, 0) << c.args;
    EXPECT_NE(r.output.find("kaleido: error: " + c.message), std::string::npos) << c.args << ":\n" << r.output;
    EXPECT_FALSE(fs::exists(out)) << c.args;
  }
  // And an unwritable destination.
  const ToolRun r = run_tool(bin + " gen -o '" + (tmp.path() / "no" / "such" / "rtl").string() + "'");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("kaleido: error:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;
}

TEST(HwGeneratorCli, GoodConfigurationWritesTheFolder) {
  TempDir tmp("cli_good");
  const fs::path out = tmp.path() / "rtl";
  const ToolRun r = run_tool(std::string("'") + KALEIDO_TEST_KALEIDO_BIN + "' gen --rows 4 --cols 3 --hw-group-w 2 " +
                             "--hw-acc-w 24 --max-t 2 --max-h 3 --max-w 4 --max-k 12 --max-m 5 --lanes 2 --win-cap 8 " +
                             "--mul-pipe 1 -o '" + out.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  std::map<std::string, std::string> want;
  for (const auto& f : hw::generate_files(small_config())) want[f.name] = f.text;
  EXPECT_EQ(differences(folder(out), want), "");
}

// ---- bugs found by these tests: valid configurations the generator cannot build ----

struct BugCase {
  std::string name;
  std::function<void(hw::HwConfig&)> edit;
  std::string rule;  // what the configuration exercises
};

std::vector<BugCase> bug_cases() {
  auto base = [](hw::HwConfig& c) {
    c = hw::HwConfig{};
    c.rows = 4;
    c.cols = 4;
    c.group_w = 2;
    c.max_t = 2;
    c.max_h = 3;
    c.max_w = 4;
    c.max_k = 16;
    c.max_m = 8;
  };
  return {
      {"PoliciesWithoutFixed", [&](hw::HwConfig& c) { base(c); c.policies = 6; },
       "POLICIES 2, 4 or 6 (no fixed policy): kld_detector_lane's pass_vec is only read by the fixed policy"},
      {"SingleKTile", [&](hw::HwConfig& c) { base(c); c.max_k = 4; },
       "MAX_K <= ROWS with ROWS a power of two: cnt_q is wider than the B row address (zext would shrink)"},
      {"WideArrayFewRows", [&](hw::HwConfig& c) { base(c); c.rows = 2; c.cols = 16; c.max_k = 8; },
       "COLS + GROUP_W > MAX_KT*ROWS: the drain counter is wider than the B row address"},
      {"OneByOneArray", [&](hw::HwConfig& c) { base(c); c.rows = 1; c.cols = 1; c.group_w = 1; },
       "ROWS = COLS = GROUP_W = 1, MUL_PIPE 0: the tag pipeline of kld_array is one stage (memory of depth 1)"},
      {"OneDimensionalGrid", [&](hw::HwConfig& c) { base(c); c.max_t = 1; c.max_h = 1; c.max_w = 7; },
       "MAX_T x MAX_H x MAX_W = 1x1x7: coordinates are wider than the token index (zext of t_q would shrink)"},
      {"LongOneDimensionalGrid", [&](hw::HwConfig& c) { base(c); c.max_t = 1; c.max_h = 1; c.max_w = 16; },
       "MAX_T x MAX_H x MAX_W = 1x1x16: coordinates are wider than TW+1 (kld_dispatcher's token arithmetic and "
       "kld_top's n_tokens zext would shrink)"},
      {"SingleToken", [&](hw::HwConfig& c) { base(c); c.max_t = 1; c.max_h = 1; c.max_w = 1; },
       "one token (MAX_T = MAX_H = MAX_W = 1): memories of depth 1"},
      {"WindowOfOne", [&](hw::HwConfig& c) { base(c); c.win_cap = 1; },
       "WIN_CAP = 1 (also the default when MAX_H*MAX_W = 1): the window memory has depth 1"},
      {"WindowAboveTokens", [&](hw::HwConfig& c) { base(c); c.win_cap = 64; },
       "WIN_CAP (64) above the token count (24): win_i is wider than the token arithmetic (zext would shrink)"},
      {"FewerGroupsThanSegments", [&](hw::HwConfig& c) { base(c); c.rows = 6; c.max_k = 2; },
       "MAX_K/GROUP_W < SEGS: kld_merge never reads the taps of segments without a group"},
      {"TokenWiderThanTwoCoordinates",
       [&](hw::HwConfig& c) { base(c); c.max_t = 21; c.max_h = 30; c.max_w = 52; c.win_cap = 64; },
       "a 480p grid (32,760 tokens): the token index (15 bits) is wider than a product of two coordinates "
       "(14 bits), so the scan strides H*W and TILE_H*W are zero-extended, not truncated"},
      {"OneLane", [&](hw::HwConfig& c) { base(c); c.lanes = 1; },
       "LANES = 1: kld_detector's generate loop variable is never used"},
      {"SingleRowOfB", [&](hw::HwConfig& c) { base(c); c.rows = 1; c.group_w = 1; c.max_k = 1; },
       "ROWS = MAX_K = 1: the B memory has depth 1 << clog2(MAX_MT) but its address is {b_row_i (1 bit), b_mtile_i}"},
  };
}

class GeneratorBugs : public ::testing::TestWithParam<BugCase> {};

void PrintTo(const BugCase& b, std::ostream* os) { *os << b.name; }

TEST_P(GeneratorBugs, ValidConfigurationGenerates) {
  hw::HwConfig c;
  GetParam().edit(c);
  ASSERT_NO_THROW(c.validate());
  try {
    const auto files = hw::generate_files(c);
    EXPECT_FALSE(files.empty());
  } catch (const std::exception& e) {
    ADD_FAILURE() << GetParam().rule << "\n  generator: " << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Valid, GeneratorBugs, ::testing::ValuesIn(bug_cases()),
                         [](const ::testing::TestParamInfo<BugCase>& i) { return i.param.name; });

}  // namespace
}  // namespace kaleido::hwtest
