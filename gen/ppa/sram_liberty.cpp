#include "ppa/sram_liberty.hpp"

#include <cctype>
#include <cmath>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "common/format.hpp"
#include "common/text.hpp"
#include "common/version.hpp"

namespace kaleido::ppa {

namespace {

// A scalar-table timing group.
void scalar_arc(std::ostringstream& o, const std::string& related, const std::string& related_kind,
                const std::string& type, const std::string& sense, double delay, double tran) {
  o << "      timing () {\n";
  o << "        " << related_kind << " : \"" << related << "\";\n";
  o << "        timing_type : " << type << ";\n";
  if (!sense.empty()) o << "        timing_sense : " << sense << ";\n";
  o << "        cell_rise (scalar) { values (\"" << tool_number(delay) << "\"); }\n";
  o << "        cell_fall (scalar) { values (\"" << tool_number(delay) << "\"); }\n";
  o << "        rise_transition (scalar) { values (\"" << tool_number(tran) << "\"); }\n";
  o << "        fall_transition (scalar) { values (\"" << tool_number(tran) << "\"); }\n";
  o << "      }\n";
}

void check(std::ostringstream& o, const std::string& clock, const std::string& type, double value) {
  o << "      timing () {\n";
  o << "        related_pin : \"" << clock << "\";\n";
  o << "        timing_type : " << type << ";\n";
  o << "        rise_constraint (scalar) { values (\"" << tool_number(value) << "\"); }\n";
  o << "        fall_constraint (scalar) { values (\"" << tool_number(value) << "\"); }\n";
  o << "      }\n";
}

}  // namespace

bool is_clock_port_name(const std::string& port) {
  const std::string l = to_lower(port);
  return l.find("clk") != std::string::npos || l.find("clock") != std::string::npos;
}

double library_fo4(const Library& lib) {
  const SramTechnology t = sram_technology(lib);
  const LibCell* inv = lib.cell(t.inverter);
  const double load = 4.0 * t.inv_cap_f;
  for (const LibPin& p : inv->pins) {
    if (p.direction != PinDirection::Output) continue;
    for (const TimingGroup& a : p.timing) {
      if (a.cell_rise.empty() && a.cell_fall.empty()) continue;
      // Input slew: the inverter's own output transition at that load.
      double slew = 0;
      int n = 0;
      for (const LutTable* tr : {&a.rise_transition, &a.fall_transition})
        if (!tr->empty()) {
          slew += tr->lookup(0.0, load);
          ++n;
        }
      slew = n ? slew / n : 0.0;
      double d = 0;
      n = 0;
      for (const LutTable* cd : {&a.cell_rise, &a.cell_fall})
        if (!cd->empty()) {
          d += cd->lookup(slew, load);
          ++n;
        }
      if (n) return d / n;
    }
  }
  throw Error("inverter " + t.inverter + " of library " + lib.name + " has no delay table");
}

SramTiming sram_timing(const SramCost& cost, const Library& lib) {
  SramTiming t;
  const SramTechnology tech = sram_technology(lib);
  t.fo4_s = library_fo4(lib);
  const double addr_bits = std::max(1.0, std::ceil(std::log2(static_cast<double>(cost.words))));
  t.access_s = t.fo4_s * (10.0 + 2.0 * addr_bits + (cost.rows + cost.columns) / 64.0);
  t.setup_s = 2.0 * t.fo4_s;
  t.transition_s = 2.0 * t.fo4_s;
  t.pin_cap_f = tech.inv_cap_f;
  t.clock_pin_cap_f = 4.0 * tech.inv_cap_f;
  return t;
}

std::string sram_liberty(const Library& lib, const std::vector<SramMacroView>& macros) {
  const double tu = lib.units.time_s, cu = lib.units.cap_f;
  auto time_unit_text = [&]() {
    for (const auto& [name, scale] : std::vector<std::pair<std::string, double>>{{"1ns", 1e-9}, {"1ps", 1e-12},
                                                                                 {"10ps", 1e-11}, {"100ps", 1e-10}})
      if (std::fabs(scale - tu) < 1e-3 * tu) return name;
    throw Error("library " + lib.name + ": time unit not supported for SRAM views");
  };
  auto cap_unit_text = [&]() -> std::pair<std::string, std::string> {
    if (std::fabs(cu - 1e-12) < 1e-15) return {"1", "pf"};
    if (std::fabs(cu - 1e-15) < 1e-18) return {"1", "ff"};
    throw Error("library " + lib.name + ": capacitance unit not supported for SRAM views");
  };
  std::ostringstream o;
  o << "/* Timing views of the black-boxed SRAM macros, written by kaleido " << version()
    << " (gen/ppa/sram_liberty.hpp)\n   in the units of " << lib.name
    << ". First-order model in FO4 delays; relative studies only. */\n";
  o << "library (kaleido_sram_macros) {\n";
  o << "  delay_model : table_lookup;\n";
  o << "  time_unit : \"" << time_unit_text() << "\";\n";
  o << "  voltage_unit : \"1V\";\n  current_unit : \"1mA\";\n  leakage_power_unit : \"1nW\";\n";
  const auto cap = cap_unit_text();
  o << "  capacitive_load_unit (" << cap.first << ", " << cap.second << ");\n";
  o << "  bus_naming_style : \"%s[%d]\";\n";
  o << "  nom_voltage : " << tool_number(lib.voltage_v) << ";\n";
  // OpenSTA takes the switching voltage of pins without power pins from here.
  o << "  operating_conditions (kaleido_nominal) { process : 1; temperature : 25; voltage : " << tool_number(lib.voltage_v)
    << "; }\n";
  o << "  default_operating_conditions : kaleido_nominal;\n";
  for (const char* k : {"input_threshold_pct_rise", "input_threshold_pct_fall", "output_threshold_pct_rise",
                        "output_threshold_pct_fall"})
    o << "  " << k << " : 50;\n";
  for (const char* k : {"slew_lower_threshold_pct_rise", "slew_lower_threshold_pct_fall"}) o << "  " << k << " : 10;\n";
  for (const char* k : {"slew_upper_threshold_pct_rise", "slew_upper_threshold_pct_fall"}) o << "  " << k << " : 90;\n";
  std::set<int> widths;
  for (const SramMacroView& m : macros)
    for (const SramMacroPort& p : m.ports)
      if (p.width > 1) widths.insert(p.width);
  for (int w : widths)
    o << "  type (kld_bus_" << w << ") { base_type : array; data_type : bit; bit_width : " << w << "; bit_from : "
      << w - 1 << "; bit_to : 0; downto : true; }\n";

  for (const SramMacroView& m : macros) {
    const SramTiming t = sram_timing(m.cost, lib);
    std::string clock;
    for (const SramMacroPort& p : m.ports)
      if (p.input && is_clock_port_name(p.name)) clock = p.name;
    o << "  cell (" << m.module << ") {\n";
    o << "    area : " << tool_number(m.cost.area_um2) << ";\n";
    o << "    dont_use : true;\n";
    for (const SramMacroPort& p : m.ports) {
      const bool is_bus = p.width > 1;
      o << "    " << (is_bus ? "bus" : "pin") << " (" << p.name << ") {\n";
      if (is_bus) o << "      bus_type : kld_bus_" << p.width << ";\n";
      o << "      direction : " << (p.input ? "input" : "output") << ";\n";
      if (p.input) {
        const bool is_clock = p.name == clock;
        o << "      capacitance : " << tool_number((is_clock ? t.clock_pin_cap_f : t.pin_cap_f) / cu) << ";\n";
        if (is_clock) {
          o << "      clock : true;\n";
        } else if (!clock.empty()) {
          // Write-side inputs and registered read addresses are sampled by the clock.
          bool async_addr = false;
          for (const SramReadPort& rp : m.shape.read_ports)
            if (rp.addr_port == p.name && !rp.registered) async_addr = true;
          if (!async_addr) {
            check(o, clock, "setup_rising", t.setup_s / tu);
            check(o, clock, "hold_rising", 0.0);
          }
        }
      } else {
        const SramReadPort* rp = nullptr;
        for (const SramReadPort& r : m.shape.read_ports)
          if (r.data_port == p.name) rp = &r;
        if (rp && !rp->registered) {
          int addr_width = 1;
          for (const SramMacroPort& q : m.ports)
            if (q.name == rp->addr_port) addr_width = q.width;
          scalar_arc(o, rp->addr_port, addr_width > 1 ? "related_bus_pins" : "related_pin", "combinational",
                     "non_unate", t.access_s / tu, t.transition_s / tu);
        } else if (!clock.empty()) {
          scalar_arc(o, clock, "related_pin", "rising_edge", "non_unate", t.access_s / tu, t.transition_s / tu);
        }
      }
      o << "    }\n";
    }
    o << "  }\n";
  }
  o << "}\n";
  return o.str();
}

}  // namespace kaleido::ppa
