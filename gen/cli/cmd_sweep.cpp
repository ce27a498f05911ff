// `kaleido sweep FILE`: a synthesis sweep described as data (docs/sweep.md),
// parallel with -j, resumable, with CSV/JSON/Markdown/SVG reports.
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "sweep/aggregate.hpp"
#include "sweep/runner.hpp"
#include "sweep/sweep_spec.hpp"

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
      sum = sweep::run_sweep(spec, o);
    }
    sweep::write_reports(spec, out_dir, sweep::collect_rows(spec, out_dir), sum.seconds);
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
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace kaleido::cli
