// Verilog models of a Liberty library's cells in the form Yosys's `proc`
// turns into flip-flops with asynchronous clear/preset (one `if` per
// asynchronous control, highest priority first), for the gate side of the
// equivalence check. Combinational functions come from the same Liberty
// parser as the PPA flow (ppa::BoolFunction).
#pragma once

#include <map>
#include <string>

#include "ppa/liberty.hpp"

namespace kaleido::equiv {

struct CellModels {
  std::string verilog;
  // Cells that could not be modelled (latches, statetables, tri-states,
  // several ff groups, outputs without function), with the reason. They are
  // written as black boxes; a netlist that uses one cannot be proven.
  std::map<std::string, std::string> unmodelled;
};

CellModels yosys_cell_models(const ppa::Library& lib);

}  // namespace kaleido::equiv
