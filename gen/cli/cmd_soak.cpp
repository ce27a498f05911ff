// `kaleido soak`: the random regression soak (RTL against the golden model)
// on this machine (-j threads) or as a Slurm job array.
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "soak/soak.hpp"

namespace kaleido::cli {

namespace {

struct SoakCommand {
  soak::Options opt;
  std::string out = "out/soak";
  std::string backend = "local";
  slurm::Options slurm;

  void run() {
    opt.out = out;
    opt.progress = &std::cerr;
    if (opt.task >= 0 && (opt.tasks < 1 || opt.task >= opt.tasks))
      throw ConfigError("--task", std::to_string(opt.task), "must be 0 to --tasks - 1");
    const bool on_slurm = backend == "slurm" && opt.task < 0;
    const soak::Summary s = on_slurm ? soak::run_slurm(opt, opt.jobs, slurm) : soak::run_local(opt);
    if (opt.task >= 0) {  // one Slurm task: the coordinator reports
      if (s.failures > 0) throw Error("soak task " + std::to_string(opt.task) + ": " + std::to_string(s.failures) + " failures");
      return;
    }
    nlohmann::json j = s.to_json();
    j["backend"] = backend;
    j["jobs"] = opt.jobs;
    j["seed"] = opt.seed;
    j["how"] = "each run: a random workload on a random configuration of soak_configs() (gen/soak/soak.cpp), "
               "simulated with Verilator in reuse and dense mode with random stalls, bit-exact against the golden "
               "model; in about 1 run in 4 the first run of each mode is cut by a reset at a random fraction of "
               "its schedule, then everything is rerun and compared; wall time includes building the testbenches that are not cached";
    nlohmann::json configs = nlohmann::json::array();
    for (const hw::HwConfig& c : soak::drawn_configs(opt)) configs.push_back(c.name());
    j["configs"] = configs;
    write_file_atomic(std::filesystem::path(out) / "soak.json", j.dump(1) + "\n");
    std::printf("kaleido soak: %d runs (%d with a mid-run reset), %d failures, %d not run, %.1f s (%.2f runs/s, "
                "backend %s, -j %d); %s/soak.json\n",
                s.runs, s.runs_with_reset, s.failures, s.not_run, s.seconds, s.seconds > 0 ? s.runs / s.seconds : 0.0, backend.c_str(),
                opt.jobs, out.c_str());
    if (s.failures > 0 || s.not_run > 0)
      throw Error("soak: " + std::to_string(s.failures) + " failures, " + std::to_string(s.not_run) +
                  " runs not run (see " + out + "/soak.json and " + out + "/failed/)");
  }
};

}  // namespace

void register_soak(CLI::App& app) {
  auto cmd = std::make_shared<SoakCommand>();
  CLI::App* sub = app.add_subcommand(
      "soak", "Random regression: RTL against the golden model on random configurations, workloads, seeds and stalls");
  sub->add_option("--runs", cmd->opt.runs, "Number of runs")->capture_default_str();
  sub->add_option("--seed", cmd->opt.seed, "Seed of the whole soak (run k is a function of seed and k)")
      ->capture_default_str();
  sub->add_option("--configs", cmd->opt.configs,
                  "Draw from the first N soak configurations only (0: all; fewer testbenches to build)")
      ->capture_default_str();
  sub->add_option("-j,--jobs", cmd->opt.jobs, "Local threads, or Slurm tasks with --backend slurm")->capture_default_str();
  sub->add_option("--out", cmd->out, "Folder for soak.json and the files of failed runs")->capture_default_str();
  sub->add_option("--backend", cmd->backend, "local or slurm")->check(CLI::IsMember({"local", "slurm"}))->capture_default_str();
  sub->add_option("--partition", cmd->slurm.partition, "Slurm partition");
  sub->add_option("--account", cmd->slurm.account, "Slurm account");
  sub->add_option("--time", cmd->slurm.time, "Slurm time limit per task");
  sub->add_option("--mem", cmd->slurm.mem, "Slurm memory per task");
  sub->add_option("--task", cmd->opt.task, "Run only the runs k with k % --tasks == TASK (what each Slurm task does)");
  sub->add_option("--tasks", cmd->opt.tasks, "Number of tasks the runs are split in")->capture_default_str();
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace kaleido::cli
