// `kaleido sim`: run a workload on the generated accelerator in reuse and in
// dense mode, bit-exact against the golden model, and measure cycles.
#pragma once

#include <filesystem>
#include <functional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "golden/config.hpp"
#include "golden/types.hpp"
#include "hw/hw_config.hpp"

namespace kaleido::sim {

struct SimRequest {
  hw::HwConfig hw;
  bool fit_hw = true;          // size MAX_T/H/W/K/M and WIN_CAP to the workload...
  std::set<std::string> hw_given;  // ...but for these hw_fields() keys, as the user gave them
  ReuseConfig cfg;             // thresholds applied
  IntMatrix a, b;
  nlohmann::json workload;     // description, recorded in reports
  uint64_t seed = 1;           // stall pattern of the testbench
  double stall = 0.0;          // probability of a stalled stream cycle (0: cycle counts are the schedule's)
  bool reuse = true, dense = true;
  bool plain = false;          // also run the dense GEMM on kld_plain_top, the baseline of the same size
  // Further B tiles of the same A (further key tiles of Q K^T): after the reuse run, each runs with
  // CTRL.KEEP on that run's decisions, bit-exact against the golden model of its tile.
  std::vector<IntMatrix> keep_b;
  std::string trace;           // FST file of the reuse run ("" = none)
  std::string trace_window;    // FROM:TO cycles
  std::filesystem::path work_dir;  // vectors and testbench JSON go here
  bool dump_inputs = false;        // write each mode's per-cycle inputs (inputs_<mode>.txt) for gate-level replay
  double reset_fraction = -1;      // 0..1: each mode's first run is cut by a reset at this fraction of its
                                   // free-running schedule, then rerun and compared (tb --reset-at-fraction)
};

struct ModeRun {
  bool ran = false;
  bool bit_exact = false;
  int64_t cycles = 0, busy = 0, stall = 0, schedule = 0, macs_issued = 0, macs_skipped = 0;
  int64_t compared_outputs = 0, compared_decisions = 0;
  uint64_t start_cycle = 0, end_cycle = 0;  // testbench cycles of the START write and of done (the
                                            // GEMM's rows [start, end) of the input dump)
  uint64_t checked_cycle = 0;  // ... and once the testbench had read the run's counters back
  double seconds = 0.0;  // wall time of the simulation
  std::filesystem::path inputs;  // per-cycle inputs when SimRequest::dump_inputs
  nlohmann::json tb;     // the testbench's own report
};

struct SimResult {
  hw::HwConfig hw;
  std::filesystem::path rtl_dir;
  bool build_cached = false;
  double build_seconds = 0.0;
  ModeRun reuse, dense;
  ModeRun plain;               // kld_plain_top's dense run (SimRequest::plain)
  std::vector<ModeRun> kept;   // one per SimRequest::keep_b, in order
  // Every B tile (the first and the kept ones): reuse-mode cycles (detection once), dense-mode
  // cycles (the dense run's, once per tile: its schedule does not depend on B), and their ratio.
  int64_t tiles_reuse_cycles = 0, tiles_dense_cycles = 0;
  double tiles_speedup = 0.0;
  double skipped_fraction = 0.0;
  double speedup = 0.0;        // dense cycles / reuse cycles
  double ideal_speedup = 0.0;  // 1 / (1 - skipped fraction)
  double utilisation_reuse = 0.0, utilisation_dense = 0.0;  // MACs issued / (cycles * ROWS * COLS)
  double utilisation_plain = 0.0;                           // the GEMM's MACs / (plain cycles * ROWS * COLS)
  // Per array segment, the fraction of the reuse run's cycles in which it issued a token: each
  // COMPUTE pair of group g is issued once per m-tile by segment g mod SEGS (the golden decisions'
  // list lengths; their MACs are checked against the RTL's MACS_ISSUED). Empty without a reuse run.
  std::vector<double> segment_utilisation_reuse;
  bool bit_exact() const {
    bool kept_exact = true;
    for (const ModeRun& k : kept) kept_exact = kept_exact && k.bit_exact;
    return (!reuse.ran || reuse.bit_exact) && (!dense.ran || dense.bit_exact) && (!plain.ran || plain.bit_exact) &&
           kept_exact;
  }
  nlohmann::json to_json() const;
  nlohmann::json kept_json() const;  // null without kept B tiles
};

using Log = std::function<void(const std::string&)>;

// The RTL folder of a configuration in the cache (generated when missing).
std::filesystem::path cached_rtl(const hw::HwConfig& hw);

// Throws kaleido::Error when the workload does not fit or a tool fails.
SimResult run_sim(SimRequest req, const Log& log = {});

}  // namespace kaleido::sim
