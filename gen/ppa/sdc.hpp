// SDC constraints for a synthesised block: one clock on the clock port at the
// target period, absolute input/output delays, a driving cell on the inputs
// and a load on the outputs, both picked from the Liberty library.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ppa/liberty.hpp"

namespace kaleido::ppa {

struct SdcSpec {
  std::string design;             // for the header comment
  std::string clock_port = "clk_i";
  bool clock_port_exists = true;  // false: a virtual clock (combinational block)
  // Asynchronous reset input: no timing from it (its buffer tree is built
  // later, in physical design; unbuffered it would dominate every report).
  std::string reset_port;         // empty or absent from the design: nothing
  double period_ns = 0;
  // Absolute (not a fraction of the period) so that every constraint is
  // independent of the period and Fmax = 1 / (T - worst slack) holds.
  double input_delay_ns = 0;
  double output_delay_ns = 0;
  std::string driving_cell;
  std::string driving_pin;
  double output_load_f = 0;
  LibUnits units;                 // SDC numbers are written in the library's units
  std::string library_name;
};

// The buffer the flow uses as driving cell: smallest-area single-input cell
// whose output copies its input, skipping dont_use, clock and delay cells.
// Throws Error when the library has none.
const LibCell& pick_driving_buffer(const Library& lib);
// Output pin name of a single-output cell.
std::string output_pin_name(const LibCell& c);

// Throws ConfigError for a period that is not a positive finite number.
void check_period(double period_ns);

std::string make_sdc(const SdcSpec& spec);
void write_sdc(const SdcSpec& spec, const std::filesystem::path& path);

}  // namespace kaleido::ppa
