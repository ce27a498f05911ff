// Liberty (.lib, .lib.gz) reader: a syntax tree that can be written back
// (to merge split libraries for Yosys/ABC), and a model of what the PPA flow
// needs: units, cells, area, pins, functions, flip-flops and latches, timing
// transition tables, internal power and leakage. Every quantity of the model
// is converted to SI units (s, F, W, J, V) when read.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ppa/boolfunc.hpp"

namespace kaleido::ppa {

// ---------------------------------------------------------------- syntax tree

struct LibValue {
  std::string text;
  bool quoted = false;
};

struct LibAttribute {
  std::string name;
  std::vector<LibValue> values;
  bool complex = false;  // name(v1, v2); rather than name : v;
  int line = 0;
};

struct LibGroup {
  std::string type;
  std::vector<LibValue> args;
  int line = 0;
  std::vector<LibAttribute> attributes;
  std::vector<LibGroup> groups;
  // Order of children as read: (is_group, index into attributes or groups).
  std::vector<std::pair<bool, size_t>> order;

  std::string name() const { return args.empty() ? std::string() : args.front().text; }
  const LibAttribute* attribute(const std::string& n) const;
  // First value of a simple attribute, or `fallback` when absent.
  std::string value(const std::string& n, const std::string& fallback = "") const;
  void add_attribute(LibAttribute a);
  void add_group(LibGroup g);
};

struct LibFile {
  std::string path;
  std::string header_comment;  // comments before `library (...)`, verbatim (licence)
  LibGroup library;
  std::vector<std::string> warnings;  // of merge_liberty: e.g. sources at different corners
};

// Reads plain or gzip-compressed text. Throws FileError when unreadable.
std::string read_text_maybe_gz(const std::filesystem::path& path);
// Parses Liberty text; `source` names the file in errors, which give the line.
LibFile parse_liberty_text(const std::string& text, const std::string& source);
LibFile parse_liberty_file(const std::filesystem::path& path);
void write_liberty(std::ostream& out, const LibGroup& g, int indent = 0);

// Merges several Liberty files of one library (same units) into one file:
// the first file's header attributes and templates, then every file's
// templates and cells, each source's leading comment (licence) kept at the
// top. Cells whose names match a `dont_use` glob get `dont_use : true`, which
// ABC honours. Writes atomically. Throws FileError on unit mismatch or a cell
// defined twice.
void write_merged_liberty(const std::vector<std::filesystem::path>& sources, const std::filesystem::path& out,
                          const std::vector<std::string>& dont_use = {});
// The same on files already parsed: the merged library (its header_comment
// holds every source's comment) and its text.
LibFile merge_liberty(const std::vector<LibFile>& files, const std::vector<std::string>& dont_use = {});
std::string liberty_text(const LibFile& f);

bool glob_match(const std::string& pattern, const std::string& text);

// ---------------------------------------------------------------- model

// Lookup table (delay, transition or energy) in SI units. Axes are told apart
// by the template's variable names (transition-like or capacitance-like).
struct LutTable {
  std::vector<double> index1, index2;  // empty = that axis absent
  std::vector<double> values;          // index1.size() x index2.size(), row-major
  bool axis1_is_load = false;          // else transition
  bool axis2_is_load = true;
  bool empty() const { return values.empty(); }
  // Linear interpolation inside the grid and extrapolation outside, as STA tools do.
  double lookup(double slew_s, double load_f) const;
};

struct InternalPowerGroup {
  std::string related_pin;  // empty for input-pin power without a related pin
  std::string related_pg_pin;  // supply the energy is drawn from; empty = the cell's
  std::string when;
  LutTable rise;  // energy (J) per output (or input) rising transition
  LutTable fall;
};

struct TimingGroup {
  std::string related_pin;
  std::string timing_type;   // "", combinational, rising_edge, clear, setup_rising, ...
  std::string timing_sense;  // positive_unate, negative_unate, non_unate
  LutTable cell_rise, cell_fall, rise_transition, fall_transition;
};

enum class PinDirection { Input, Output, Inout, Internal };

struct LibPin {
  std::string name;
  PinDirection direction = PinDirection::Input;
  double capacitance_f = 0;
  double rise_capacitance_f = 0;
  double fall_capacitance_f = 0;
  double max_capacitance_f = 0;
  std::string function;
  std::string three_state;
  bool is_clock = false;
  std::vector<InternalPowerGroup> power;
  std::vector<TimingGroup> timing;
  // Load this pin presents: the larger of rise and fall capacitance (what STA
  // uses for a worst-case load), else `capacitance`.
  double load_f() const;
};

struct SequentialGroup {
  bool latch = false;
  std::string q_var, qn_var;    // ff ("IQ", "IQN")
  std::string next_state;       // ff: next_state; latch: data_in
  std::string clocked_on;       // ff: clocked_on; latch: enable
  std::string clear, preset;
  std::string clear_preset_var1, clear_preset_var2;  // L, H, N, T, X
};

struct LeakageGroup {
  double power_w = 0;
  std::string when;
  std::string related_pg_pin;
};

struct LibCell {
  std::string name;
  std::string source;  // file it came from
  double area = 0;
  bool dont_use = false;
  bool has_statetable = false;  // sequential behaviour we cannot simulate
  std::vector<LibPin> pins;
  std::vector<LeakageGroup> leakage;
  std::optional<double> cell_leakage_w;
  std::vector<SequentialGroup> sequentials;
  std::map<std::string, double> pg_pin_voltage;  // pg_pin -> voltage of its voltage_name

  const LibPin* pin(const std::string& n) const;
  int pin_index(const std::string& n) const;  // -1 when absent
  bool is_sequential() const { return !sequentials.empty() || has_statetable; }
  // cell_leakage_power when given; else, per supply pin, the mean of the
  // state-dependent values (all states equally likely) or, without states,
  // the unconditional value; summed over supply pins.
  double leakage_w() const;
  // How Debian's 2019 OpenSTA adds it: cell_leakage_power when given, else
  // each state's value x 0.5 per input of its `when` but the first (as
  // observed), else the unconditional values.
  double leakage_opensta2019_w() const;
  // A ground pin (0 V), whose internal-power groups draw no supply energy.
  bool is_ground_pg(const std::string& pg) const;
};

struct WireLoadModel {
  std::string name;
  double cap_per_length_f = 0;
  double slope = 0;
  std::vector<std::pair<int, double>> fanout_length;
  // Wire capacitance for a net with `fanout` loads (table, then slope beyond it).
  double wire_cap_f(int fanout) const;
};

struct LibUnits {
  double time_s = 1e-9;
  double cap_f = 1e-12;
  double leakage_w = 1e-9;
  double voltage_v = 1.0;
  double energy_j() const { return cap_f * voltage_v * voltage_v; }
};

struct Library {
  std::string name;
  std::vector<std::string> sources;
  LibUnits units;
  double voltage_v = 0;  // supply voltage for switching power
  std::vector<LibCell> cells;
  std::vector<WireLoadModel> wire_loads;
  std::string default_wire_load;
  std::map<std::string, double> voltage_map;  // supply name -> voltage
  std::map<std::string, size_t> index;

  const LibCell* cell(const std::string& n) const;
  const WireLoadModel* wire_load() const;  // the default model, or null
};

// Reads one or several files of one library (merged as write_merged_liberty
// would). Throws FileError with file and line on malformed input.
Library read_liberty(const std::vector<std::filesystem::path>& files);
Library read_liberty(const std::filesystem::path& file);
Library library_from_files(const std::vector<LibFile>& files);

}  // namespace kaleido::ppa
