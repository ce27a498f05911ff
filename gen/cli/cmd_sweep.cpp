// `kaleido sweep FILE`: a synthesis sweep described as data (docs/sweep.md),
// parallel with -j, resumable, with CSV/JSON/Markdown/SVG reports.
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "sweep/aggregate.hpp"
#include "sweep/runner.hpp"
#include "sweep/sweep_spec.hpp"
#include "common/slurm.hpp"

namespace kaleido::cli {

namespace {

struct SweepCommand {
  std::string file;
  std::string out;
  std::string work;
  int jobs = 1;
  bool force = false;
  int max_pes = 0;
  bool list = false;
  bool report_only = false;
  std::string backend = "local";
  slurm::Options slurm;
  std::string shared;
  int point = -1;

  void run() const {
    const sweep::SweepSpec spec = sweep::load_sweep(file);
    const std::filesystem::path out_dir = out.empty() ? std::filesystem::path("out") / ("sweep_" + spec.name) : std::filesystem::path(out);
    if (list) {
      for (const sweep::SweepPoint& p : spec.points)
        std::cout << p.id << (p.library.unavailable.empty() ? "" : "  (skipped: " + p.library.unavailable + ")") << "\n";
      std::cout << spec.points.size() << " points x " << spec.tops.size() << " tops"
                << (spec.duplicates_removed ? ", " + std::to_string(spec.duplicates_removed) + " duplicates removed" : "")
                << "\n";
      return;
    }
    sweep::RunSummary sum;
    if (!report_only) {
      sweep::RunOptions o;
      o.out = out_dir;
      o.work = work;
      o.jobs = jobs;
      o.force = force;
      o.max_pes = max_pes;
      o.progress = &std::cerr;
      o.only_point = point;
      if (backend == "slurm") {
        if (point >= 0)
          throw ConfigError("--point", std::to_string(point), "is what each Slurm task runs; not with --backend slurm");
        sum = sweep::run_sweep_slurm(spec, file, o, slurm, shared);
      } else {
        sum = sweep::run_sweep(spec, o);
      }
    }
    if (point >= 0) {  // one task of a Slurm array: the coordinator writes the reports
      if (sum.points.at(static_cast<size_t>(point)).status == sweep::PointStatus::Failed)
        throw Error("sweep " + spec.name + ": point " + spec.points[static_cast<size_t>(point)].id + " failed: " +
                    sum.points[static_cast<size_t>(point)].message);
      return;
    }
    // A report-only rebuild keeps the wall time of the last real run.
    const double run_seconds = report_only ? sweep::last_run_seconds(out_dir) : sum.seconds;
    sweep::write_reports(spec, out_dir, sweep::collect_rows(spec, out_dir), run_seconds);
    if (report_only) {
      std::cout << "kaleido sweep: reports rebuilt in " << out_dir.string() << "\n";
      return;
    }
    using S = sweep::PointStatus;
    std::cout << "kaleido sweep " << spec.name << ": " << spec.points.size() << " points: " << sum.count(S::Done)
              << " run, " << sum.count(S::SkippedDone) << " skipped (done), " << sum.count(S::SkippedUnavailable)
              << " skipped (library not installed), " << sum.count(S::SkippedLimit) << " not run (--max-pes), "
              << sum.count(S::Failed) << " failed; " << sum.seconds
              << " s; reports in " << (out_dir / "summary.md").string() << "\n";
    std::string failed;
    for (size_t i = 0; i < spec.points.size(); ++i)
      if (sum.points[i].status == S::Failed) failed += (failed.empty() ? "" : ", ") + spec.points[i].id;
    if (!failed.empty())
      throw Error("sweep " + spec.name + ": points failed: " + failed + " (see points/<id>/error.log in " +
                  out_dir.string() + ")");
  }
};

}  // namespace

void register_sweep(CLI::App& app) {
  auto cmd = std::make_shared<SweepCommand>();
  CLI::App* sub = app.add_subcommand(
      "sweep", "Run a synthesis sweep described in a JSON file (array sizes, widths, clocks, libraries); resumable");
  sub->add_option("file", cmd->file, "Sweep description (JSON, see docs/sweep.md)")->required();
  sub->add_option("--out", cmd->out, "Output folder (default out/sweep_<name>)");
  sub->add_option("--work-dir", cmd->work,
                  "RTL, netlists and tool logs (default <out>/points/<id>; a temp folder when --out is in the source tree)");
  sub->add_option("-j,--jobs", cmd->jobs, "Points run in parallel")->capture_default_str();
  sub->add_flag("--force", cmd->force, "Redo finished points");
  sub->add_option("--max-pes", cmd->max_pes,
                  "Run only arrays of at most this many PEs now (the cheap part); the rest are reported as not run");
  sub->add_flag("--list", cmd->list, "List the points and exit");
  sub->add_flag("--report-only", cmd->report_only, "Only rebuild the reports from the finished points");
  sub->add_option("--backend", cmd->backend, "Where the points run: local (-j threads) or slurm (a job array)")
      ->check(CLI::IsMember({"local", "slurm"}))
      ->capture_default_str();
  sub->add_option("--partition", cmd->slurm.partition, "Slurm partition (default: the cluster's)");
  sub->add_option("--account", cmd->slurm.account, "Slurm account");
  sub->add_option("--time", cmd->slurm.time, "Slurm time limit per point, e.g. 01:00:00");
  sub->add_option("--mem", cmd->slurm.mem, "Slurm memory per point, e.g. 4G");
  sub->add_option("--max-parallel", cmd->slurm.max_parallel, "Slurm: at most this many points at once (0 = no limit)");
  sub->add_option("--shared-dir", cmd->shared,
                  "Slurm: a folder every node sees, for task logs and work files (default: the --out folder)");
  sub->add_option("--point", cmd->point, "Run only the point with this index (what each Slurm task does)");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace kaleido::cli
