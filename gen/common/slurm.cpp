#include "common/slurm.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <sstream>
#include <thread>

#include "common/error.hpp"
#include "common/process.hpp"
#include "common/stopwatch.hpp"

namespace kaleido::slurm {

namespace fs = std::filesystem;

bool available() { return which("sbatch").has_value() && which("squeue").has_value(); }

std::string array_spec(std::vector<size_t> indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  std::string s;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    s += (s.empty() ? "" : ",") + std::to_string(indices[i]) + (j > i ? "-" + std::to_string(indices[j]) : "");
    i = j + 1;
  }
  return s;
}

std::string submit_array(const Options& opt, const std::string& job_name, const std::vector<size_t>& indices,
                         const std::string& command, const fs::path& log_dir) {
  if (indices.empty()) throw InternalError("submit_array: no tasks");
  fs::create_directories(log_dir);
  std::string array = array_spec(indices);
  if (opt.max_parallel > 0) array += "%" + std::to_string(opt.max_parallel);
  std::vector<std::string> argv = {find_program("sbatch", "slurm-client"), "--parsable", "--job-name", job_name,
                                   "--array", array, "--output", (fs::absolute(log_dir) / "%A_%a.log").string(),
                                   "--chdir", fs::current_path().string()};
  if (!opt.partition.empty()) argv.insert(argv.end(), {"--partition", opt.partition});
  if (!opt.account.empty()) argv.insert(argv.end(), {"--account", opt.account});
  if (!opt.time.empty()) argv.insert(argv.end(), {"--time", opt.time});
  if (!opt.mem.empty()) argv.insert(argv.end(), {"--mem", opt.mem});
  argv.insert(argv.end(), {"--wrap", command});
  ProcessOptions po;
  po.timeout_s = 120;
  const ProcessResult r = run_checked(argv, po);
  // --parsable prints "<job id>[;<cluster>]".
  std::string id = r.output.substr(0, r.output.find_first_of(";\n"));
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw Error("`" + command_text(argv) + "` printed no job id: " + r.output);
  return id;
}

std::string QueueState::text() const {
  std::string s = std::to_string(pending) + " pending, " + std::to_string(running) + " running";
  return other > 0 ? s + ", " + std::to_string(other) + " other" : s;
}

void wait_for(const std::string& job_id, const Options& opt, const std::function<void(const QueueState&)>& tick) {
  const std::string squeue = find_program("squeue", "slurm-client");
  ProcessOptions po;
  po.timeout_s = 60;
  int failures = 0;
  std::optional<QueueState> reported;
  auto last_report = std::chrono::steady_clock::now();
  for (;;) {
    // -r: one line per array task; finished tasks leave the queue.
    const ProcessResult r = run_process({squeue, "-h", "-r", "-j", job_id, "-o", "%i %T"}, po);
    QueueState q;
    bool known = true;
    if (r.ok()) {
      failures = 0;
      std::istringstream lines(r.output);
      for (std::string id, state; lines >> id >> state;) {
        if (state == "PENDING") ++q.pending;
        else if (state == "RUNNING") ++q.running;
        else ++q.other;
      }
    } else if (r.output.find("Invalid job id") != std::string::npos) {
      // the controller has already forgotten the finished job: nothing in the queue
    } else if (++failures >= 5) {
      throw Error("`squeue -j " + job_id + "` failed five times in a row (" + exit_text(r) + "): " +
                  tail_lines(r.output, 5));
    } else {
      known = false;  // unknown this time; ask again
    }
    if (known && (!reported || !(*reported == q) || seconds_since(last_report) >= opt.heartbeat_seconds)) {
      if (tick) tick(q);
      reported = q;
      last_report = std::chrono::steady_clock::now();
    }
    if (known && q.in_queue() == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(opt.poll_seconds * 1000)));
  }
}

}  // namespace kaleido::slurm
