// `kaleido equiv`: formal equivalence of generated RTL and its gate netlist,
// one proof per unique module plus the wiring of modules with submodules
// (docs/equivalence.md). Writes equiv.json and equiv.md into --out and exits
// non-zero unless every checked module is proven equivalent.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "cli/hw_options.hpp"
#include "common/error.hpp"
#include "equiv/equiv.hpp"
#include "hw/generator.hpp"

namespace kaleido::cli {

namespace {

struct EquivCommand {
  std::string rtl;
  HwOptions hw;
  std::string top = "kld_top";
  std::vector<std::string> liberty;
  std::string netlist;
  std::vector<std::string> modules;
  std::string out;
  double timeout_s = 600;
  double clock_ns = 2.0;
  std::string recipe = ppa::kDefaultSynthRecipe;
  int sim_rounds = 64;

  void run() {
    namespace fs = std::filesystem;
    equiv::EquivOptions o;
    if (!rtl.empty()) {
      if (!fs::is_directory(rtl)) throw ConfigError("--rtl", rtl, "is not a folder");
      o.rtl_dir = rtl;
    } else {
      // No folder given: generate the configuration of the generator options.
      const fs::path dir = fs::path(out) / "rtl";
      fs::create_directories(out);
      hw::write_rtl(hw.config(), dir);
      std::fprintf(stderr, "kaleido equiv: generated RTL in %s\n", dir.string().c_str());
      o.rtl_dir = dir;
    }
    o.top = top;
    for (const std::string& l : liberty) o.liberty.push_back(l);
    o.netlist = netlist;
    o.modules = modules;
    o.out_dir = out;
    o.proof_timeout_s = timeout_s;
    o.clock_period_ns = clock_ns;
    o.synth_recipe = recipe;
    o.sim_rounds = sim_rounds;
    o.progress = [](const std::string& s) { std::fprintf(stderr, "kaleido equiv: %s\n", s.c_str()); };
    const equiv::EquivResult r = equiv::run_equivalence(o);
    for (const equiv::ProofResult& p : r.proofs)
      std::printf("%-16s %-22s %-15s %8.2f s  %s\n", p.module.c_str(), p.kind.c_str(),
                  equiv::status_text(p.status).c_str(), p.seconds, p.method.c_str());
    std::printf("report: %s, %s\n", r.json_report.string().c_str(), r.md_report.string().c_str());
    if (!r.all_equivalent())
      throw Error(std::to_string(r.proofs.size() - r.count(equiv::Status::Equivalent)) + " of " +
                  std::to_string(r.proofs.size()) + " module(s) not proven equivalent (" +
                  std::to_string(r.count(equiv::Status::NotEquivalent)) + " not equivalent, " +
                  std::to_string(r.count(equiv::Status::Unknown)) + " unknown); see " + r.md_report.string());
  }
};

}  // namespace

void register_equiv(CLI::App& app) {
  auto cmd = std::make_shared<EquivCommand>();
  CLI::App* sub = app.add_subcommand(
      "equiv", "Prove generated RTL equivalent to its synthesised gate netlist (Yosys + yosys-abc), module by module");
  sub->add_option("--rtl", cmd->rtl, "Folder of generated RTL (default: generate from the generator options)");
  cmd->hw.add_to(*sub);
  sub->add_option("--top", cmd->top, "Top module")->capture_default_str();
  sub->add_option("--liberty", cmd->liberty,
                  "Liberty file (.lib/.lib.gz; repeat for a split library); default kaleido_generic.lib (made by the build from scripts/liberty/make_kaleido_generic.py)");
  sub->add_option("--netlist", cmd->netlist,
                  "Mapped hierarchical Verilog netlist of --top on that library (default: synthesise it here)");
  sub->add_option("--modules", cmd->modules, "Only these modules (comma-separated)")->delimiter(',');
  sub->add_option("--out,-o", cmd->out, "Output folder (equiv.json, equiv.md; intermediate files in <out>/work)")
      ->required();
  sub->add_option("--timeout", cmd->timeout_s, "Time limit per module proof in seconds (then: unknown)")
      ->capture_default_str();
  sub->add_option("--clock-ns", cmd->clock_ns, "Clock period for synthesising the netlist here")->capture_default_str();
  sub->add_option("--recipe", cmd->recipe,
                  "Synthesis recipe of the netlist made here: " + ppa::synth_recipe_names() + " (kaleido synth --recipe)")
      ->capture_default_str();
  sub->add_option("--sim-rounds", cmd->sim_rounds, "Random simulation before each proof: rounds of 64 patterns")
      ->capture_default_str();
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace kaleido::cli
