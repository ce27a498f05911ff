// Reports of a sweep, rebuilt from every finished point's result.json:
// sweep.csv (one row per point x top), sweep.json (ORFS-style metric names),
// summary.md (for people: the table and how each number was obtained) and SVG
// plots against array size.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sweep/sweep_spec.hpp"

namespace kaleido::sweep {

// One point x top. Status "done", "failed", "skipped" (library not
// installed) or "pending" (not run yet); numbers only when done.
struct Row {
  const SweepPoint* point = nullptr;
  std::string top;
  std::string status;
  std::string note;  // failure or skip reason, log path
  double area_logic_um2 = 0, area_sram_um2 = 0, area_total_um2 = 0;
  int cells = 0, sequential_cells = 0, srams = 0;
  bool timed = false;
  double fmax_mhz = 0, ws_ns = 0, wns_ns = 0, tns_ns = 0;
  double power_opensta_w = 0;        // OpenSTA vectorless, logic only (SRAM macros excluded)
  double power_kaleido_w = 0;        // the project's model, uniform activity, logic only
  double power_sram_w = 0;           // kaleido SRAM model, `activity` accesses per cycle
  double power_with_sram_w = 0;      // power_opensta_w + power_sram_w
  double energy_per_mac_pj = 0;      // power_opensta_w * T / (ROWS*COLS)
  double energy_per_mac_sram_pj = 0; // (power_opensta_w + power_sram_w) * T / (ROWS*COLS)
  double synth_seconds = 0;
  std::vector<std::pair<std::string, double>> blocks;  // logic area by block (top's children; "(top glue)")
  std::string library_name;  // as the Liberty file names it
};

// Rows of every point of `spec` (spec order, then top order), read from <out>.
std::vector<Row> collect_rows(const SweepSpec& spec, const std::filesystem::path& out);

// Energy per MAC at full PE utilisation (docs/sweep.md): the vectorless power
// at the target clock times the clock period, over ROWS*COLS MACs per cycle.
double energy_per_mac_pj(double power_w, double clock_ns, int pes);

// Writes sweep.csv, sweep.json, summary.md and plots/*.svg into <out>
// (each atomically). Returns the files written.
std::vector<std::filesystem::path> write_reports(const SweepSpec& spec, const std::filesystem::path& out,
                                                 const std::vector<Row>& rows, double run_seconds);

// The wall time of the last run recorded in <out>/sweep.json (0 when none).
double last_run_seconds(const std::filesystem::path& out);

}  // namespace kaleido::sweep
