// The one way kaleido runs another program: an argument vector (no shell, so
// no quoting bugs), stdin from /dev/null, stdout and stderr captured together
// (and copied to a log file when asked), an optional time limit that ends the
// program and everything it started, and errors that name the command.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kaleido {

struct ProcessOptions {
  std::filesystem::path workdir;  // empty: the current folder
  std::filesystem::path log;      // empty: output kept in memory only
  double timeout_s = 0;           // <= 0: no limit
  std::vector<std::pair<std::string, std::string>> env;  // added to (or replacing in) the environment
};

struct ProcessResult {
  std::vector<std::string> argv;
  int exit_code = 0;  // 128 + signal when killed by a signal
  bool timed_out = false;
  double seconds = 0;
  std::string output;  // stdout and stderr interleaved as written
  std::filesystem::path log;
  bool ok() const { return exit_code == 0 && !timed_out; }
};

// Runs argv (argv[0] a path, or a name looked up on PATH). Never throws for a
// non-zero exit or a timeout: the caller decides. Throws kaleido::Error naming
// the command when it cannot be started (not found, not executable, no such
// workdir) and FileError when the log cannot be written.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& opt = {});

// As run_process, but a non-zero exit or a timeout throws kaleido::Error with
// the command, the exit status, the log's path and the last lines of output.
ProcessResult run_checked(const std::vector<std::string>& argv, const ProcessOptions& opt = {});

// The command as a person would type it (shell-quoted where needed), for
// messages and logs.
std::string command_text(const std::vector<std::string>& argv);

// A short description of how a run ended: "exit 2", "killed by signal 9",
// "timed out after 5 s".
std::string exit_text(const ProcessResult& r);

// Absolute path of `name` on PATH, if any.
std::optional<std::string> which(const std::string& name);

// Absolute path of `name` on PATH; throws kaleido::Error naming the Debian
// package to install when it is missing.
std::string find_program(const std::string& name, const std::string& debian_package);

// The last `lines` lines of a program's output, for error messages.
std::string tail_lines(const std::string& text, size_t lines);

}  // namespace kaleido
