// Runs the points of a sweep: RTL generation, then synthesis, timing and
// power of every top (ppa::run_synthesis_flow), in parallel over points.
// A point is finished when <out>/points/<id>/result.json exists (written
// last, atomically), so a rerun skips it; a failing point leaves failed.json
// and error.log and the others go on.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "common/slurm.hpp"
#include "sweep/sweep_spec.hpp"

namespace kaleido::sweep {

struct RunOptions {
  std::filesystem::path out;
  // RTL, netlists and tool logs. Empty: <out>/points/<id>, unless <out> is
  // inside the source tree (outside build*/ and out/), then a folder under the
  // system temp dir, so that netlists and merged PDK Liberty files never land
  // in the repository.
  std::filesystem::path work;
  int jobs = 1;
  bool force = false;               // redo finished points
  int max_pes = 0;                  // > 0: leave larger arrays for a later run (reported "not run")
  int only_point = -1;              // >= 0: run this point (index in the spec) alone, e.g. as a Slurm task
  std::ostream* progress = nullptr;  // progress lines; null = quiet
};

enum class PointStatus { Done, SkippedDone, SkippedUnavailable, SkippedLimit, Failed };

struct PointOutcome {
  PointStatus status = PointStatus::Failed;
  std::string message;  // the reason of a skip or a failure
  double seconds = 0;
};

struct RunSummary {
  std::vector<PointOutcome> points;  // in spec order
  int count(PointStatus s) const;
  double seconds = 0;
};

// Files of one point inside <out>.
std::filesystem::path point_dir(const std::filesystem::path& out, const SweepPoint& p);
std::filesystem::path result_file(const std::filesystem::path& out, const SweepPoint& p);
std::filesystem::path failure_file(const std::filesystem::path& out, const SweepPoint& p);

// The heavy-files root that RunOptions::work defaults to.
std::filesystem::path default_work_root(const SweepSpec& spec, const std::filesystem::path& out);

RunSummary run_sweep(const SweepSpec& spec, const RunOptions& opt);

// The same points as a Slurm job array: one task per point that is not
// finished (or every point with force), each running
// `<kaleido> sweep <spec_file> --point I` on a node; then the outcomes are read
// back from <out>/points. Task logs: <shared>/slurm/<job>_<I>.log; work files
// under <shared>/work (the nodes must see <out> and <shared>; empty shared =
// <out>). A task that leaves no result is recorded as a failed point.
RunSummary run_sweep_slurm(const SweepSpec& spec, const std::filesystem::path& spec_file, const RunOptions& opt,
                           const slurm::Options& slurm_opt, const std::filesystem::path& shared);

}  // namespace kaleido::sweep
