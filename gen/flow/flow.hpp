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
  // Optional (0 rows: none): a further B tile of A, e.g. the next key tile of Q K^T, run with
  // CTRL.KEEP after the reuse run on its decisions: its cycles, and its GEMM's energy (a window of
  // the reuse replay). The reuse run's own figures end where its checks end, before this tile.
  IntMatrix kept_b;
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

// Energy of one mode's replay. Dynamic energy (switching, internal, SRAM
// accesses) is per transition and per access, so the same at any clock;
// leakage is power, so its energy grows with the time the run takes. Every
// figure below names its clock.
// A run's energy in one block of kld_top (an instance directly below the top, or the top's own
// cells and memories), at the target clock over the replayed cycles.
struct BlockEnergy {
  std::string block;  // "(top)" for the top's own
  std::string module;
  double logic_j = 0.0, sram_j = 0.0;  // leakage included
  double leakage_w = 0.0;              // logic + SRAM leakage power (the same in every run)
};

struct ModeEnergy {
  bool measured = false;
  int64_t cycles = 0;          // testbench cycles of the run
  uint64_t replayed_cycles = 0;  // gate-level cycles replayed (the testbench's whole input dump)
  uint64_t counted_cycles = 0;   // of which toggles were counted (after the warm-up)
  double clock_ns = 0.0;       // the target clock the powers are quoted at
  double logic_w = 0.0, sram_w = 0.0;  // average power at clock_ns, leakage included
  double leakage_w = 0.0;      // logic + SRAM leakage
  double dynamic_energy_j = 0.0;  // (logic + SRAM power - leakage) x replayed cycles x clock_ns
  double energy_j = 0.0;       // at clock_ns: dynamic + leakage x replayed cycles x clock_ns
  double pj_per_useful_mac = 0.0;  // energy_j / (N * K * M), the MACs of the dense GEMM
  double pj_per_issued_mac = 0.0;  // energy_j / MACs the array issued
  double fmax_clock_ns = 0.0;      // 1000 / Fmax (STA); 0 when not timed
  double energy_at_fmax_j = 0.0;   // dynamic + leakage x replayed cycles x fmax_clock_ns
  double pj_per_useful_mac_at_fmax = 0.0;
  uint64_t a_bank_writes = 0;      // writes into the A banks (u_a_*) counted: operand loading
  std::vector<BlockEnergy> blocks;  // energy_j split by block (they add up to it)
};

struct FlowResult {
  std::string config;
  std::string rtl_hash_simulated;                // ppa::rtl_content_hash of the testbench's RTL
  std::vector<std::pair<std::string, std::string>> rtl_hash_synthesised;  // (top, hash) per synthesis
  std::vector<StageTime> stages;
  nlohmann::json report;  // everything, as written to flow.json
  bool bit_exact = false;
  double speedup = 0.0;
  ModeEnergy reuse, dense;            // the whole replayed run
  ModeEnergy reuse_gemm, dense_gemm;  // the GEMM alone: the same replay counted from START to done
  ModeEnergy kept_gemm;               // FlowOptions::kept_b's GEMM alone (CTRL.KEEP: no detection)
  std::filesystem::path markdown, json;
};

// Content hash of the files `top` needs in an RTL folder (ppa::rtl_files_for_top).
std::string top_rtl_hash(const std::filesystem::path& dir, const std::string& top);

// Throws Error naming both hashes and folders when the files `top` needs in the folder it was
// synthesised from (content hash `synthesised_hash`) are not those of the simulated folder: a report
// must never give one design's cycles and another's area and power.
void check_same_rtl(const std::string& top, const std::filesystem::path& simulated, const std::string& synthesised_hash,
                    const std::filesystem::path& synthesised);

// Throws StageError when a stage fails (the report is then not written).
FlowResult run_flow(const FlowOptions& opt);

}  // namespace kaleido::flow
