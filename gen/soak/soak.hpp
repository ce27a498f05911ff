// The random regression soak: many (hardware configuration, workload, seed)
// triples, each simulated on the generated RTL (Verilator, through
// sim::run_sim) in reuse and dense mode with random backpressure, bit-exact
// against the golden model; a quarter of them after a reset in the middle of
// a run. Run k is a pure function of (seed, k), so a run
// split over threads or Slurm tasks checks exactly the same cases.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/slurm.hpp"
#include "hw/hw_config.hpp"

namespace kaleido::soak {

// The small set of hardware configurations the soak draws from (each is
// built once, then cached by content).
std::vector<hw::HwConfig> soak_configs();

struct Options {
  int runs = 100;
  uint64_t seed = 1;
  int configs = 0;              // > 0: draw from the first `configs` of soak_configs() only (a quick soak builds fewer)
  int jobs = 1;                 // local threads
  std::filesystem::path out;    // soak.json; failed runs keep their files in <out>/failed/<k>
  int task = -1, tasks = 1;     // >= 0: run only k with k % tasks == task (one Slurm task), write <out>/tasks/<task>.json
  std::ostream* progress = nullptr;
};

struct Failure {
  int run = 0;
  std::string config;
  std::string error;
  nlohmann::json cfg;  // the workload's ReuseConfig, testbench seed and stall
};

struct Summary {
  int runs = 0;      // runs checked
  int failures = 0;  // runs that were not bit-exact or did not run
  int not_run = 0;   // runs of Slurm tasks that left no result
  int runs_with_reset = 0;  // runs cut by a reset in the middle of their first run, then rerun (about 1 in 4)
  double seconds = 0;
  std::vector<Failure> failed;
  nlohmann::json to_json() const;
};

// The configurations this soak draws from: soak_configs(), or its first opt.configs.
std::vector<hw::HwConfig> drawn_configs(const Options& opt);

// Builds the testbench of every soak configuration (serially: builds are not
// safe to run twice at once for the same configuration).
void warm_up(const Options& opt);

// Runs this process's share of the runs with opt.jobs threads.
Summary run_local(const Options& opt);

// Runs every run as a Slurm job array of `tasks` tasks, each
// `<kaleido> soak --task I`; then reads their results. Task logs in <out>/slurm.
Summary run_slurm(const Options& opt, int tasks, const slurm::Options& slurm_opt);

}  // namespace kaleido::soak
