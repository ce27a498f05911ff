// Timing views of the black-boxed SRAMs: a small Liberty library with one
// cell per SRAM module, so that OpenSTA times paths into and out of the
// memories (without it, paths from an SRAM's read data are unconstrained and
// OpenSTA gives their logic no clock, hence no power).
//
// First-order timing in FO4 delays of the standard-cell library (FO4
// measured from its smallest inverter): access = FO4 x (10 + 2 log2(words) +
// (rows + columns) / 64) (decoder depth plus word/bit-line length, the
// structure of CACTI's model); setup 2 FO4, hold 0; output transition 2 FO4;
// input pins the inverter's input capacitance, the clock pin four of them.
// Asynchronous read ports get combinational address-to-data arcs, registered
// ones clock-to-data arcs. No power in these views: SRAM energy comes from
// the SRAM model (sram_model.hpp). Relative studies only.
#pragma once

#include <string>
#include <vector>

#include "ppa/liberty.hpp"
#include "ppa/sram_model.hpp"
#include "ppa/yosys_flow.hpp"

namespace kaleido::ppa {

struct SramMacroPort {
  std::string name;
  bool input = true;
  int width = 1;
};

struct SramMacroView {
  std::string module;
  std::vector<SramMacroPort> ports;
  SramShape shape;  // read ports (registered or asynchronous)
  SramCost cost;
};

struct SramTiming {
  double fo4_s = 0;
  double access_s = 0;
  double setup_s = 0;
  double transition_s = 0;
  double pin_cap_f = 0;
  double clock_pin_cap_f = 0;
};

// FO4 delay of the library's smallest inverter (mean of rise and fall).
double library_fo4(const Library& lib);
SramTiming sram_timing(const SramCost& cost, const Library& lib);

// The Liberty text, in `lib`'s units, of one cell per macro.
std::string sram_liberty(const Library& lib, const std::vector<SramMacroView>& macros);

// Clock pin of a macro: the input named like a clock (clk, clock).
bool is_clock_port_name(const std::string& port);

}  // namespace kaleido::ppa
