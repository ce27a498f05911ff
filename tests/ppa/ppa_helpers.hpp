// Shared helpers of the PPA tests: where the test designs and the open PDK
// libraries are, temporary folders, and skipping visibly when a tool or a
// library is absent.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>
#include <unistd.h>

#include "common/version.hpp"
#include "ppa/synth.hpp"
#include "support/tools.hpp"

namespace kaleido::ppa::test {

namespace fs = std::filesystem;

inline fs::path data_dir() { return fs::path(KALEIDO_SOURCE_DIR) / "tests/ppa/data"; }
inline fs::path generic_lib() { return generic_liberty(); }

// A PDK file from ../shared/pdk, or empty when absent.
inline fs::path pdk_file(const std::string& name) {
  const std::string shared = kaleido::shared_dir();
  if (shared.empty()) return {};
  const fs::path p = fs::path(shared) / "pdk" / name;
  return fs::exists(p) ? p : fs::path();
}
inline fs::path sky130() { return pdk_file("sky130_fd_sc_hd__tt_025C_1v80.lib.gz"); }

#define KLD_SKIP_WITHOUT(path, what)                                              \
  if ((path).empty()) GTEST_SKIP() << what << " not found in ../shared/pdk; skipped"

using kaleido::testing::have_tool;

// Synthesis options for a test design of data_dir().
inline SynthOptions synth_options(const std::string& top, const std::vector<std::string>& files, const fs::path& out,
                                  double period_ns) {
  SynthOptions o;
  o.top = top;
  for (const std::string& f : files) o.rtl_files.push_back(data_dir() / f);
  o.out_dir = out;
  o.clock_period_ns = period_ns;
  return o;
}

#define KLD_SKIP_WITHOUT_TOOLS()                                                                  \
  if (!kaleido::ppa::test::have_tool("yosys") || !kaleido::ppa::test::have_tool("sta"))            \
  GTEST_SKIP() << "yosys or sta not installed (Debian packages yosys, opensta); skipped"

// A fresh folder under the system temp directory, removed by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    std::string tmpl = (fs::temp_directory_path() / ("kaleido_ppa_" + tag + "_XXXXXX")).string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace kaleido::ppa::test
