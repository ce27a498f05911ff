// The documented schedule of kld_top (docs/hardware.md): cycle counts the
// hardware must reproduce when no stream stalls. Written from the document,
// not from the RTL, so the testbench can hold the RTL to it.
#pragma once

#include <cstdint>
#include <vector>

#include "golden/config.hpp"
#include "golden/reuse.hpp"
#include "hw/hw_config.hpp"

namespace kaleido::hw {

struct ScheduleCycles {
  int64_t detect = 0;
  int64_t passes = 0;  // LOADW + ISSUE + DRAIN over all (mt, kt)
  int64_t gather = 0;
  int64_t total = 0;   // detect + passes + gather (cycles with BUSY set)
  int64_t busy = 0;    // cycles with at least one issue
};

// Compute-list length of every group (tokens whose pair computes).
std::vector<int64_t> compute_list_lengths(const ReuseConfig& cfg, const std::vector<PairDecision>& decisions);

ScheduleCycles dense_cycles(const HwConfig& hw, const ReuseConfig& cfg);
ScheduleCycles reuse_cycles(const HwConfig& hw, const ReuseConfig& cfg, const std::vector<int64_t>& list_lengths);

}  // namespace kaleido::hw
