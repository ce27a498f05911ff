// A work folder of one's own for every test: CTest runs each test in a
// process of its own, often several at once (ctest -j) and sometimes beside
// another checkout's suite, so no two tests may share a fixed path.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace kaleido::testing {

// A fresh folder under the system temp folder (mkdtemp: unique across
// processes), removed by the destructor unless KALEIDO_KEEP_TEST_DIRS is set.
class TestDir {
 public:
  explicit TestDir(const std::string& tag) {
    std::string tmpl = (std::filesystem::temp_directory_path() / ("kaleido_" + tag + "_XXXXXX")).string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
    path_ = tmpl;
  }
  ~TestDir() {
    if (std::getenv("KALEIDO_KEEP_TEST_DIRS")) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TestDir(const TestDir&) = delete;
  TestDir& operator=(const TestDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// A fresh folder that lives until the process ends (for fixtures shared by the
// tests of one process, such as a static run used by several assertions).
inline std::filesystem::path process_dir(const std::string& tag) {
  static TestDir* keep = nullptr;  // leaked on purpose: removed by the atexit hook below
  struct Registry {
    std::filesystem::path root;
    Registry() {
      keep = new TestDir("proc" + std::to_string(::getpid()));
      root = keep->path();
      std::atexit([] { delete keep; });
    }
  };
  static Registry reg;
  const std::filesystem::path d = reg.root / tag;
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace kaleido::testing
