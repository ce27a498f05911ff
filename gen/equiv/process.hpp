// Running yosys and yosys-abc with a time limit: the equivalence check must
// never wait forever nor pass silently when a solver gives up.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kaleido::equiv {

struct ProcessRun {
  int exit_code = 0;
  bool timed_out = false;
  double seconds = 0;
  std::string output;  // stdout and stderr together (also in the log file)
};

// Runs argv (argv[0] an absolute path) in `workdir`, output to `log`. After
// `timeout_s` seconds (<= 0: no limit) the process group is killed and
// timed_out is set. Throws kaleido::Error only when the process cannot start.
ProcessRun run_with_timeout(const std::vector<std::string>& argv, const std::filesystem::path& workdir,
                            const std::filesystem::path& log, double timeout_s);

}  // namespace kaleido::equiv
