// The PPA flow as one call: Liberty preparation, hierarchical Yosys synthesis,
// SDC, OpenSTA timing and vectorless power, the project's own power model
// (uniform activity and, with a stimulus, simulated activity), SRAM costs,
// and a JSON/Markdown report where every number says how it was obtained.
// `kaleido synth` is a thin wrapper around run_synthesis_flow().
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ppa/stimulus.hpp"
#include "ppa/power_model.hpp"
#include "ppa/sram_model.hpp"
#include "ppa/yosys_flow.hpp"
#include "ppa/endpoints.hpp"
#include "ppa/sta_flow.hpp"
#include "ppa/yosys_flow.hpp"

namespace kaleido::ppa {

// A further activity-based power estimate on the same netlist (e.g. the dense
// and the reuse run of one workload), `cycles` counted after the warm-up.
struct NamedStimulus {
  std::string name;
  std::shared_ptr<Stimulus> stimulus;
  uint64_t cycles = 0;   // counted cycles
  int64_t warmup = -1;   // cycles replayed before counting starts; -1: SynthOptions::sim_warmup
};

struct SynthOptions {
  // RTL: every *.v/*.sv of rtl_dir, plus rtl_files.
  std::filesystem::path rtl_dir;
  std::vector<std::filesystem::path> rtl_files;
  std::string top;
  // Liberty files of ONE library (several when it comes split, e.g. ASAP7);
  // empty = the project's kaleido_generic.lib (made by the build from scripts/liberty/make_kaleido_generic.py).
  std::vector<std::filesystem::path> liberty;
  double clock_period_ns = 0;
  std::filesystem::path out_dir;  // reports and netlists; intermediate files in out_dir/work
  // Intermediate files (prepared Liberty, scripts, logs). Default out_dir/work,
  // or a folder under the system temp dir when out_dir is inside the source
  // tree (outside build*/ and out/): PDK data must never land in the repository.
  std::filesystem::path work_dir;
  std::string config_name;        // names the SDC (<config>.sdc); default: top
  std::filesystem::path sdc_dir;  // when set, the SDC is also written there (e.g. constraints/)

  std::string clock_port = "clk_i";
  std::string reset_port = "rst_ni";
  std::vector<std::string> sram_patterns{"kld_sram*"};
  std::vector<std::string> dont_use;  // cell name globs, added to default_dont_use()
  double input_delay_ns = 0;
  double output_delay_ns = 0;

  double vectorless_activity = 0.1;   // transitions per cycle for OpenSTA and the uniform estimate
  bool run_sta = true;
  // Synthesis recipe: hierarchical (false: per-block area, each module mapped alone) or flat
  // (ABC times whole paths and buffers nets that fan out across modules; no per-block area).
  bool flatten = false;
  std::string recipe = kDefaultSynthRecipe;  // synth_recipes() (yosys_flow.hpp): how Yosys and ABC map
  bool macro_pin_outputs = true;             // YosysJob::macro_pin_outputs
  // Activity-based power: a stimulus (null = skip), cycles counted after warm-up.
  std::shared_ptr<Stimulus> stimulus;
  uint64_t sim_cycles = 1000;
  uint64_t sim_warmup = 16;
  // A further stimulus on the same object as an earlier one (or the main one), its window inside
  // that one's counted cycles, is counted in the same replay rather than replayed again.
  std::vector<NamedStimulus> extra_stimuli;
  int replay_jobs = 0;  // gate-level replays of different stimuli at once (0: the hardware threads)
  bool write_reports = true;          // synth.json and synth.md in out_dir
  bool sdc_only = false;              // only write the SDC (needs the RTL for the port list, no tools)
  std::function<void(const std::string&)> progress;  // one line per finished step; empty = quiet
};

struct InstanceArea {
  std::string path;    // "" = top
  std::string module;
  int depth = 0;
  double area_um2 = 0;       // incl. submodules, excl. SRAM macros
  double own_area_um2 = 0;
  int cells = 0;
};

struct SramReport {
  std::string instance, module;
  SramCost cost;
  std::string shape_source;      // how words x bits were found
  double access_time_ns = 0;     // of its timing view (sram_liberty.hpp)
  double reads_per_cycle = -1;   // from simulation; -1 when not simulated
  double writes_per_cycle = -1;
  double power_w = -1;           // leakage + access energy x rate (simulated)
  std::string activity_source;
};

struct StepTime {
  std::string step;
  double seconds = 0;
};

// Power of one instance directly below the top (everything beneath it), or of the top's own cells
// and memories (block ""): where a run's power goes.
struct BlockPower {
  std::string block;     // instance path below the top; "" = the top's own
  std::string module;
  double logic_w = 0;    // its cells: internal, switching of the nets they drive, leakage
  double sram_w = 0;     // its memories: leakage + accesses (SRAM model), and the switching of
                         // the nets their outputs drive
  double leakage_w = 0;  // of logic_w + sram_w
};

struct PowerReport {
  PowerBreakdown logic;
  double sram_w = 0;          // leakage included
  double sram_leakage_w = 0;
  std::string sram_source;
  std::vector<BlockPower> blocks;  // activity runs only: logic + SRAM split by block, adding up to
                                   // logic.total_w() + sram_w; the top's own first
};

// The blocks as JSON: block ("(top)" for the top's own), module, logic_w, sram_w, leakage_w.
nlohmann::json blocks_json(const std::vector<BlockPower>& blocks);

struct ActivityRun {
  std::string name;
  PowerReport power;
  uint64_t cycles = 0;   // counted
  std::string stimulus;  // its description
  std::vector<SramAccessCount> srams;  // accesses counted per SRAM instance
};

struct SynthResult {
  // Inputs, as used.
  std::string top;
  std::vector<std::string> rtl_files;
  std::string rtl_hash;  // rtl_content_hash() of rtl_files
  bool flattened = false;  // SynthOptions::flatten
  std::string recipe;      // SynthOptions::recipe
  int macro_pin_buffers = -1;  // ABC outputs added for nets into SRAM macros; -1: not done (option off)
  int macro_pins_per_output = 0;  // macro pins per added output (the output load / a macro pin's capacitance)
  std::vector<std::string> liberty_sources;
  std::string library_name;
  std::string prepared_liberty;   // merged/annotated file the tools read
  std::vector<std::string> dont_use;
  std::vector<std::string> warnings;  // things a reader of the numbers should know
  double clock_period_ns = 0;
  double voltage_v = 0;
  std::string driving_cell;
  double output_load_f = 0;
  std::string sdc;

