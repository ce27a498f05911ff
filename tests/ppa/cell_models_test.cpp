// Verilog models of the Liberty cells: Verilator lints them with a mapped
// netlist (fast), and, in the slow test, simulates the netlist next to the
// RTL with random inputs and compares every cycle.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "ppa/boolfunc.hpp"
#include "ppa/cell_models.hpp"
#include "ppa/liberty.hpp"
#include "ppa/synth.hpp"
#include "ppa_helpers.hpp"

namespace kaleido::ppa {
namespace {

using test::TempDir;

TEST(CellModels, WrittenFromFunctionsAndFlops) {
  const Library lib = read_liberty(test::generic_lib());
  const std::string v = cell_models_verilog(lib, {"AOI21_X1", "DFFR_X1"});
  EXPECT_NE(v.find("module AOI21_X1 (A1, A2, B, Y);"), std::string::npos) << v;
  EXPECT_NE(v.find("assign Y = ~(((A1 & A2) | B));"), std::string::npos) << v;
  EXPECT_NE(v.find("wire kld_clr = ~(RN);"), std::string::npos) << v;
  EXPECT_NE(v.find("always @(posedge kld_clk or posedge kld_clr)"), std::string::npos) << v;
  EXPECT_EQ(v.find("module INV_X1"), std::string::npos) << "only the cells asked for";
  EXPECT_THROW(cell_models_verilog(lib, {"NO_SUCH_CELL"}), Error);
}

// Synthesises the MAC (no STA), writes the models, renames the netlist's
// module so that it can sit next to the RTL.
struct GateLevel {
  TempDir tmp{"models"};
  std::filesystem::path netlist, models;
  GateLevel() {
    SynthOptions o;
    o.top = "ppa_mac";
    o.rtl_files = {test::data_dir() / "ppa_mac.v"};
    o.out_dir = tmp.path() / "out";
    o.clock_period_ns = 1.0;
    o.run_sta = false;
    const SynthResult r = run_synthesis_flow(o);
    std::string text = read_file(r.netlist_v);
    const size_t at = text.find("module ppa_mac(");
    EXPECT_NE(at, std::string::npos);
    text.replace(at, 15, "module ppa_mac_gl(");
    netlist = tmp.path() / "ppa_mac_gl.v";
    write_file_atomic(netlist, text);
    models = tmp.path() / "cells.v";
    write_cell_models(read_liberty(std::filesystem::path(r.prepared_liberty)), models);
  }
};

int run(const std::string& cmd, const std::filesystem::path& log) {
  return std::system((cmd + " > " + log.string() + " 2>&1").c_str());
}

TEST(CellModels, VerilatorLintsModelsWithMappedNetlist) {
  KLD_SKIP_WITHOUT_TOOLS();
  if (!test::have_tool("verilator")) GTEST_SKIP() << "verilator not installed (Debian package verilator); skipped";
  GateLevel g;
  const auto log = g.tmp.path() / "lint.log";
  const int rc = run("verilator --lint-only -Wall " + g.models.string() + " " + g.netlist.string() +
                         " --top-module ppa_mac_gl",
                     log);
  EXPECT_EQ(rc, 0) << read_file(log);
}

TEST(CellModels, VerilatorGateLevelMatchesRtlSlow) {
  if (!std::getenv("KALEIDO_SLOW_TESTS"))
    GTEST_SKIP() << "slow (a Verilator build, ~40 s): run with KALEIDO_SLOW_TESTS=1 or `ctest -L slow`";
  KLD_SKIP_WITHOUT_TOOLS();
  if (!test::have_tool("verilator")) GTEST_SKIP() << "verilator not installed; skipped";
  GateLevel g;
  const auto tb = g.tmp.path() / "tb.sv";
  write_file_atomic(tb, R"(module tb;
  reg clk = 0, rst_n = 0, en = 0;
  reg [7:0] a = 0, b = 0;
  wire [31:0] acc_rtl, acc_gl;
  ppa_mac u_rtl (.clk_i(clk), .rst_ni(rst_n), .en_i(en), .a_i(a), .b_i(b), .acc_o(acc_rtl));
  ppa_mac_gl u_gl (.clk_i(clk), .rst_ni(rst_n), .en_i(en), .a_i(a), .b_i(b), .acc_o(acc_gl));
  integer i, errors = 0;
  initial begin
    for (i = 0; i < 300; i = i + 1) begin
      #5 clk = 1;
      #5 clk = 0;
      rst_n = (i > 1);
      en = $urandom;
      a = $urandom;
      b = $urandom;
      if (acc_rtl !== acc_gl) errors = errors + 1;
    end
    if (errors == 0) $display("KALEIDO_PASS");
    else $display("KALEIDO_FAIL %0d", errors);
    $finish;
  end
endmodule
)");
  const auto obj = g.tmp.path() / "obj";
  const auto log = g.tmp.path() / "build.log";
  const std::string build = "verilator --binary --timing -Wno-fatal -Wno-lint -Wno-style -CFLAGS -O0 --build-jobs 1 " +
                            tb.string() + " " + (test::data_dir() / "ppa_mac.v").string() + " " + g.netlist.string() +
                            " " + g.models.string() + " --top-module tb -Mdir " + obj.string();
  ASSERT_EQ(run(build, log), 0) << read_file(log);
  const auto out = g.tmp.path() / "run.log";
  ASSERT_EQ(run((obj / "Vtb").string(), out), 0) << read_file(out);
  EXPECT_NE(read_file(out).find("KALEIDO_PASS"), std::string::npos) << read_file(out);
}

}  // namespace
}  // namespace kaleido::ppa
