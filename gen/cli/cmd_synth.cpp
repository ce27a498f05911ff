// `kaleido synth`: synthesis, timing and power of a folder of Verilog with one
// Liberty library (default: the project's generic library); writes
// synth.json (ORFS-style metric names) and synth.md into --out.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "ppa/stimulus.hpp"
#include "ppa/synth.hpp"
#include "ppa/yosys_flow.hpp"

namespace kaleido::cli {

namespace {

struct SynthCommand {
  std::vector<std::string> rtl;
  std::string top;
  std::vector<std::string> liberty;
  double clock_ns = 0;
  std::string out;
  std::string config;
  std::string sdc_dir;
  double activity = 0.1;
  uint64_t sim_cycles = 0;
  double toggle_prob = 0.5;
  uint64_t seed = 1;
  std::string vectors;
  bool no_sta = false;
  bool flatten = false;
  bool no_macro_pin_buffers = false;
  std::string recipe = ppa::kDefaultSynthRecipe;
  bool sdc_only = false;
  bool json = false;

  void run() const {
    namespace fs = std::filesystem;
    ppa::SynthOptions o;
    for (const std::string& p : rtl) {
      if (fs::is_directory(p)) {
        if (o.rtl_dir.empty()) o.rtl_dir = p;
        else for (const fs::path& f : ppa::rtl_files_in(p)) o.rtl_files.push_back(f);
      } else if (fs::exists(p)) {
        o.rtl_files.push_back(p);
      } else {
        throw ConfigError("--rtl", p, "is neither a folder nor a file");
      }
    }
    o.top = top;
    for (const std::string& l : liberty) o.liberty.push_back(l);
    o.clock_period_ns = clock_ns;
    o.out_dir = out;
    o.config_name = config;
    o.sdc_dir = sdc_dir;
    o.vectorless_activity = activity;
    o.run_sta = !no_sta;
    o.flatten = flatten;
    o.macro_pin_outputs = !no_macro_pin_buffers;
    o.recipe = recipe;
    o.sdc_only = sdc_only;
    if (!vectors.empty()) {
      o.stimulus = std::make_shared<ppa::VectorFileStimulus>(vectors);
      o.sim_cycles = sim_cycles ? sim_cycles : 1000;
    } else if (sim_cycles > 0) {
      o.stimulus = std::make_shared<ppa::RandomStimulus>(seed, toggle_prob, 2, o.clock_port, o.reset_port);
      o.sim_cycles = sim_cycles;
    }
    const ppa::SynthResult r = ppa::run_synthesis_flow(o);
    if (sdc_only) {
      std::cout << "kaleido synth: wrote " << r.sdc << (sdc_dir.empty() ? "" : " (and a copy in " + sdc_dir + ")")
                << "\n";
      return;
    }
    if (json) std::cout << ppa::result_json(r).dump(2) << "\n";
    else std::cout << ppa::result_summary(r);
  }
};

}  // namespace

void register_synth(CLI::App& app) {
  auto cmd = std::make_shared<SynthCommand>();
  CLI::App* sub = app.add_subcommand(
      "synth", "Synthesise Verilog onto a Liberty library (Yosys), time it and estimate power (OpenSTA + kaleido)");
  sub->add_option("--rtl", cmd->rtl, "Folder of .v/.sv files, or a file (repeatable)")->required();
  sub->add_option("--top", cmd->top, "Top module")->required();
  sub->add_option("--liberty", cmd->liberty,
                  "Liberty file, .lib or .lib.gz (repeat for a library split in several files); "
                  "default kaleido_generic.lib (made by the build from scripts/liberty/make_kaleido_generic.py)");
  sub->add_option("--clock-ns", cmd->clock_ns, "Target clock period in ns")->required();
  sub->add_option("--out", cmd->out, "Output folder (reports, netlists; intermediate files in <out>/work)")->required();
  sub->add_option("--config", cmd->config, "Configuration name for the SDC file (<config>.sdc); default: top");
  sub->add_option("--sdc-dir", cmd->sdc_dir, "Also write the SDC here (e.g. constraints/)");
  sub->add_option("--activity", cmd->activity, "Vectorless activity, transitions per clock cycle")->capture_default_str();
  sub->add_option("--sim-cycles", cmd->sim_cycles,
                  "Activity-based power: simulate the mapped netlist this many cycles with random inputs (0 = off)")
      ->capture_default_str();
  sub->add_option("--toggle-prob", cmd->toggle_prob, "Random stimulus: probability an input bit flips per cycle")
      ->capture_default_str();
  sub->add_option("--seed", cmd->seed, "Random stimulus seed")->capture_default_str();
  sub->add_option("--vectors", cmd->vectors, "Replay input vectors from this file instead (`ports: ...` then hex rows)");
  sub->add_flag("--no-sta", cmd->no_sta, "Skip OpenSTA (area and kaleido power only)");
  sub->add_flag("--flatten", cmd->flatten,
                "Flat synthesis: ABC times whole paths and buffers nets that fan out across modules "
                "(slower; no per-block area). Default: hierarchical");
  sub->add_flag("--no-macro-pin-buffers", cmd->no_macro_pin_buffers,
                "Let ABC see one output per net into the SRAM macros, however many it feeds (the flow before "
                "2026-12-02): its driver is then sized for one load");
  sub->add_option("--recipe", cmd->recipe,
                  "How Yosys and ABC map the logic: " + ppa::synth_recipe_names() +
                      " (scripts/yosys/synth.ys.in says what each does)")
      ->capture_default_str();
  sub->add_flag("--sdc-only", cmd->sdc_only, "Only write the SDC (<out>/<config>.sdc and --sdc-dir); no synthesis");
  sub->add_flag("--json", cmd->json, "Print the JSON report instead of the summary");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace kaleido::cli
