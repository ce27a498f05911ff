// The documented schedule of kld_top (docs/hardware.md): cycle counts the
// hardware must reproduce. Written from the document, not from the RTL, so the
// testbench can hold the RTL to it.
#pragma once

#include <cstdint>
#include <vector>

#include "golden/config.hpp"
#include "golden/reuse.hpp"
#include "hw/hw_config.hpp"

namespace kaleido::hw {

// Stream back-pressure seen during a run: it moves the schedule, so the
// testbench passes what it applied (all zero = free-running streams).
struct StreamStalls {
  // Cycles (from the first BUSY cycle) after one with dec_ready_i low: no decision may transfer
  // (the trace has ready latency 1). The detector waits in those of them that find a decision.
  std::vector<int64_t> trace_not_ready_cycles;
  std::vector<int64_t> out_cycles;    // cycles (ascending, same origin) a word waited for out_ready_i
};

struct ScheduleCycles {
  int64_t detect = 0;       // cycles until the detection engine has finished (trace stalls included)
  int64_t passes = 0;       // LOADW + ISSUE over all (mt, kt)
  int64_t loadw = 0;        // LOADW cycles: the pass engine waits for a pass's weights (load not hidden)
  int64_t handoff = 0;      // HANDOFF cycles: one per m-tile but the last, plus the waits for the gather engine
  int64_t wait_gather = 0;  // HANDOFF cycles spent waiting for the gather of the next m-tile's bank
  int64_t tail = 0;         // after the last m-tile's last issue: its landing and its gather
  int64_t total = 0;        // cycles with BUSY set
  int64_t busy = 0;         // cycles with at least one issue
  int64_t starved = 0;      // ISSUE cycles waiting for the detector to extend a compute list
  int64_t trace_stalls = 0;  // cycles a decision waited for the trace consumer (STALL_TRACE)
};

// Throws ConfigError naming the option to raise when `cfg` does not fit `hw` (grid, K, M, group
// width, window, policy, mode): before a flow or simulation runs any stage.
void check_workload_fits(const HwConfig& hw, const ReuseConfig& cfg);

// Compute-list length of every group (tokens whose pair computes).
std::vector<int64_t> compute_list_lengths(const ReuseConfig& cfg, const std::vector<PairDecision>& decisions);

ScheduleCycles dense_cycles(const HwConfig& hw, const ReuseConfig& cfg, const StreamStalls& stalls = {});
// Reuse mode: the decisions (token-major, as the golden model gives them) set
// the compute lists and, through the detection order, when their entries exist.
ScheduleCycles reuse_cycles(const HwConfig& hw, const ReuseConfig& cfg, const std::vector<PairDecision>& decisions,
                            const StreamStalls& stalls = {});
// A run with CTRL.KEEP: no detection; the lists of `decisions` are complete from the first cycle.
ScheduleCycles keep_cycles(const HwConfig& hw, const ReuseConfig& cfg, const std::vector<PairDecision>& decisions,
                           const StreamStalls& stalls = {});

// The fewest detector lanes whose rounds fit in the first m-tile's passes at reuse ratio `r` of a
// run with `groups` channel groups (docs/hardware.md "Detector lanes sized by the schedule"):
// detection_rounds(G, L, LANE_GROUPS) rounds of N cycles against about KT (1 - r) N issue cycles, KT = ceil(G / SEGS).
// 0 when no lane count does (one round is already longer than those passes).
int lanes_to_keep_up(const HwConfig& hw, int groups, double r);

// The narrowest gather whose beats keep up with the passes of an m-tile at reuse ratio `r` of a
// run with `channels` (K) channels (docs/hardware.md "Cycle count"): GATHER_W >= 1 / (KT (1 - r)),
// KT = ceil(K / ROWS). 0 when no GATHER_W the generator builds (hw_fields()' range) does.
int gather_w_to_keep_up(const HwConfig& hw, int channels, double r);

}  // namespace kaleido::hw
