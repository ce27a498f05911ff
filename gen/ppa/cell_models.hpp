// Verilog models of a Liberty library's cells, written from their `function`,
// `ff` and `latch` attributes: the one writer for simulating a mapped netlist
// with Verilator (gate-level activity, gatelevel_sim.hpp) and for the gate side
// of the equivalence check with Yosys (gen/equiv). Flip-flops are written in
// the form Yosys's `proc` turns into flip-flops with asynchronous
// clear/preset (one `if` per asynchronous control, highest priority first);
// Verilator simulates the same text.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ppa/liberty.hpp"

namespace kaleido::ppa {

struct CellModelOptions {
  std::vector<std::string> cells;  // only these (all cells of the library when empty); unknown names throw Error
  bool latches = true;             // false: latch cells are not modelled (the equivalence check's register cut)
};

struct CellModels {
  std::string verilog;
  // Cells that could not be modelled (statetables, several ff groups,
  // tri-states, outputs without function, ...), with the reason. They are
  // written as port-only `(* blackbox *)` modules: a netlist that uses one
  // can be neither simulated nor proven.
  std::map<std::string, std::string> unmodelled;
};

CellModels cell_models(const Library& lib, const CellModelOptions& opt = {});

// The Verilog text alone (all cells, or `cells`).
std::string cell_models_verilog(const Library& lib, const std::vector<std::string>& cells = {});
void write_cell_models(const Library& lib, const std::filesystem::path& path, const std::vector<std::string>& cells = {});

// One instance of cell `c` written inline, as the statements of its model with
// every pin replaced by `pin_exprs[k]` (pin k of c.pins: the net expression an
// input reads; the net an output drives, or "" when unconnected). Internal
// names end in `_<id>`. Throws Error for a cell cell_models() cannot model.
std::string cell_inline_verilog(const LibCell& c, const std::vector<std::string>& pin_exprs, const std::string& id);

}  // namespace kaleido::ppa
