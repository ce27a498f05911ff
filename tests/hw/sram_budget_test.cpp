// The memory budgets (the manifest's, gen/hw/sram_budget; the ring plan's, gen/hw/ring_plan)
// against the memories the generated RTL really instantiates, counted by Yosys after flattening
// with the SRAM modules kept as black boxes.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "common/atomic_file.hpp"
#include "hw/blocks.hpp"
#include "hw/ring_plan.hpp"
#include "hw/sram_budget.hpp"
#include "hw_test_util.hpp"
#include "support/test_dir.hpp"

namespace kaleido {
namespace {

namespace fs = std::filesystem;

using hwtest::have_tool;
using hwtest::run_tool;

// Bits of every kld_sram_<depth>x<width>[_<variant>] cell of the flattened top, from Yosys `stat`.
int64_t counted_sram_bits(const fs::path& rtl, const std::string& top, std::string* log) {
  const std::string cmd = "yosys -p 'read_verilog" + hwtest::verilog_files(rtl) + "; blackbox kld_sram_*; hierarchy -top " +
                          top + "; flatten; stat'";
  const hwtest::ToolRun r = run_tool(cmd);
  *log = r.output;
  EXPECT_EQ(r.status, 0) << r.output;
  const std::regex cell(R"(^\s+kld_sram_(\d+)x(\d+)(_[a-z0-9_]+)?\s+(\d+)\s*$)");
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

// The ring's built blocks against the roles the plan prices them by: kld_ring_merge's memories are
// the ring of partial sums, kld_ring_lists' the compute lists, kld_ring_codes' the decision codes,
// kld_ring_front's the codes, the lists and the walk buffer, kld_ring_a_buffers' the A chunk buffers,
// kld_ring_a_replay's the A replay FIFOs.
// The cases: whole list words; chunks that are not (C = 20 at LIST_W 8: 20, 20 and 8 positions,
// 7 code words where N / LIST_W is 6) with the ring banked by gather lane; a ring deeper than a
// bank may be (384 rows, split in parts); 297 code words, four memories of 75 rows.
TEST(SramBudget, RingBlocksHoldTheBitsOfTheirRoles) {
  if (!have_tool("yosys")) GTEST_SKIP() << "yosys not installed (Debian package yosys)";
  struct Case {
    Grid grid;
    int k, gather_w, chunk, list_w;
  };
  for (const Case& k : {Case{{2, 4, 4}, 32, 1, 16, 4}, Case{{2, 4, 6}, 16, 2, 20, 8}, Case{{2, 16, 16}, 16, 1, 64, 8},
                        Case{{3, 9, 11}, 16, 1, 9, 1}}) {
    hw::HwConfig sized = hw::default_config_8x8();
    sized.gather_w = k.gather_w;
    sized.max_t = k.grid.t, sized.max_h = k.grid.h, sized.max_w = k.grid.w;
    sized.max_k = k.k, sized.max_m = sized.cols;
    ReuseConfig cfg;
    cfg.grid = k.grid;
    cfg.channels = k.k;
    cfg.out_cols = sized.cols;
    cfg.group_w = sized.group_w;
    const hw::RingShape shape{k.chunk, 1, k.list_w};
    const std::vector<hw::SramRole> roles = hw::ring_storage(sized, cfg, shape);
    ASSERT_EQ(roles.size(), 9u);
    const std::string name = "C " + std::to_string(k.chunk) + ", LIST_W " + std::to_string(k.list_w);
    testing::TestDir dir("ring_sram_budget");
    const fs::path rtl = dir.path() / "rtl";
    hw::RingMergeBlock::design(sized, static_cast<int>(hw::ring_depth(cfg, shape))).write(rtl);
    hw::RingListsBlock::design(sized, k.chunk, k.list_w).write(rtl);
    hw::RingCodesBlock::design(sized, static_cast<int>(hw::ring_code_words(cfg, shape)), k.list_w).write(rtl);
    std::string log;
    EXPECT_EQ(counted_sram_bits(rtl, "kld_ring_merge", &log), roles[0].bits()) << name << "\n" << log;
    EXPECT_EQ(counted_sram_bits(rtl, "kld_ring_lists", &log), roles[4].bits()) << name << "\n" << log;
    EXPECT_EQ(counted_sram_bits(rtl, "kld_ring_codes", &log), roles[1].bits()) << name << "\n" << log;
    // kld_ring_front holds the code memory, the lists and the walk buffer.
    hw::RingFrontBlock::design(sized, static_cast<int>(hw::ring_code_words(cfg, shape)), k.chunk, k.list_w).write(rtl);
    EXPECT_EQ(counted_sram_bits(rtl, "kld_ring_front", &log), roles[1].bits() + roles[4].bits() + roles[7].bits())
        << name << "\n" << log;
    // kld_ring_a_buffers, its lanes streaming every group of a position in one beat.
    hw::HwConfig streamed = sized;
    streamed.lanes = sized.max_groups();
    hw::RingABuffersBlock::design(streamed, k.chunk).write(rtl);
    EXPECT_EQ(counted_sram_bits(rtl, "kld_ring_a_buffers", &log), roles[3].bits()) << name << "\n" << log;
    hw::RingAReplayBlock::design(sized, k.chunk).write(rtl);
    EXPECT_EQ(counted_sram_bits(rtl, "kld_ring_a_replay", &log), roles[8].bits()) << name << "\n" << log;
  }
}

}  // namespace
}  // namespace kaleido
