// Whether an external tool (verilator, yosys, sta, ...) is installed, so that a
// test that needs it can skip visibly instead of failing.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace kaleido::testing {

// True when `name` is an executable file in one of PATH's folders.
inline bool have_tool(const std::string& name) {
  const char* env = std::getenv("PATH");
  const std::string path = env ? env : "";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::filesystem::path candidate = std::filesystem::path(path.substr(start, end - start)) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace kaleido::testing
