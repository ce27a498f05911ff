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

// The main job's configuration: the 8x8 preset sized for one attention head of the default
// model (K <= 128, the head dimension of Wan2.1), so that the default workload runs whole.
hw::HwConfig flow_default_config() {
  hw::HwConfig c;
  c.max_k = 128;
  return c;
}

struct FlowCommand {
  CLI::App* sub = nullptr;
  HwOptions hw;
  WorkloadOptions w;
  WorkloadSource source{"qk"};
  std::vector<std::string> liberty;
  // The reference clock of every energy figure so far (the default configuration's Fmax on the
  // generic library is about 330 MHz; the report also gives energy at Fmax).
  double clock_ns = 12.0;
  std::string report, work;
  bool no_lint = false, no_synth = false, no_plain = false, no_power = false, json = false;

  FlowCommand() {
    // The default workload fills the default configuration's grid (4x16x16 tokens). The latent and
    // synthetic workloads keep K = M = 32, so that the gate-level replay of both modes stays short,
    // and reuse half of the (token, group) pairs unless thresholds are given.
    w.grid = "4x16x16";
    w.channels = 32;
    w.out_cols = 32;
    source.untuned_target_reuse = 0.5;
    source.key_tiles = 2;  // qk: the next key tile too, with CTRL.KEEP (when the grid holds two)
  }

  void run() {
    flow::FlowOptions o;
    const std::string kind = source.resolve(*sub, hw);
    o.hw = hw.config();
    derive_algorithm_widths(*sub, o.hw, w.data_w, w.acc_w, w.group_w);
    hw::check_algorithm_widths(o.hw, w.data_w, w.acc_w, w.group_w);  // before any stage runs
    PreparedWorkload pw = source.prepare(*sub, w, o.hw, kind);
    o.cfg = pw.cfg;
    o.a = std::move(pw.a);
    o.b = std::move(pw.b);
    if (!pw.more_b.empty()) o.kept_b = std::move(pw.more_b.front());
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
  cmd->hw.add_to(*sub, flow_default_config());
  cmd->w.add_to(*sub);
  cmd->source.add_to(*sub);
  sub->add_option("--key-tiles", cmd->source.key_tiles,
                  "qk: 1 = one key tile; 2 = also the next one, run with CTRL.KEEP on the first one's decisions "
                  "(its cycles and its GEMM's energy; the default when the grid holds two tiles)")
      ->check(CLI::Range(1, 2))
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
