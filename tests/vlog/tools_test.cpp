// Every example the builder emits passes `verilator --lint-only -Wall` (as
// Verilog-2005) with no waivers beyond the ones the example declares, and
// Yosys reads it and resolves the hierarchy. Skipped (visibly) when a tool is
// missing.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "examples.hpp"

namespace kaleido::vlog {
namespace {

using namespace testing;

struct Example {
  std::string name;
  std::function<void(Design&)> build;
};

std::vector<Example> examples() {
  return {
      {"add_reg", build_add_reg},
      {"fsm4", build_fsm4},
      {"delay_line", build_delay_line},
      {"counter", build_counter},
      {"fifo4", build_fifo},
      {"regfile4", build_regfile},
      {"mac_pe", build_mac_pe},
      {"pe_array", [](Design& d) { build_pe_array(d, 3, 2); }},
      {"waiver_demo", build_waiver_demo},
      {"counter_pair", build_counter_pair},
  };
}

class VlogTools : public ::testing::TestWithParam<Example> {};

// Temporary paths have no spaces or quotes, so they can go on a command line as is.
std::string file_list(const std::vector<fs::path>& files) {
  std::string s;
  for (const auto& f : files) s += " " + f.string();
  return s;
}

void PrintTo(const Example& e, std::ostream* os) { *os << e.name; }

TEST_P(VlogTools, VerilatorLintIsClean) {
  if (!have_tool("verilator")) GTEST_SKIP() << "verilator not found on PATH; lint check skipped";
  Design d(FileHeader{"vlog tools test", {{"EXAMPLE", GetParam().name}}});
  GetParam().build(d);
  const fs::path dir = temp_dir("lint_" + GetParam().name);
  const auto files = d.write(dir);
  for (const std::string& top : d.tops()) {
    // Parsed as Verilog-2005, so SystemVerilog-only syntax would fail too.
    const ToolRun r =
        run_tool("verilator --lint-only -Wall --default-language 1364-2005 --top-module " + top + file_list(files));
    EXPECT_EQ(r.status, 0) << "top " << top << ":\n" << r.output;
    EXPECT_EQ(r.output, "") << "top " << top;
  }
  fs::remove_all(dir);
}

TEST_P(VlogTools, YosysReadsAndResolvesHierarchy) {
  if (!have_tool("yosys")) GTEST_SKIP() << "yosys not found on PATH; hierarchy check skipped";
  Design d(FileHeader{"vlog tools test", {{"EXAMPLE", GetParam().name}}});
  GetParam().build(d);
  const fs::path dir = temp_dir("yosys_" + GetParam().name);
  const auto files = d.write(dir);
  for (const std::string& top : d.tops()) {
    // `proc; check -assert` also rejects undriven and multiply driven wires.
    const ToolRun r = run_tool("yosys -q -p \"read_verilog" + file_list(files) + "; hierarchy -check -top " + top +
                               "; proc; check -assert\"");
    EXPECT_EQ(r.status, 0) << "top " << top << ":\n" << r.output;
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Examples, VlogTools, ::testing::ValuesIn(examples()),
                         [](const ::testing::TestParamInfo<Example>& i) { return i.param.name; });

// The lint check really runs: a width mismatch written by hand is reported.
TEST(VlogToolsSanity, VerilatorReportsAWidthMismatch) {
  if (!have_tool("verilator")) GTEST_SKIP() << "verilator not found on PATH";
  const fs::path dir = temp_dir("sanity");
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "bad.v");
    f << "module bad (\n  input wire [7:0] a_i,\n  output wire [3:0] y_o\n);\n  assign y_o = a_i;\nendmodule\n";
  }
  const ToolRun r = run_tool("verilator --lint-only -Wall '" + (dir / "bad.v").string() + "'");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("WIDTH"), std::string::npos) << r.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kaleido::vlog
