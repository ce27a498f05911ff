// Running a command as a Slurm job array: submit with sbatch, follow with
// squeue/scontrol (sacct needs slurmdbd, which small clusters often lack),
// report progress, return when every task has left the queue. The sweep and
// the soak use it; the work itself is done by `kaleido` on the nodes, which
// write their results into a folder every node sees.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace kaleido::slurm {

struct Options {
  std::string partition;  // -p; empty: the cluster's default
  std::string account;    // -A
  std::string time;       // -t, e.g. "01:00:00"
  std::string mem;        // --mem, e.g. "4G"
  int max_parallel = 0;   // > 0: at most this many tasks at once (--array=...%N)
  double poll_seconds = 2;
};

// True when sbatch and squeue are on PATH.
bool available();

// Submits `command` (run by the shell on the node, once per task, with
// $SLURM_ARRAY_TASK_ID set) as an array over `indices`. Task logs go to
// <log_dir>/<job>_<index>.log. Returns the job id. Throws Error naming the
// command and sbatch's message when submission fails.
std::string submit_array(const Options& opt, const std::string& job_name, const std::vector<size_t>& indices,
                         const std::string& command, const std::filesystem::path& log_dir);

// Waits until no task of `job_id` is pending or running; `tick` is called
// after every poll (for progress lines). Throws Error when squeue fails.
void wait_for(const std::string& job_id, const Options& opt, const std::function<void(int in_queue)>& tick = {});

// "0-3,7,9-10": indices in Slurm's --array syntax (sorted, ranges merged).
std::string array_spec(std::vector<size_t> indices);

}  // namespace kaleido::slurm
