// `kaleido equiv`: formal equivalence of generated RTL and its synthesised
// gate netlist, one proof per unique module (docs/equivalence.md).
//
// Reference: Yosys's coarse-grained result of the RTL (`synth -run
// begin:fine`). Implementation: the hierarchical mapped netlist (synthesised
// here with the PPA flow, or given) with the library cells replaced by models
// written from their Liberty functions. Each module's miter cuts the
// registers (matched by net name) and the submodule instances (matched by
// instance name; memories and other black boxes included) into shared
// inputs and compared outputs, so that a module with submodules is a proof
// of its own logic and of its wiring. yosys-abc (`iprove`) decides each
// miter; random simulation finds most differences first and names them.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ppa/yosys_flow.hpp"

namespace kaleido::equiv {

struct EquivOptions {
  // RTL: every *.v/*.sv of rtl_dir, plus rtl_files.
  std::filesystem::path rtl_dir;
  std::vector<std::filesystem::path> rtl_files;
  std::string top = "kld_top";
  // Liberty files of one library; empty = kaleido_generic.lib (made by the build from scripts/liberty/make_kaleido_generic.py).
  std::vector<std::filesystem::path> liberty;
  // A mapped, hierarchical Verilog netlist of `top` on that library (e.g.
  // `kaleido synth`'s <top>.mapped.v); empty = synthesise here.
  std::filesystem::path netlist;
  std::string synth_recipe = ppa::kDefaultSynthRecipe;  // when synthesising here: ppa::synth_recipes()
  // Modules to prove (names); empty = every module below `top` that is not a black box.
  std::vector<std::string> modules;
  std::filesystem::path out_dir;  // reports; intermediate files in out_dir/work
  std::vector<std::string> blackbox_patterns{"kld_sram*"};
  double clock_period_ns = 2.0;   // only for synthesising the netlist here
  double proof_timeout_s = 600;   // per module, yosys-abc
  double yosys_timeout_s = 3600;  // per Yosys run
  int sim_rounds = 64;            // random simulation before the proof: rounds x 64 patterns
  std::string abc_command = "iprove";
  bool write_reports = true;      // equiv.json and equiv.md in out_dir
  std::function<void(const std::string&)> progress;  // one line per step; may be empty
};

enum class Status { Equivalent, NotEquivalent, Unknown };
std::string status_text(Status s);

struct ProofResult {
  std::string module;
  std::string kind;    // "module" (no submodules) or "module + wiring" (submodules as black boxes)
  std::string method;  // what decided it
  Status status = Status::Unknown;
  std::string reason;  // why, in one sentence
  double seconds = 0;  // miter, simulation and solver for this module
  std::filesystem::path aig, log;
  std::string command;  // the yosys-abc command line, when it ran

  size_t compared = 0;             // compared pairs (outputs, next states, instance inputs)
  size_t structurally_equal = 0;   // decided by structural hashing alone
  size_t miter_outputs = 0, miter_inputs = 0, miter_ands = 0;
  int gold_registers = 0, gate_registers = 0, matched_registers = 0, constant_registers = 0;
  int registers_paired_by_position = 0;
  std::vector<std::string> unmatched_gold, unmatched_gate;
  std::vector<std::string> instances;
  std::vector<std::string> problems;
  int gold_undefined_bits = 0, gate_undefined_bits = 0;
  // Counterexample: compared signals that differ, and input values (name = binary, MSB first).
  std::vector<std::string> differing;
  std::vector<std::pair<std::string, std::string>> counterexample;
};

struct EquivResult {
  std::string top;
  std::vector<std::string> rtl_files;
  std::vector<std::string> liberty_sources;
  std::string library_name;
  std::string netlist;           // the netlist that was checked
  bool netlist_synthesised = false;
  std::vector<std::string> unmodelled_cells;  // library cells without a model (not used unless reported)
  std::vector<ProofResult> proofs;
  double yosys_synthesis_s = 0, yosys_reference_s = 0, yosys_netlist_s = 0, total_s = 0;
  std::filesystem::path work_dir, json_report, md_report;
  std::filesystem::path synthesis_log, reference_log, netlist_log;  // Yosys logs

  bool all_equivalent() const;
  size_t count(Status s) const;
};

// Throws kaleido::Error for a missing tool (naming the Debian package), bad
// input (RTL, Liberty or netlist Yosys cannot read) or a Yosys timeout.
// Solver timeouts and unmatched structure are results (Status::Unknown).
EquivResult run_equivalence(const EquivOptions& opt);

nlohmann::json result_json(const EquivResult& r);
std::string result_markdown(const EquivResult& r);

}  // namespace kaleido::equiv
