// Verilog models of a Liberty library's cells, written from their `function`,
// `ff` and `latch` attributes, so that a mapped netlist can be simulated with
// Verilator or checked for equivalence with Yosys.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ppa/liberty.hpp"

namespace kaleido::ppa {

// Verilog text for `cells` (all cells of the library when empty). Cells with
// a statetable or an output without function get a port-only module whose
// outputs are X, with a comment saying why.
std::string cell_models_verilog(const Library& lib, const std::vector<std::string>& cells = {});
void write_cell_models(const Library& lib, const std::filesystem::path& path, const std::vector<std::string>& cells = {});

}  // namespace kaleido::ppa
