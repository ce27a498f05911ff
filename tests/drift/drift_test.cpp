// The checked-in RTL (rtl/) equals the generator's output, and the check
// catches an edited, an extra and a missing file.
#include <gtest/gtest.h>

#include <filesystem>
#include <sys/wait.h>

#include "common/atomic_file.hpp"
#include "hw/drift.hpp"

namespace kaleido {
namespace {

namespace fs = std::filesystem;

TEST(Drift, CheckedInRtlEqualsTheGenerator) {
  for (const fs::path& d : hw::default_rtl_dirs()) {
    ASSERT_TRUE(fs::exists(d / "manifest.json")) << d;
    const hw::DriftReport r = hw::check_drift(d);
    EXPECT_TRUE(r.clean()) << d << ": " << (r.differences.empty() ? "" : r.differences.front())
                           << "\nregenerate deliberately with scripts/regen_rtl.sh";
  }
}

TEST(Drift, EditedExtraAndMissingFilesAreCaught) {
  const fs::path src = hw::default_rtl_dirs().front();
  const fs::path copy = fs::temp_directory_path() / ("kaleido_drift_" + std::to_string(::getpid()));
  fs::remove_all(copy);
  fs::copy(src, copy);
  ASSERT_TRUE(hw::check_drift(copy).clean());

  std::string pe = read_file(copy / "kld_pe.v");
  pe.replace(pe.find("psum_q"), 6, "psum_x");
  write_file_atomic(copy / "kld_pe.v", pe);
  hw::DriftReport r = hw::check_drift(copy);
  ASSERT_EQ(r.differences.size(), 1u);
  EXPECT_NE(r.differences[0].find("kld_pe.v: differs"), std::string::npos);

  fs::copy_file(src / "kld_pe.v", copy / "kld_pe.v", fs::copy_options::overwrite_existing);
  write_file_atomic(copy / "kld_extra.v", "module kld_extra; endmodule\n");
  fs::remove(copy / "kld_merge.v");
  r = hw::check_drift(copy);
  ASSERT_EQ(r.differences.size(), 2u);
  EXPECT_NE(r.differences[0].find("kld_extra.v: not produced"), std::string::npos);
  EXPECT_NE(r.differences[1].find("kld_merge.v: missing"), std::string::npos);

  // The command line fails too, naming the folder.
  const std::string cmd = std::string(KALEIDO_TEST_KALEIDO_BIN) + " drift --rtl " + copy.string() + " > /dev/null 2>&1";
  const int rc = std::system(cmd.c_str());
  EXPECT_NE(WEXITSTATUS(rc), 0);
  fs::remove_all(copy);
}

}  // namespace
}  // namespace kaleido
