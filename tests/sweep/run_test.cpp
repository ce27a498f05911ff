// `kaleido sweep` end to end on the smallest arrays (seconds per point):
// reports, resumption, failures, parallel runs.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/version.hpp"
#include "hw/hw_config.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct CliRun {
  int exit_code = -1;
  std::string err;  // stderr (progress lines)
};

CliRun kaleido_sweep(const fs::path& file, const fs::path& out, const std::string& extra = "", const std::string& env = "") {
  const fs::path err = out.string() + ".stderr";
  fs::create_directories(out.parent_path());
  const std::string cmd = env + " " + KALEIDO_TEST_KALEIDO_BIN + " sweep " + file.string() + " --out " + out.string() +
                          " " + extra + " > /dev/null 2> " + err.string();
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = kaleido::read_file(err);
  return r;
}

std::vector<std::map<std::string, std::string>> read_csv(const fs::path& file) {
  std::istringstream in(kaleido::read_file(file));
  std::string line;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  auto split = [](const std::string& l) {  // RFC 4180 fields: quotes around commas, "" inside quotes
    std::vector<std::string> f(1);
    bool quoted = false;
    for (size_t i = 0; i < l.size(); ++i) {
      if (quoted && l[i] == '"' && i + 1 < l.size() && l[i + 1] == '"') f.back() += l[++i];
      else if (l[i] == '"') quoted = !quoted;
      else if (l[i] == ',' && !quoted) f.emplace_back();
      else f.back() += l[i];
    }
    return f;
  };
  std::getline(in, line);
  header = split(line);
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split(line);
    EXPECT_EQ(f.size(), header.size()) << line;
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < f.size(); ++i) row[header[i]] = f[i];
    rows.push_back(row);
  }
  return rows;
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// The smallest configurations the generator accepts with both tops.
const char* const kTinyBase =
    R"("base": {"data_w": 4, "acc_w": 8, "group_w": 1, "max_t": 1, "max_h": 2, "max_w": 2, "max_k": 2, "max_m": 2})";

// HwConfig::name() of the tiny configuration with an n x n array (kTinyBase).
std::string tiny(int n) {
  kaleido::hw::HwConfig c;
  c.rows = c.cols = n;
  c.data_w = 4;
  c.acc_w = 8;
  c.group_w = 1;
  c.max_t = 1;
  c.max_h = 2;
  c.max_w = 2;
  c.max_k = 2;
  c.max_m = 2;
  return c.name();
}

