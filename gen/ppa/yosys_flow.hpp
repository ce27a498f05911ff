// Hierarchical Yosys synthesis onto one Liberty file, from the script
// templates in scripts/yosys/.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kaleido::ppa {

// How Yosys and ABC map the logic (scripts/yosys/synth.ys.in describes each). One table, here;
// `kaleido synth --recipe`, the sweep spec's "recipe" and the reports name a recipe from it.
struct SynthRecipe {
  std::string name;
  std::string summary;            // one line for reports
  bool kogge_stone_carries;       // scripts/yosys/synth_kogge_stone.ys.in + kogge_stone_lcu.v
  bool delay_abc_script;          // scripts/yosys/abc_delay.abc.in instead of Yosys's own script
};
inline constexpr const char* kDefaultSynthRecipe = "delay-ks";
const std::vector<SynthRecipe>& synth_recipes();
// Throws ConfigError naming the known recipes.
const SynthRecipe& synth_recipe(const std::string& name);
std::string synth_recipe_names();  // "yosys, delay, delay-ks"

struct YosysJob {
  std::vector<std::filesystem::path> rtl_files;
  std::vector<std::filesystem::path> include_dirs;
  std::string top;
  std::filesystem::path liberty;  // one (merged) file
  double period_ps = 0;
  std::string abc_driving_cell;
  double abc_load_ff = 0;
  std::vector<std::string> blackbox_patterns;  // module name globs, e.g. kld_sram*
  bool flatten = false;                        // one flat netlist (scripts/yosys/synth.ys.in)
  std::string recipe = kDefaultSynthRecipe;    // synth_recipes()
  // Give ABC one output per `macro_pins_per_output` input pins of black boxes (separate_macro_pins),
  // so that it sizes and buffers a net for the macros it feeds; Yosys then runs in two parts around
  // a JSON netlist.
  bool macro_pin_outputs = true;
  int macro_pins_per_output = 1;
  std::filesystem::path work_dir;              // outputs and the filled script go here
};

// A read port of a black-boxed SRAM, found in its elaborated RTL.
struct SramReadPort {
  std::string addr_port;    // input port giving the address
  std::string data_port;    // output port the word appears on
  std::string enable_port;  // empty: reads every cycle
  bool registered = false;  // data appears after the clock edge (else combinationally)
};

// Memory found inside a black-boxed (SRAM) module.
struct SramShape {
  std::string module;
  int words = 0;
  int bits = 0;
  std::string how;  // "memory mem: 16 x 8" or "ports: ..."
  std::vector<SramReadPort> read_ports;  // empty when they could not be traced
  int address_ports = 1;                  // input ports named *addr* (independent ports of the macro)
};

struct YosysResult {
  std::filesystem::path script, log, netlist_v, netlist_json, stat_report;
  double seconds = 0;
  std::map<std::string, double> stat_module_area;  // Yosys `stat -liberty`: cells placed directly in each module
  double stat_top_area = -1;                        // Yosys's hierarchical total for the top, when printed
  std::vector<SramShape> srams;
  int macro_pin_buffers = 0;  // outputs separate_macro_pins added before ABC
};

// Before ABC, a net that drives more than `pins_per_output` input pins of black-box cells (module
// names matching `patterns`; clock pins left alone) is split: each run of `pins_per_output` such
// pins gets its own net behind a `$_BUF_`. ABC then sees one output per run, each with the
// constraint file's output load, so the net's modelled load matches its pins (with
// `pins_per_output` = that load / a macro pin's capacitance), where it saw one output for all
// of them (the macros are outside its netlist); it sizes the driver or builds a buffer tree.
// `netlist` is a Yosys JSON netlist; returns the outputs added.
int separate_macro_pins(nlohmann::json& netlist, const std::vector<std::string>& patterns, int pins_per_output);

// Runs Yosys; throws Error with the log's ERROR lines and tail on failure,
// and Error naming the Debian package when yosys is not installed.
YosysResult run_yosys(const YosysJob& job);

// Verilog/SystemVerilog files of a folder (*.v, *.sv), sorted by name.
std::vector<std::filesystem::path> rtl_files_in(const std::filesystem::path& dir);

// Content hash of a set of RTL files: FNV-1a 64 over each file's name (not
// its folder) and bytes, in name order, as 16 hex digits. Two folders holding
// the same files give the same hash; the flow compares the RTL it simulated
// with the RTL it synthesised this way.
std::string rtl_content_hash(const std::vector<std::filesystem::path>& files);

// The files `top` needs: the one declaring `module top` and, transitively, every file declaring a
// module (or interface, package, primitive, program) whose name another needed file uses (outside
// comments), plus every file that declares none of them, in the order given. A superset at worst:
// an identifier that merely shares a unit's name (a port, say) pulls that unit's file in too. A design's
// report then hashes and synthesises only its own modules, so kld_plain_top's figures do not move
// when only kld_top's files change. Throws ConfigError when no file declares `top`.
std::vector<std::filesystem::path> rtl_files_for_top(const std::vector<std::filesystem::path>& files,
                                                     const std::string& top);

// Replaces every {{KEY}}; throws Error if one is left unfilled.
std::string fill_template(const std::string& text, const std::map<std::string, std::string>& values,
                          const std::string& template_name);

}  // namespace kaleido::ppa
