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
  double heartbeat_seconds = 30;  // wait_for reports at least this often, even when nothing changed
};

// True when sbatch and squeue are on PATH.
bool available();

// Submits `command` (run by the shell on the node, once per task, with
// $SLURM_ARRAY_TASK_ID set) as an array over `indices`. Task logs go to
// <log_dir>/<job>_<index>.log. Returns the job id. Throws Error naming the
// command and sbatch's message when submission fails.
std::string submit_array(const Options& opt, const std::string& job_name, const std::vector<size_t>& indices,
                         const std::string& command, const std::filesystem::path& log_dir);

// The tasks of a job still in the queue, by state.
struct QueueState {
  int pending = 0, running = 0, other = 0;  // other: completing, suspended, ...
  int in_queue() const { return pending + running + other; }
  bool operator==(const QueueState& o) const { return pending == o.pending && running == o.running && other == o.other; }
  std::string text() const;  // "3 pending, 2 running"
};

// Waits until no task of `job_id` is pending or running. `tick` (for progress
// lines) is called after the first poll, whenever the queue changed, every
// heartbeat_seconds, and once the queue is empty. Throws Error when squeue fails.
void wait_for(const std::string& job_id, const Options& opt, const std::function<void(const QueueState&)>& tick = {});

// "0-3,7,9-10": indices in Slurm's --array syntax (sorted, ranges merged).
std::string array_spec(std::vector<size_t> indices);

}  // namespace kaleido::slurm
