// Sweep descriptions: the points they expand to and the errors they give.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "sweep/aggregate.hpp"
#include "sweep/sweep_spec.hpp"

namespace kaleido::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

SweepSpec parse(const std::string& text) { return parse_sweep(nlohmann::ordered_json::parse(text), "/tmp", "test.json"); }

// The id a point must get: the configuration's name (HwConfig::name() has
// tests of its own in tests/cli), the library and the clock.
std::string id(int rows, int cols, const std::string& tail = "generic_2ns", int max_k = 64) {
  hw::HwConfig c;
  c.rows = rows;
  c.cols = cols;
  c.group_w = 2;
  c.max_k = max_k;
  return c.name() + "_" + tail;
}

// The message of the error a sweep gives, or "" when it parses.
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SweepSpec, CartesianProductInFileOrderLastAxisFastest) {
  const SweepSpec s = parse(R"({"name": "t", "base": {"group_w": 2},
      "axes": {"rows_cols": [[2, 2], 4], "clock_ns": [2, 2.5], "data_w": [8]}})");
  ASSERT_EQ(s.points.size(), 4u);
  EXPECT_EQ(s.points[0].id, id(2, 2));
  EXPECT_EQ(s.points[1].id, id(2, 2, "generic_2.5ns"));
  EXPECT_EQ(s.points[2].id, id(4, 4));
  EXPECT_EQ(s.points[3].id, id(4, 4, "generic_2.5ns"));
  EXPECT_EQ(s.points[0].id.rfind("r2c2_d8a32_g2_", 0), 0u) << s.points[0].id;
  EXPECT_EQ(s.points[3].config.rows, 4);
  EXPECT_EQ(s.points[3].config.cols, 4);
  EXPECT_DOUBLE_EQ(s.points[1].clock_ns, 2.5);
  EXPECT_TRUE(s.points[0].library.files.empty());  // generic: the project's library
  // Defaults: both tops, activity 0.1.
  EXPECT_EQ(s.tops, (std::vector<std::string>{"kld_top", "kld_plain_top"}));
  EXPECT_DOUBLE_EQ(s.activity, 0.1);
}

TEST(SweepSpec, ListOfAxesIsAUnionWithoutDuplicates) {
  const SweepSpec s = parse(R"({"name": "t", "base": {"group_w": 2},
      "axes": [{"rows_cols": [2, 4]}, {"rows_cols": [4, 8], "max_k": [16, 64]}]})");
  // 2, 4 | 4/k16, 4/k64 (= 4 with the base K), 8/k16, 8/k64
  std::vector<std::string> ids;
  for (const SweepPoint& p : s.points) ids.push_back(p.id);
  EXPECT_EQ(ids, (std::vector<std::string>{id(2, 2), id(4, 4), id(4, 4, "generic_2ns", 16),
                                           id(8, 8, "generic_2ns", 16), id(8, 8)}));
  EXPECT_EQ(s.duplicates_removed, 1);
}

TEST(SweepSpec, ErrorsNameTheKeyAndTheRule) {
  EXPECT_NE(error_of(R"({"name": "t", "axis": {}})").find("axis"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "t", "axes": {"rowz": [2]}})").find("rowz"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "t", "base": {"speed": 1}})").find("unknown key"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "t", "base": {"max_kk": 16}})").find("did you mean max_k?"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "t", "axess": {}})").find("did you mean axes?"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "t", "axes": {"mul_pipe": [2]}})").find("MUL_PIPE"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "t", "axes": {"rows": []}})").find("non-empty list"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "t", "axes": {"rows": 8}})").find("non-empty list"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "t", "axes": {"rows": [8.5]}})").find("integer"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "t", "axes": {"clock_ns": [0]}})").find("clock_ns"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "t", "axes": {"rows_cols": [[2, 2, 2]]}})").find("[ROWS, COLS]"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "t", "axes": {"rows_cols": [2], "rows": [2]}})").find("cannot be combined"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "t", "axes": {"liberty": ["tsmc5"]}})").find("unknown library alias"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "t", "tops": ["top"]})").find("tops"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "t", "tops": ["kld_top", "kld_top"]})").find("twice"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "a b"})").find("name"), std::string::npos);
  EXPECT_NE(error_of(R"({"base": {}})").find("name"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "t", "activity": -1})").find("activity"), std::string::npos);
  EXPECT_EQ(error_of(R"({"name": "t"})"), "");
}

