// The register-cut miter of one module: the reference ("gold", Yosys's
// coarse-grained result of the RTL) and the implementation ("gate", the
// mapped netlist with the cells' models) are both lowered to single-bit
// gates by Yosys, then built here into one and-inverter graph with shared
// inputs:
//   - module input ports, matched by name;
//   - register outputs: every flip-flop becomes a variable (its state) and a
//     compared next-state function; registers of the two sides that carry a
//     common net name share one variable;
//   - outputs of submodule instances (black boxes), matched by instance and
//     port name; their inputs are compared like outputs.
// Every compared pair (output port bit, register next state, instance input
// bit) becomes one miter output that is 1 when the sides differ. If no output
// can be 1, the module is equivalent given equal register states at reset
// (induction over clock cycles: equal states and inputs give equal outputs
// and equal next states).
#pragma once

#include <string>
#include <vector>

#include "equiv/aig.hpp"
#include "equiv/yosys_json.hpp"

namespace kaleido::equiv {

struct ComparedPair {
  std::string label;  // "output psum_o[3]", "register psum_o[3] next state", "u_pe.a_i[2]"
  Lit gold = kFalse;
  Lit gate = kFalse;
};

struct RegisterClass {
  std::string name;                       // first net name, for reports
  std::vector<std::string> gold_cells, gate_cells;
  bool constant = false;                  // bound to a constant net of the other side
};

struct Miter {
  std::string module;
  Aig aig;                               // outputs: one per non-trivial compared pair
  std::vector<ComparedPair> pairs;       // all compared pairs
  std::vector<size_t> output_pair;       // AIG output i -> index into pairs
  size_t structurally_equal = 0;         // pairs whose two sides hashed to one literal
  std::vector<size_t> constant_differences;  // pairs that differ for every input (index into pairs)

  int gold_registers = 0, gate_registers = 0;  // flip-flop bits
  int matched_registers = 0;                   // classes with both sides
  int constant_registers = 0;                  // one side's register is a constant net on the other
  int registers_paired_by_position = 0;        // pairs proposed by the port bit they drive, not by name
  std::vector<std::string> unmatched_gold, unmatched_gate;  // register bits without a partner (names)
  std::vector<std::string> instances;          // submodule instances cut as black boxes ("name (type)")
  std::vector<std::string> problems;           // interface, instance or clock mismatches: no proof possible
  int gold_undefined_bits = 0, gate_undefined_bits = 0;  // x/z/undriven bits read as 0
  std::vector<std::string> notes;

  bool correspondence_complete() const { return unmatched_gold.empty() && unmatched_gate.empty(); }
};

// Builds the miter of module `name` from two designs lowered by Yosys to
// single-bit gates ($_AND_, $_NOT_, ... and $_DFF_* / $_DFFSR_* flip-flops).
// Throws Error for cell types it cannot model (latches, memories, ...) and
// for combinational loops.
Miter build_miter(const JsonDesign& gold, const JsonDesign& gate, const std::string& name);

// Register net names that mean nothing across the two sides: Yosys-internal
// names ($...) and the `_123_` names of `rename -enumerate`.
bool anonymous_net_name(const std::string& name);

}  // namespace kaleido::equiv
