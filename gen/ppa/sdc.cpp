#include "ppa/sdc.hpp"

#include <cctype>
#include <cmath>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "common/text.hpp"
#include "common/version.hpp"

namespace kaleido::ppa {

namespace {

bool name_has(const std::string& name, const char* what) { return to_lower(name).find(what) != std::string::npos; }

}  // namespace

std::string output_pin_name(const LibCell& c) {
  for (const LibPin& p : c.pins)
    if (p.direction == PinDirection::Output) return p.name;
  throw Error("cell " + c.name + " has no output pin");
}

const LibCell& pick_driving_buffer(const Library& lib) {
  const LibCell* best = nullptr;
  for (const LibCell& c : lib.cells) {
    if (c.dont_use || c.is_sequential() || c.area <= 0) continue;
    if (name_has(c.name, "clk") || name_has(c.name, "dly") || name_has(c.name, "delay") || name_has(c.name, "probe") ||
        name_has(c.name, "lpflow"))
      continue;
    const LibPin* in = nullptr;
    const LibPin* out = nullptr;
    int n_in = 0, n_out = 0;
    for (const LibPin& p : c.pins) {
      if (p.direction == PinDirection::Input) {
        in = &p;
        ++n_in;
      } else if (p.direction == PinDirection::Output) {
        out = &p;
        ++n_out;
      }
    }
    if (n_in != 1 || n_out != 1 || out->function.empty() || !out->three_state.empty()) continue;
    const BoolFunction f = BoolFunction::parse(out->function);
    if (f.variables().size() != 1 || f.variables()[0] != in->name || f.eval(0) || !f.eval(1)) continue;
    if (!best || c.area < best->area) best = &c;
  }
  if (!best) throw Error("library " + lib.name + " has no buffer cell to use as the driving cell of the inputs");
  return *best;
}

void check_period(double period_ns) {
  if (!(period_ns > 0) || !std::isfinite(period_ns))
    throw ConfigError("clock period", tool_number(period_ns) + " ns", "must be a positive number of nanoseconds");
}

std::string make_sdc(const SdcSpec& s) {
  check_period(s.period_ns);
  const double t = 1e-9 / s.units.time_s;  // library time units per ns
  const double c = 1.0 / s.units.cap_f;    // library capacitance units per farad
  const std::string clk = s.clock_port_exists ? "[get_ports " + s.clock_port + "]" : "";
  const std::string inputs =
      s.clock_port_exists ? "[delete_from_list [all_inputs] [get_ports " + s.clock_port + "]]" : "[all_inputs]";
  std::ostringstream o;
  o << "# Timing constraints for " << s.design << ", written by kaleido " << version() << " (kaleido_ppa).\n";
  o << "# Units are the Liberty library's (" << s.library_name << "): time " << tool_number(s.units.time_s * 1e9)
    << " ns, capacitance " << tool_number(s.units.cap_f * 1e12) << " pF.\n";
  o << "# Input/output delays are absolute, so every check is independent of the period and\n";
  o << "# Fmax = 1 / (period - worst setup slack).\n";
  o << "create_clock -name clk -period " << tool_number(s.period_ns * t) << (clk.empty() ? "" : " " + clk) << "\n";
  o << "set_input_delay " << tool_number(s.input_delay_ns * t) << " -clock clk " << inputs << "\n";
  o << "set_output_delay " << tool_number(s.output_delay_ns * t) << " -clock clk [all_outputs]\n";
  if (!s.driving_cell.empty())
    o << "set_driving_cell -lib_cell " << s.driving_cell << " -pin " << s.driving_pin << " " << inputs << "\n";
  o << "set_load " << tool_number(s.output_load_f * c) << " [all_outputs]\n";
  if (!s.reset_port.empty()) {
    o << "# The asynchronous reset's buffer tree does not exist before physical design.\n";
    o << "set_false_path -from [get_ports " << s.reset_port << "]\n";
  }
  return o.str();
}

void write_sdc(const SdcSpec& spec, const std::filesystem::path& path) { write_file_atomic(path, make_sdc(spec)); }

}  // namespace kaleido::ppa
