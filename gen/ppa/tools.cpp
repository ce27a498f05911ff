#include "ppa/tools.hpp"

namespace kaleido::ppa {

ToolRun run_tool(const std::vector<std::string>& argv, const std::filesystem::path& workdir,
                 const std::filesystem::path& log) {
  ProcessOptions opt;
  opt.workdir = workdir;
  opt.log = log;
  ProcessResult r = run_process(argv, opt);
  return ToolRun{r.exit_code, r.seconds, log, std::move(r.output)};
}

}  // namespace kaleido::ppa
