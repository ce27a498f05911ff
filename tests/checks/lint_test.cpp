// `kaleido lint` passes on the checked-in RTL and fails on an injected error.
#include <gtest/gtest.h>

#include <filesystem>

#include "checks/lint.hpp"
#include "common/atomic_file.hpp"
#include "hw/drift.hpp"

namespace kaleido {
namespace {

namespace fs = std::filesystem;

TEST(Lint, CheckedInRtlIsClean) {
  for (const fs::path& d : hw::default_rtl_dirs()) {
    const auto results = checks::lint_folder(d);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results) EXPECT_TRUE(r.clean) << d << " " << r.top << "\n" << r.output;
  }
}

TEST(Lint, AnInjectedErrorIsReported) {
  const fs::path src = hw::default_rtl_dirs().front();
  const fs::path copy = fs::temp_directory_path() / ("kaleido_lint_copy_" + std::to_string(::getpid()));
  fs::remove_all(copy);
  fs::copy(src, copy);
  // A width mismatch: assign the 32-bit partial sum to the 8-bit activation output.
  std::string pe = read_file(copy / "kld_pe.v");
  const size_t at = pe.find("assign a_o = a_q;");
  ASSERT_NE(at, std::string::npos);
  pe.replace(at, 17, "assign a_o = psum_q;");
  write_file_atomic(copy / "kld_pe.v", pe);
  const auto results = checks::lint_folder(copy);
  for (const auto& r : results) {
    EXPECT_FALSE(r.clean) << r.top;
    EXPECT_NE(r.output.find("WIDTH"), std::string::npos) << r.output;
  }
  const std::string md = checks::lint_report_markdown(results);
  EXPECT_NE(md.find("0 of 2 clean"), std::string::npos) << md;
  fs::remove_all(copy);
}

}  // namespace
}  // namespace kaleido