// Each test runs its own sweeps (CTest runs every test in a process of its own,
// so a shared suite set-up would run once per test).
class SweepRun : public ::testing::Test {
 protected:
  fs::path dir() const {
    return fs::temp_directory_path() /
           ("kaleido_sweep_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  fs::path write(const std::string& name, const std::string& text) const {
    fs::create_directories(dir());
    kaleido::write_file_atomic(dir() / name, text);
    return dir() / name;
  }
  // The 1x1 and 2x2 arrays with the given tops.
  fs::path two_points(const std::string& tops) const {
    return write("two.json", std::string(R"({"name": "two", )") + kTinyBase +
                                 R"(, "axes": {"rows_cols": [1, 2]}, "tops": )" + tops + "}");
  }
  void TearDown() override { fs::remove_all(dir()); }
};

TEST_F(SweepRun, ReportsParseWithPositiveNumbersAndLargerArraysLarger) {
  const CliRun first = kaleido_sweep(two_points(R"(["kld_top", "kld_plain_top"])"), dir() / "two", "-j 1");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(count_of(first.err, "] r"), 4) << first.err;  // one progress line per point x top
  EXPECT_NE(first.err.find("[4/4] " + tiny(2) + " generic 2ns kld_plain_top ... "), std::string::npos) << first.err;

  const auto rows = read_csv(dir() / "two/sweep.csv");
  ASSERT_EQ(rows.size(), 4u);
  std::map<std::string, double> logic;
  for (const auto& r : rows) {
    EXPECT_EQ(r.at("status"), "done");
    for (const char* k : {"area_logic_um2", "area_sram_um2", "area_total_um2", "cells", "fmax_mhz",
                          "power_opensta_w", "power_kaleido_w", "power_sram_w", "energy_per_mac_pj"})
      EXPECT_GT(std::stod(r.at(k)), 0.0) << k << " of " << r.at("point_id") << " " << r.at("top");
    EXPECT_NEAR(std::stod(r.at("area_total_um2")), std::stod(r.at("area_logic_um2")) + std::stod(r.at("area_sram_um2")),
                1e-3 * std::stod(r.at("area_total_um2")));
    // Energy per MAC by its definition, from the CSV's own columns.
    const double pes = std::stod(r.at("rows")) * std::stod(r.at("cols"));
    EXPECT_NEAR(std::stod(r.at("energy_per_mac_pj")),
                std::stod(r.at("power_opensta_w")) * std::stod(r.at("clock_ns")) * 1e3 / pes,
                1e-4 * std::stod(r.at("energy_per_mac_pj")));
    logic[r.at("rows") + " " + r.at("top")] = std::stod(r.at("area_total_um2"));
  }
  EXPECT_GT(logic.at("2 kld_top"), logic.at("1 kld_top"));
  EXPECT_GT(logic.at("2 kld_plain_top"), logic.at("1 kld_plain_top"));
  // The reuse logic costs area.
  EXPECT_GT(logic.at("2 kld_top"), logic.at("2 kld_plain_top"));

  const json j = json::parse(kaleido::read_file(dir() / "two/sweep.json"));
  ASSERT_EQ(j.at("points").size(), 4u);
  for (const json& p : j.at("points")) {
    const json& m = p.at("metrics");
    EXPECT_GT(m.at("design__instance__area").get<double>(), 0.0);
    EXPECT_GT(m.at("timing__fmax").get<double>(), 0.0);
    EXPECT_GT(m.at("power__total").get<double>(), 0.0);
    // Blocks (the top's children and its own cells) add up to the logic area.
    double sum = 0;
    for (const auto& [block, area] : p.at("area_by_block_um2").items()) sum += area.get<double>();
    EXPECT_NEAR(sum, m.at("design__instance__area__stdcell").get<double>(),
                1e-6 * m.at("design__instance__area__stdcell").get<double>());
    EXPECT_TRUE(p.at("area_by_block_um2").contains(p.at("top") == "kld_top" ? "kld_array" : "kld_plain_array"));
  }
  for (const char* f : {"summary.md", "plots/area.svg", "plots/fmax.svg", "plots/power.svg", "plots/energy_per_mac.svg",
                        "plots/area_by_block_kld_top_generic_2ns_d4a8_g1.svg"})
    EXPECT_TRUE(fs::exists(dir() / "two" / f)) << f;
  const std::string md = kaleido::read_file(dir() / "two/summary.md");
  EXPECT_NE(md.find("Reuse-logic overhead"), std::string::npos);
  EXPECT_NE(md.find("full PE utilisation"), std::string::npos);
}

// Points that differ in more than the array size are told apart in the summary's tables by their
// variant (the configuration name's hash alone does not say which is which).
TEST_F(SweepRun, VariantsAreNamedInTheSummaryTables) {
  const fs::path spec = write("variants.json", std::string(R"({"name": "variants", )") + kTinyBase +
                                                   R"(, "axes": {"rows_cols": [1], "mul_pipe": [0, 1]}, )"
                                                   R"("tops": ["kld_top", "kld_plain_top"]})");
  const CliRun run = kaleido_sweep(spec, dir() / "variants");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string md = kaleido::read_file(dir() / "variants/summary.md");
  // Each point: a row per top in the results and one in the overhead table.
  EXPECT_EQ(count_of(md, " (d4a8_g1_mulpipe0) |"), 3) << md;
  EXPECT_EQ(count_of(md, " (d4a8_g1_mulpipe1) |"), 3) << md;
}

TEST_F(SweepRun, RerunSkipsFinishedPointsAndRedoesMissingAndStaleOnes) {
  const fs::path spec = two_points(R"(["kld_plain_top"])");
  const CliRun first = kaleido_sweep(spec, dir() / "two");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const fs::path result = dir() / ("two/points/" + tiny(1) + "_generic_2ns/result.json");
  const auto before = fs::last_write_time(result);
  const CliRun again = kaleido_sweep(spec, dir() / "two");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(count_of(again.err, "skipped (done, same RTL)"), 2) << again.err;
  EXPECT_EQ(fs::last_write_time(result), before);
  EXPECT_EQ(read_csv(dir() / "two/sweep.csv").size(), 2u);  // the reports are rebuilt from the finished points

  // A result file removed (an interrupted point) is redone, the other skipped.
  const fs::path other = dir() / ("two/points/" + tiny(2) + "_generic_2ns/result.json");
  fs::remove(other);
  const CliRun resumed = kaleido_sweep(spec, dir() / "two");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(count_of(resumed.err, "skipped (done, same RTL)"), 1) << resumed.err;
  EXPECT_TRUE(fs::exists(other));
  EXPECT_EQ(fs::last_write_time(result), before);

  // A result made from other RTL (an older generator: its recorded hash differs) is redone.
  const std::string old_hash = "0123456789abcdef";
  json edited = json::parse(kaleido::read_file(result));
  edited["tops"]["kld_plain_top"]["design"]["rtl_hash"] = old_hash;
  std::ofstream(result) << edited.dump();
  const CliRun stale = kaleido_sweep(spec, dir() / "two");
  EXPECT_EQ(stale.exit_code, 0) << stale.err;
  EXPECT_NE(stale.err.find("stale: kld_plain_top's RTL changed since (" + old_hash + " -> "), std::string::npos)
      << stale.err;
  EXPECT_EQ(count_of(stale.err, "skipped (done, same RTL)"), 1) << stale.err;
  // Said once for the point, unnumbered: the numbered lines stay one per point and top.
  EXPECT_EQ(count_of(stale.err, "stale: "), 1) << stale.err;
  EXPECT_EQ(count_of(stale.err, "] r"), 2) << stale.err;
  EXPECT_EQ(stale.err.find("[3/"), std::string::npos) << stale.err;
  EXPECT_NE(json::parse(kaleido::read_file(result))["tops"]["kld_plain_top"]["design"]["rtl_hash"], old_hash);
}

TEST_F(SweepRun, FailingPointIsReportedAndTheOthersRunForceRedoes) {
  const fs::path bad = write("broken.lib", "library (broken) { cell (X) { area : ; \n");
  const fs::path spec = write("fail.json", std::string(R"({"name": "fail", )") + kTinyBase +
                                               R"(, "axes": {"rows_cols": [1], "liberty": [")" + bad.string() +
                                               R"(", "generic"]}, "tops": ["kld_plain_top"]})");
  const CliRun r = kaleido_sweep(spec, dir() / "fail");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(tiny(1) + " broken 2ns kld_plain_top ... FAILED (see "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("points failed: " + tiny(1) + "_broken_2ns"), std::string::npos) << r.err;
  const fs::path failed = dir() / ("fail/points/" + tiny(1) + "_broken_2ns");
  EXPECT_TRUE(fs::exists(failed / "failed.json"));
  EXPECT_TRUE(fs::exists(failed / "error.log"));
  EXPECT_FALSE(fs::exists(failed / "result.json"));
  const auto rows = read_csv(dir() / "fail/sweep.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("status"), "failed");
  EXPECT_NE(rows[0].at("note").find("error.log"), std::string::npos);
  EXPECT_EQ(rows[1].at("status"), "done");
  EXPECT_NE(kaleido::read_file(dir() / "fail/summary.md").find("failed"), std::string::npos);

  // --force redoes the finished point (no skip), the broken one fails again.
  const fs::path done = dir() / ("fail/points/" + tiny(1) + "_generic_2ns/result.json");
  const auto before = fs::last_write_time(done);
  const CliRun forced = kaleido_sweep(spec, dir() / "fail", "--force");
  EXPECT_NE(forced.exit_code, 0);
  EXPECT_EQ(count_of(forced.err, "skipped"), 0) << forced.err;
  EXPECT_NE(fs::last_write_time(done), before);
}

