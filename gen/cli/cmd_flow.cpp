// `kaleido flow`: the main job (generate, lint, golden model and Verilator
// simulation on a real clip, synthesis, timing, activity-based power, report).
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/hw_options.hpp"
#include "cli/workload_options.hpp"
#include "common/error.hpp"
#include "flow/flow.hpp"
#include "workload/models.hpp"

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
  std::string workload = "qk";
  std::string clip = "cockatoo";
  int diffusion_step = 47;
  std::string proxy = "denoised";
  std::string model = "wan2.1-1.3b";
  std::vector<std::string> liberty;
  // The reference clock of every energy figure so far (the default configuration's Fmax on the
  // generic library is about 330 MHz; the report also gives energy at Fmax).
  double clock_ns = 12.0;
  std::string report, work;
  bool no_lint = false, no_synth = false, no_plain = false, no_power = false, json = false;

  FlowCommand() {
    // The default workload fills the default configuration's grid (4x16x16 tokens). The latent and
    // synthetic workloads keep K = M = 32, so that the gate-level replay of both modes stays short.
    w.grid = "4x16x16";
    w.channels = 32;
    w.out_cols = 32;
  }

  bool given(const char* option) const { return sub->get_option(option)->count() > 0; }

  PreparedWorkload prepare() {
    if (!given("--workload") && clip.empty()) workload = "synthetic";  // `--clip ''`: the synthetic workload
    if (workload != "qk" && workload != "latent" && workload != "synthetic")
      throw ConfigError("workload", workload, "must be qk, latent or synthetic");
    if (workload != "synthetic" && clip.empty())
      throw ConfigError("clip", "''",
                        "the " + workload + " workload is built from a clip; give one, or --workload synthetic");
    const bool thresholds_given = given("--tau") || given("--tau-schedule") || given("--block-schedule") ||
                                  given("--target-reuse") || given("--target-psnr") || given("--target-snr");
    if (workload == "synthetic" && given("--diffusion-step"))
      throw ConfigError("diffusion-step", std::to_string(diffusion_step), "applies to the clip workloads only");
    if (workload != "qk") {
      for (const char* o : {"--proxy", "--model"})
        if (given(o))
          throw ConfigError(o + 2, sub->get_option(o)->as<std::string>(), "applies to --workload qk only");
      // Half of the (token, group) pairs reused unless the thresholds are given.
      if (!thresholds_given) w.target_reuse = 0.5;
      return prepare_workload(w, workload == "synthetic" ? std::string() : clip, diffusion_step);
    }
    // Q K^T of one head: K is the head dimension, M one key tile (MAX_M keys unless --out-cols).
    // With no threshold option, the thresholds are calibrated for the shared default output SNR.
    workload::QkWorkloadSpec spec;
    spec.clip = clip;
    spec.grid = parse_grid(w.grid);
    spec.model = model;
    spec.proxy = proxy;
    spec.step = diffusion_step;
    spec.data_w = w.data_w;
    spec.noise_seed = w.seed + 6;  // 7 with the default seed, as in the study
    const workload::ModelShape& shape = workload::find_model(model);
    if (given("--channels") && w.channels != shape.head_dim)
      throw ConfigError("channels", std::to_string(w.channels),
                        "the qk workload's K is " + shape.title + "'s head dimension, " +
                            std::to_string(shape.head_dim));
    if (!given("--band")) w.band = shape.band_preset;
    const int keys = given("--out-cols") ? w.out_cols : hw.config().max_m;
    return prepare_qk_workload(w, spec, keys);
  }

  void run() {
    flow::FlowOptions o;
    o.hw = hw.config();
    derive_algorithm_widths(*sub, o.hw, w.data_w, w.acc_w, w.group_w);
    hw::check_algorithm_widths(o.hw, w.data_w, w.acc_w, w.group_w);  // before any stage runs
    PreparedWorkload pw = prepare();
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
  cmd->hw.add_to(*sub, flow_default_config());
  cmd->w.add_to(*sub);
  sub->add_option("--workload", cmd->workload,
                  "qk: S = Q K^T of one attention head (K = the head dimension, M = one key tile of MAX_M keys) "
                  "from the clip's latent proxy; latent: the clip's proxy latent times random weights; "
                  "synthetic: the correlated synthetic latent (also chosen by --clip '')")
      ->capture_default_str();
  sub->add_option("--clip", cmd->clip, "Real clip (any ffmpeg-readable file, .y4m natively, 'cockatoo'); '' = synthetic")
      ->capture_default_str();
  sub->add_option("--diffusion-step", cmd->diffusion_step,
                  "Clip workloads: step of a 50-step flow schedule (shift 5; step 47 is sigma 0.24)")
      ->capture_default_str();
  sub->add_option("--proxy", cmd->proxy,
                  "qk: denoised (Wiener estimate of the clean latent, spectrum from other frames) or raw (x_t)")
      ->capture_default_str();
  sub->add_option("--model", cmd->model, "qk: the model shape (head dimension, RoPE bands, VAE and patch strides)")
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