  // Area (library area units; um^2 for the open libraries).
  double logic_area_um2 = 0;
  double sram_area_um2 = 0;
  double total_area_um2() const { return logic_area_um2 + sram_area_um2; }
  std::vector<ModuleAreaRow> modules;
  std::vector<InstanceArea> instances;
  std::map<std::string, int> cell_counts;
  int cells = 0;
  int sequential_cells = 0;
  // Yosys's own `stat -liberty` figures, for cross-checking: per module (only
  // printed for modules without submodules) and the hierarchical top total.
  std::map<std::string, double> yosys_module_area;
  double yosys_top_area = -1;

  // Timing (OpenSTA).
  bool timed = false;
  StaResult sta;
  double fmax_mhz = 0;  // 1000 / (T - worst slack)
  std::string critical_from, critical_to;  // the critical path's ends, named (describe_timing_point)
  std::vector<EndpointGroup> worst_registers;  // the worst endpoints by register (group_endpoints)

  // Power.
  double vectorless_activity = 0;
  bool has_opensta_power = false;
  StaPower opensta_power;                 // report_power with set_power_activity -global
  PowerReport vectorless;                 // our model, uniform activity, per-transition convention
  PowerBreakdown vectorless_opensta_convention;  // our model, uniform activity, OpenSTA 2019 convention
  bool has_activity_power = false;
  PowerReport activity;                   // our model, simulated toggles
  ToggleCounts toggles;
  std::vector<ActivityRun> extra_activity;  // one per SynthOptions::extra_stimuli

  std::vector<SramReport> srams;
  std::vector<SramShape> sram_shapes;  // per black-boxed module, from its RTL
  SramTechnology sram_tech;
  std::vector<StepTime> times;

  std::filesystem::path netlist_v, netlist_json, yosys_log, sta_log, json_report, md_report;
  std::filesystem::path sta_netlist_v;  // the structural netlist OpenSTA read
  std::filesystem::path work_dir;
};

SynthResult run_synthesis_flow(const SynthOptions& opt);

// Cells excluded from mapping by default for a library (e.g. sky130's
// low-power-flow isolation cells and probe cells, as OpenLane excludes them).
std::vector<std::string> default_dont_use(const std::string& library_name);

// Fmax from the worst setup slack at period T: the smallest period at which
// the worst path meets timing is T - WS (valid because the SDC's constraints
// do not scale with the period). Throws ConfigError for T <= 0.
double fmax_mhz(double period_ns, double worst_slack_ns);

nlohmann::json result_json(const SynthResult& r);
std::string result_markdown(const SynthResult& r);
std::string result_summary(const SynthResult& r);  // a few lines for the terminal

}  // namespace kaleido::ppa