TEST_F(SweepRun, ParallelRunGivesTheSameReportAsSerial) {
  const fs::path spec = two_points(R"(["kld_plain_top"])");
  const CliRun serial_run = kaleido_sweep(spec, dir() / "serial", "-j 1");
  ASSERT_EQ(serial_run.exit_code, 0) << serial_run.err;
  const CliRun parallel_run = kaleido_sweep(spec, dir() / "parallel", "-j 2");
  ASSERT_EQ(parallel_run.exit_code, 0) << parallel_run.err;
  const auto serial = read_csv(dir() / "serial/sweep.csv");
  const auto parallel = read_csv(dir() / "parallel/sweep.csv");
  ASSERT_EQ(serial.size(), 2u);
  ASSERT_EQ(parallel.size(), 2u);
  for (size_t k = 0; k < serial.size(); ++k) {
    for (const auto& [col, value] : serial[k]) {
      if (col == "synth_seconds") continue;
      EXPECT_EQ(parallel[k].at(col), value) << col << " of " << serial[k].at("point_id");
    }
  }
}

TEST_F(SweepRun, Sky130PointWhenThePdkIsInstalled) {
  const std::string shared = kaleido::shared_dir();
  if (shared.empty() || !fs::exists(fs::path(shared) / "pdk/sky130_fd_sc_hd__tt_025C_1v80.lib.gz"))
    GTEST_SKIP() << "../shared/pdk/sky130_fd_sc_hd__tt_025C_1v80.lib.gz not installed; skipped";
  const fs::path spec = write("sky.json", std::string(R"({"name": "sky", )") + kTinyBase +
                                              R"(, "axes": {"rows_cols": [1], "liberty": ["sky130_hd"]}, )"
                                              R"("tops": ["kld_plain_top"]})");
  const CliRun r = kaleido_sweep(spec, dir() / "sky");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = read_csv(dir() / "sky/sweep.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("library"), "sky130_hd");
  EXPECT_GT(std::stod(rows[0].at("area_logic_um2")), 0.0);
  const json j = json::parse(kaleido::read_file(dir() / "sky/sweep.json"));
  EXPECT_EQ(j.at("points")[0].at("library").at("name"), "sky130_fd_sc_hd__tt_025C_1v80");
}

TEST_F(SweepRun, MissingPdkIsSkippedVisibly) {
  const fs::path empty = dir() / "no_shared";
  fs::create_directories(empty);
  const fs::path spec = write("nopdk.json", std::string(R"({"name": "nopdk", )") + kTinyBase +
                                                R"(, "axes": {"rows_cols": [1], "liberty": ["ihp_sg13g2"]}})");
  const CliRun r = kaleido_sweep(spec, dir() / "nopdk", "", "KALEIDO_SHARED_DIR=" + empty.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("skipped (library ihp_sg13g2 not installed: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sg13g2_stdcell_typ_1p20V_25C.lib.gz does not exist"), std::string::npos) << r.err;
  const auto rows = read_csv(dir() / "nopdk/sweep.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("status"), "skipped");
}

}  // namespace
