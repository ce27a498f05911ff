// The EDA tools (yosys, sta, verilator) as the PPA code runs them: found on
// PATH with an error that names the Debian package, output captured to a log
// file, timed. A thin layer over the one process runner (common/process.hpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/process.hpp"

namespace kaleido::ppa {

struct ToolRun {
  int exit_code = 0;
  double seconds = 0;
  std::filesystem::path log;  // stdout and stderr together
  std::string output;         // contents of the log
};

// Absolute path of `name` found on PATH. Throws kaleido::Error naming the
// Debian package to install when it is missing.
inline std::string find_tool(const std::string& name, const std::string& debian_package) {
  return find_program(name, debian_package);
}

// Runs argv[0] (resolved with find_tool beforehand by the caller) in `workdir`
// with stdout+stderr to `log`. Never throws for a non-zero exit: the caller
// decides, and shows the log tail.
ToolRun run_tool(const std::vector<std::string>& argv, const std::filesystem::path& workdir,
                 const std::filesystem::path& log);

// Last `lines` lines of a tool's output, for error messages.
using kaleido::tail_lines;

}  // namespace kaleido::ppa
