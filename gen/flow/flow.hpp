// `kaleido flow`: the main job in one call. Generate the RTL of a
// configuration, lint it, run the golden model and the Verilator testbench on
// a workload (bit-exact check, dense and reuse cycles), synthesise and time
// kld_top and the dense baseline kld_plain_top, estimate power from the
// simulated activity of both modes, and write a report (Markdown with SVG
// plots, JSON) that ends with the headline.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "golden/config.hpp"
#include "golden/types.hpp"
#include "hw/hw_config.hpp"

namespace kaleido::flow {

struct FlowOptions {
  hw::HwConfig hw;
  // The workload: one reuse GEMM with its thresholds applied.
  ReuseConfig cfg;
  IntMatrix a, b;
  nlohmann::json workload;  // description (clip, encoder, thresholds), copied into the report

  std::vector<std::filesystem::path> liberty;  // empty = the project's generic library
  double clock_ns = 12.0;  // the default 8x8 configuration closes timing here on the generic library (Fmax ~92 MHz)
  std::filesystem::path report_dir;  // flow.md, flow.json, *.svg, copies of the stage reports
  std::filesystem::path work_dir;    // RTL, netlists, vectors, logs (kept after a failure)

  bool lint = true;
  bool synth = true;        // synthesis, timing and power; off = stop after the simulation
  bool plain_top = true;    // also synthesise kld_plain_top (area overhead of the reuse logic)
  bool activity_power = true;  // gate-level replay of both modes' testbench inputs
  uint64_t tb_seed = 1;
  std::function<void(const std::string&)> progress;  // one line per event; empty = quiet
};

// A failed stage: what() names the stage and its log.
class StageError : public Error {
 public:
  StageError(std::string stage, std::filesystem::path log, const std::string& message)
      : Error("stage '" + stage + "' failed: " + message + "\n  log: " + log.string()),
        stage_(std::move(stage)),
        log_(std::move(log)) {}
  const std::string& stage() const { return stage_; }
  const std::filesystem::path& log() const { return log_; }

 private:
  std::string stage_;
  std::filesystem::path log_;
};

struct StageTime {
  std::string name;
  double seconds = 0.0;
};

struct ModeEnergy {
  bool measured = false;
  int64_t cycles = 0;          // testbench cycles of the run
  uint64_t replayed_cycles = 0;  // gate-level cycles replayed (the testbench's whole input dump)
  uint64_t counted_cycles = 0;   // of which toggles were counted (after the warm-up)
  double logic_w = 0.0, sram_w = 0.0;
  double energy_j = 0.0;       // (logic + SRAM power) x replayed cycles x clock period
  double pj_per_useful_mac = 0.0;  // energy / (N * K * M), the MACs of the dense GEMM
  double pj_per_issued_mac = 0.0;  // energy / MACs the array issued
};

struct FlowResult {
  std::string config;
  std::vector<StageTime> stages;
  nlohmann::json report;  // everything, as written to flow.json
  bool bit_exact = false;
  double speedup = 0.0;
  ModeEnergy reuse, dense;
  std::filesystem::path markdown, json;
};

// Throws StageError when a stage fails (the report is then not written).
FlowResult run_flow(const FlowOptions& opt);

}  // namespace kaleido::flow
