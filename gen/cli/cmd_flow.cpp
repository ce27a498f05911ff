// `kaleido flow`: the main job (generate, lint, golden model and Verilator
// simulation on a real clip, synthesis, timing, activity-based power, report).
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/hw_options.hpp"
#include "cli/workload_options.hpp"
#include "common/error.hpp"
#include "flow/flow.hpp"

namespace kaleido::cli {

namespace {

struct FlowCommand {
  CLI::App* sub = nullptr;
  HwOptions hw;
  WorkloadOptions w;
  std::string clip = "cockatoo";
  int diffusion_step = 25;
  std::vector<std::string> liberty;
  double clock_ns = 12.0;  // the default 8x8 configuration closes timing here on the generic library (Fmax ~92 MHz)
  std::string report, work;
  bool no_lint = false, no_synth = false, no_plain = false, no_power = false, json = false;

  FlowCommand() {
    // The default workload fills the default configuration's grid (4x16x16
    // tokens) with half of the (token, group) pairs reused. K = M = 32 keeps
    // the gate-level replay of both modes (about 42k cycles) to a few minutes.
    w.grid = "4x16x16";
    w.channels = 32;
    w.out_cols = 32;
    w.target_reuse = 0.5;
    w.tau = "";
  }

  void run() {
    flow::FlowOptions o;
    o.hw = hw.config();
    derive_algorithm_widths(*sub, o.hw, w.data_w, w.acc_w, w.group_w);
    if (w.target_reuse >= 0 &&
        (w.target_psnr >= 0 || w.target_snr >= 0 || !w.tau_schedule.empty() || !w.block_schedule.empty() ||
         !w.tau.empty()))
      w.target_reuse = -1.0;  // another threshold source given: it replaces the default calibration
    if (w.tau.empty() && w.target_reuse < 0 && w.target_psnr < 0 && w.target_snr < 0 && w.tau_schedule.empty() &&
        w.block_schedule.empty())
      w.tau = "8";
    hw::check_algorithm_widths(o.hw, w.data_w, w.acc_w, w.group_w);  // before any stage runs
    PreparedWorkload pw = prepare_workload(w, clip, diffusion_step);
    o.cfg = pw.cfg;
    o.a = std::move(pw.a);
    o.b = std::move(pw.b);
    o.workload = pw.description;
    for (const std::string& l : liberty) o.liberty.push_back(l);
    o.clock_ns = clock_ns;
    o.report_dir = report.empty() ? "reports/" + o.hw.name() : report;
    o.work_dir = work.empty() ? "out/flow/" + o.hw.name() : work;
    o.lint = !no_lint;
    o.synth = !no_synth;
    o.plain_top = !no_plain;
    o.activity_power = !no_power;
    o.progress = [](const std::string& s) { std::fprintf(stderr, "kaleido flow: %s\n", s.c_str()); };
    const flow::FlowResult r = flow::run_flow(o);
    if (json) {
      std::cout << r.report.dump(2) << "\n";
    } else {
      std::cout << "kaleido flow: " << r.config << " report " << r.markdown.string() << "\n";
      const auto& h = r.report.at("headline");
      for (auto it = h.begin(); it != h.end(); ++it) std::cout << "  " << it.key() << ": " << it.value().dump() << "\n";
    }
    if (!r.bit_exact) throw Error("the RTL does not match the golden model (see the report)");
  }
};

}  // namespace

void register_flow(CLI::App& app) {
  auto cmd = std::make_shared<FlowCommand>();
  CLI::App* sub = app.add_subcommand(
      "flow", "The main job: generate, lint, simulate a real clip bit-exact, synthesise, time, power, report");
  cmd->sub = sub;
  cmd->hw.add_to(*sub);
  cmd->w.add_to(*sub);
  sub->add_option("--clip", cmd->clip, "Real clip (any ffmpeg-readable file, .y4m natively, 'cockatoo'); '' = synthetic")
      ->capture_default_str();
  sub->add_option("--diffusion-step", cmd->diffusion_step, "Clip workload: step of a 50-step flow schedule")
      ->capture_default_str();
  sub->add_option("--liberty", cmd->liberty,
                  "Liberty file(s) of one library (default: kaleido_generic.lib (made by the build from scripts/liberty/make_kaleido_generic.py))");
  sub->add_option("--clock-ns", cmd->clock_ns, "Target clock period (ns)")->capture_default_str();
  sub->add_option("--report", cmd->report, "Report folder (default reports/<config>)");
  sub->add_option("--work", cmd->work, "Work folder: RTL, netlists, vectors, stage logs (default out/flow/<config>)");
  sub->add_flag("--no-lint", cmd->no_lint, "Skip the lint stage");
  sub->add_flag("--no-synth", cmd->no_synth, "Stop after the simulation (no synthesis, timing, power)");
  sub->add_flag("--no-plain", cmd->no_plain, "Do not synthesise the dense baseline kld_plain_top");
  sub->add_flag("--no-power", cmd->no_power, "No gate-level replay (no activity-based power or energy per MAC)");
  sub->add_flag("--json", cmd->json, "Print the JSON report");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace kaleido::cli