TEST(SweepSpec, InvalidConfigurationNamesThePoint) {
  // ROWS = 4 is not a multiple of GROUP_W = 8 (the default).
  const std::string e = error_of(R"({"name": "t", "axes": {"rows_cols": [8, 4]}})");
  EXPECT_NE(e.find("point r4c4_d8a32_g8_"), std::string::npos) << e;
  EXPECT_NE(e.find("GROUP_W"), std::string::npos) << e;
  EXPECT_NE(e.find("test.json"), std::string::npos) << e;
}

TEST(SweepSpec, LibraryPathsResolveBesideTheFile) {
  const SweepSpec s = parse(R"({"name": "t", "axes": {"liberty": ["libs/my_cells.lib.gz", ["/a/x.lib", "/a/y.lib"]]}})");
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_EQ(s.points[0].library.label, "my_cells");
  EXPECT_EQ(s.points[0].library.files, std::vector<fs::path>{"/tmp/libs/my_cells.lib.gz"});
  EXPECT_EQ(s.points[1].library.label, "x");
  EXPECT_EQ(s.points[1].library.files.size(), 2u);
  EXPECT_TRUE(s.points[0].library.unavailable.empty());  // explicit files fail at run time, as a failed point
  EXPECT_NE(error_of(R"({"name": "t", "axes": {"liberty": ["/a/x.lib", "/b/x.lib"]}})").find("label"),
            std::string::npos);
}

TEST(SweepSpec, MissingPdkMakesThePointUnavailableNamingTheFile) {
  const fs::path empty = fs::temp_directory_path() / "kaleido_sweep_test_no_pdk";
  fs::create_directories(empty);
  const char* old = std::getenv("KALEIDO_SHARED_DIR");
  const std::string saved = old ? old : "";
  ::setenv("KALEIDO_SHARED_DIR", empty.c_str(), 1);
  const SweepSpec s = parse(R"({"name": "t", "axes": {"liberty": ["generic", "sky130_hd", "asap7"]}})");
  if (old) ::setenv("KALEIDO_SHARED_DIR", saved.c_str(), 1);
  else ::unsetenv("KALEIDO_SHARED_DIR");
  ASSERT_EQ(s.points.size(), 3u);
  EXPECT_TRUE(s.points[0].library.unavailable.empty());
  EXPECT_NE(s.points[1].library.unavailable.find("sky130_fd_sc_hd__tt_025C_1v80.lib.gz"), std::string::npos);
  EXPECT_NE(s.points[2].library.unavailable.find("asap7sc7p5t_SIMPLE"), std::string::npos);
  EXPECT_EQ(s.points[2].library.files.size(), 3u);
}

TEST(SweepSpec, EnergyPerMacIsPowerTimesPeriodOverPes) {
  // 1 mW for 2 ns = 2 pJ per cycle, over 4 MACs per cycle.
  EXPECT_DOUBLE_EQ(energy_per_mac_pj(1e-3, 2.0, 4), 0.5);
}

TEST(SweepSpec, ReferenceSweepFilesParse) {
  for (const auto& e : fs::directory_iterator(fs::path(KALEIDO_SOURCE_DIR) / "sweeps")) {
    if (e.path().extension() != ".json") continue;
    SCOPED_TRACE(e.path().string());
    EXPECT_NO_THROW(load_sweep(e.path()));
  }
}

}  // namespace
}  // namespace kaleido::sweep
