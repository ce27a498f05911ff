// The manifest's memory budget (gen/hw/sram_budget) against the memories the
// generated RTL really instantiates, counted by Yosys after flattening with
// the SRAM modules kept as black boxes.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "common/atomic_file.hpp"
#include "hw/sram_budget.hpp"
#include "hw_test_util.hpp"
#include "support/test_dir.hpp"

namespace kaleido {
namespace {

namespace fs = std::filesystem;

using hwtest::have_tool;
using hwtest::run_tool;

// Bits of every kld_sram_<depth>x<width>[_rN] cell of the flattened top, from Yosys `stat`.
int64_t counted_sram_bits(const fs::path& rtl, const std::string& top, std::string* log) {
  const std::string cmd = "yosys -p 'read_verilog" + hwtest::verilog_files(rtl) + "; blackbox kld_sram_*; hierarchy -top " +
                          top + "; flatten; stat'";
  const hwtest::ToolRun r = run_tool(cmd);
  *log = r.output;
  EXPECT_EQ(r.status, 0) << r.output;
  const std::regex cell(R"(^\s+kld_sram_(\d+)x(\d+)(_r\d+)?\s+(\d+)\s*$)");
  int64_t bits = 0;
  std::istringstream in(r.output);
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_match(line, m, cell)) bits += std::stoll(m[1]) * std::stoll(m[2]) * std::stoll(m[4]);
  return bits;
}

TEST(SramBudget, ManifestTotalsEqualTheInstantiatedMemories) {
  if (!have_tool("yosys")) GTEST_SKIP() << "yosys not installed (Debian package yosys)";
  hw::HwConfig banked = hw::default_config_8x8();
  hw::HwConfig single = banked;  // one m-tile at most: the partial memories have no second bank
  single.rows = single.cols = 4;
  single.group_w = 2;
  single.max_t = 2;
  single.max_h = single.max_w = 4;
  single.max_k = 8;
  single.max_m = 4;
  single.lanes = 2;
  for (const hw::HwConfig& c : {banked, single}) {
    testing::TestDir dir("sram_budget");
    hw::write_rtl(c, dir.path() / "rtl");
    const nlohmann::json manifest = nlohmann::json::parse(read_file(dir.path() / "rtl" / "manifest.json"));
    for (const char* top : {"kld_top", "kld_plain_top"}) {
      std::string log;
      const int64_t counted = counted_sram_bits(dir.path() / "rtl", top, &log);
      EXPECT_GT(counted, 0) << log;
      EXPECT_EQ(manifest.at("sram").at(top).at("sram_bits_total").get<int64_t>(), counted) << c.name() << " " << top;
      EXPECT_EQ(hw::sram_bits_total(hw::sram_roles(c, top)), counted) << c.name() << " " << top;
    }
  }
}

}  // namespace
}  // namespace kaleido
