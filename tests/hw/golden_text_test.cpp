// Emitted text of a few small generated modules against reviewed expected
// files in tests/hw/golden/ (the version string is written there as
// @VERSION@): kld_pe with DATA_W 4 / ACC_W 8 (without and with the multiplier
// pipeline), a small kld_sram, the kld_detector_lane (both kinds) and a kld_merge of a tiny
// configuration. A change in the generator's output shows here as a diff to
// review, not as a silent change of the checked-in RTL.
//
// To refresh the expected files deliberately (after reviewing the new text):
//   KALEIDO_UPDATE_GOLDEN=1 ./tests/test_hw --gtest_filter='HwGoldenText.*'
// then read `git diff tests/hw/golden` line by line before committing.
#include <gtest/gtest.h>

#include "hw_test_util.hpp"

namespace kaleido::hwtest {
namespace {

const std::string kVersionTag = "@VERSION@";

fs::path golden_dir() { return fs::path(KALEIDO_SOURCE_DIR) / "tests" / "hw" / "golden"; }

// A tiny configuration: 2x1 array, one 2-channel segment, 4-bit data,
// 8-bit accumulator, 2x2x2 tokens, K up to 4, a window of 2.
hw::HwConfig tiny(int mul_pipe) {
  hw::HwConfig c;
  c.rows = 2;
  c.cols = 1;
  c.group_w = 2;
  c.data_w = 4;
  c.acc_w = 8;
  c.max_t = 2;
  c.max_h = 2;
  c.max_w = 2;
  c.max_k = 4;
  c.max_m = 1;
  c.win_cap = 2;
  c.mul_pipe = mul_pipe;
  return c;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size())) text.replace(p, from.size(), to);
  return text;
}

std::string emitted(const hw::HwConfig& c, const std::string& file) {
  for (const hw::GeneratedFile& f : hw::generate_files(c))
    if (f.name == file) return f.text;
  throw Error("the generator wrote no " + file);
}

// The first line that differs, for a readable failure.
std::string first_difference(const std::string& got, const std::string& want) {
  size_t line = 1, i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) line += got[i++] == '\n';
  auto line_at = [](const std::string& s, size_t pos) {
    const size_t b = s.rfind('\n', pos == 0 ? 0 : pos - 1);
    const size_t start = b == std::string::npos || pos == 0 ? 0 : b + 1;
    return s.substr(start, s.find('\n', start) - start);
  };
  return "line " + std::to_string(line) + ":\n  expected: " + line_at(want, i) + "\n  got:      " + line_at(got, i);
}

void check_golden(const hw::HwConfig& c, const std::string& module_file, const std::string& golden_file) {
  const std::string text = emitted(c, module_file);
  const fs::path path = golden_dir() / golden_file;
  if (env_flag("KALEIDO_UPDATE_GOLDEN")) {
    write_file_atomic(path, replace_all(text, version(), kVersionTag));
    std::printf("refreshed %s: review `git diff %s` before committing\n", path.c_str(), path.c_str());
    return;
  }
  ASSERT_TRUE(fs::exists(path)) << path << " is missing (see the comment at the top of this file)";
  const std::string want = replace_all(read_file(path), kVersionTag, version());
  EXPECT_TRUE(text == want) << module_file << " differs from " << path << " at " << first_difference(text, want);
}

TEST(HwGoldenText, ProcessingElement) { check_golden(tiny(0), "kld_pe.v", "kld_pe.v"); }

TEST(HwGoldenText, ProcessingElementWithMultiplierPipeline) {
  check_golden(tiny(1), "kld_pe.v", "kld_pe_mul_pipe.v");
}

TEST(HwGoldenText, SmallSram) { check_golden(tiny(0), "kld_sram_8x3.v", "kld_sram_8x3.v"); }

TEST(HwGoldenText, DetectorLane) { check_golden(tiny(0), "kld_detector_lane.v", "kld_detector_lane.v"); }

// The lane that decides two groups in alternate cycles (LANE_GROUPS 2).
TEST(HwGoldenText, DetectorLaneOfTwoGroups) {
  hw::HwConfig c = tiny(0);
  c.lane_groups = 2;
  check_golden(c, "kld_detector_lane.v", "kld_detector_lane_two_groups.v");
}

// The merge of four groups (MAX_K 8): the gather's carry-save tree takes three terms to a sum and
// a carry, passes the fourth, compresses the three words left and adds the last two.
TEST(HwGoldenText, MergeOfFourGroups) {
  hw::HwConfig c = tiny(0);
  c.max_k = 8;
  check_golden(c, "kld_merge.v", "kld_merge_four_groups.v");
}

// The expected files differ between the two PE variants only where the
// pipeline register is (a guard against refreshing one file from the other).
TEST(HwGoldenText, PipelineVariantsDiffer) {
  EXPECT_NE(emitted(tiny(0), "kld_pe.v"), emitted(tiny(1), "kld_pe.v"));
}

}  // namespace
}  // namespace kaleido::hwtest
