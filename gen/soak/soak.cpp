#include "soak/soak.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <unistd.h>

#include "common/stopwatch.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/process.hpp"
#include "golden/quant.hpp"
#include "golden/random.hpp"
#include "golden/scan.hpp"
#include "golden/workload.hpp"
#include "sim/simulate.hpp"

namespace kaleido::soak {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

hw::HwConfig small(int rows, int cols, int group_w, int data_w, int acc_w, int max_k, int max_m, int mul_pipe,
                   int gather_w = 1, int lane_groups = 1) {
  hw::HwConfig c;
  c.rows = rows;
  c.cols = cols;
  c.group_w = group_w;
  c.data_w = data_w;
  c.acc_w = acc_w;
  c.max_t = 2;
  c.max_h = 4;
  c.max_w = 4;
  c.max_k = max_k;
  c.max_m = max_m;
  c.mul_pipe = mul_pipe;
  c.gather_w = gather_w;
  c.lane_groups = lane_groups;
  c.validate();
  return c;
}

constexpr double kResetShare = 0.25;

// One run: a workload that fits configuration `hw`, drawn from `rng`.
struct Case {
  size_t config = 0;
  sim::SimRequest req;
};

Case make_case(const Options& opt, int k) {
  Rng rng(opt.seed * 0x100000001b3ull + static_cast<uint64_t>(k));
  const std::vector<hw::HwConfig> configs = drawn_configs(opt);
  Case cs;
  cs.config = static_cast<size_t>(rng.range(0, static_cast<int64_t>(configs.size()) - 1));
  const hw::HwConfig& hw = configs[cs.config];
  ReuseConfig& c = cs.req.cfg;
  c.grid = {static_cast<int>(rng.range(1, hw.max_t)), static_cast<int>(rng.range(1, hw.max_h)),
            static_cast<int>(rng.range(1, hw.max_w))};
  c.data_w = hw.data_w;
  c.acc_w = hw.acc_w;
  c.group_w = hw.group_w;
  c.channels = hw.group_w * static_cast<int>(rng.range(1, hw.max_k / hw.group_w));
  c.out_cols = static_cast<int>(rng.range(1, hw.max_m));
  c.policy = static_cast<Policy>(rng.range(0, 2));
  c.tile_h = static_cast<int>(rng.range(0, c.grid.h));
  c.tile_w = static_cast<int>(rng.range(0, c.grid.w));
  const int64_t need = ScanOrder(c.grid, c.tile_h, c.tile_w).required_window_depth();
  if (need > hw.window_cap()) c.window_depth = hw.window_cap();
  for (int g = 0; g < c.groups(); ++g) c.tau.push_back(static_cast<uint32_t>(rng.range(0, c.tau_max() / 4)));
  SyntheticSpec s;
  s.grid = c.grid;
  s.channels = c.channels;
  s.seed = rng.next() % 1000000;
  s.spatial_corr = 0.5 + 0.49 * rng.uniform();
  s.temporal_corr = 0.5 + 0.49 * rng.uniform();
  s.noise = 0.2 * rng.uniform();
  cs.req.hw = hw;
  cs.req.fit_hw = false;  // one cached build per configuration
  cs.req.a = quantize(make_latent(s), c.data_w).q;
  cs.req.b = make_int_weights(c.channels, c.out_cols, c.data_w, s.seed + 1);
  cs.req.workload = {{"kind", "synthetic"}, {"seed", s.seed}, {"soak_run", k}};
  cs.req.seed = rng.next() % 1000000;
  cs.req.stall = 0.5 * rng.uniform();  // random backpressure
  // A quarter of the runs are cut by a reset somewhere in their first run (of each mode) and run again.
  if (rng.uniform() < kResetShare) cs.req.reset_fraction = 0.05 + 0.85 * rng.uniform();
  return cs;
}

json case_json(const Case& cs) {
  return {{"reuse_config", cs.req.cfg}, {"workload", cs.req.workload}, {"tb_seed", cs.req.seed},
          {"stall", cs.req.stall}, {"reset_fraction", cs.req.reset_fraction}};
}

// True when the testbench of every mode that ran reports the requested reset as applied.
bool reset_applied(const sim::SimResult& r) {
  for (const sim::ModeRun* m : {&r.reuse, &r.dense})
    if (m->ran && !m->tb.value("reset", json()).value("happened", false)) return false;
  return true;
}

// Runs k; a failure keeps its folder, a pass removes it. `reset` tells whether the run had a mid-run reset.
bool run_one(const Options& opt, int k, Failure& failure, bool& reset) {
  Case cs = make_case(opt, k);
  const fs::path dir = opt.out / "runs" / std::to_string(k);
  cs.req.work_dir = dir;
  reset = cs.req.reset_fraction >= 0;
  std::string error;
  try {
    const sim::SimResult r = sim::run_sim(cs.req);
    if (r.bit_exact() && (!reset || reset_applied(r))) {
      fs::remove_all(dir);
      return true;
    }
    error = std::string(r.bit_exact() ? "the reset asked for was not applied" : "not bit-exact") +
            " (testbench reports in " + (opt.out / "failed" / std::to_string(k)).string() + ")";
  } catch (const std::exception& e) {
    error = e.what();
  }
  failure = {k, cs.req.hw.name(), error, case_json(cs)};
  const fs::path keep = opt.out / "failed" / std::to_string(k);
  fs::create_directories(keep.parent_path());
  std::error_code ec;
  fs::remove_all(keep, ec);
  fs::rename(dir, keep, ec);
  fs::create_directories(keep);
  write_file_atomic(keep / "case.json", json{{"error", error}, {"config", cs.req.hw}, {"case", failure.cfg}}.dump(1));
  return false;
}

json failure_json(const Failure& f) { return {{"run", f.run}, {"config", f.config}, {"error", f.error}, {"case", f.cfg}}; }

}  // namespace

std::vector<hw::HwConfig> soak_configs() {
  return {small(2, 2, 2, 8, 24, 8, 4, 0), small(4, 2, 2, 8, 24, 8, 4, 1), small(2, 4, 1, 6, 16, 6, 8, 0),
          small(4, 4, 4, 4, 12, 8, 6, 0), small(4, 3, 2, 8, 24, 8, 7, 0, 3), small(4, 2, 2, 8, 24, 12, 5, 0, 1, 2)};
}

json Summary::to_json() const {
  json f = json::array();
  for (const Failure& x : failed) f.push_back(failure_json(x));
  return {{"runs", runs},
          {"failures", failures},
          {"not_run", not_run},
          {"runs_with_reset", runs_with_reset},
          {"seconds", seconds},
          {"runs_per_second", seconds > 0 ? runs / seconds : 0.0},
          {"failed", f}};
}

std::vector<hw::HwConfig> drawn_configs(const Options& opt) {
  std::vector<hw::HwConfig> all = soak_configs();
  if (opt.configs < 0 || opt.configs > static_cast<int>(all.size()))
    throw ConfigError("--configs", std::to_string(opt.configs), "must be 1 to " + std::to_string(all.size()) +
                                                                     " (0: all)");
  if (opt.configs > 0) all.resize(static_cast<size_t>(opt.configs));
  return all;
}

void warm_up(const Options& opt) {
  const std::vector<hw::HwConfig> configs = drawn_configs(opt);
  std::vector<bool> built(configs.size(), false);
  // The first run of every configuration, serially: it generates and builds.
  for (int k = 0; k < opt.runs && std::find(built.begin(), built.end(), false) != built.end(); ++k) {
    const size_t c = make_case(opt, k).config;
    if (built[c]) continue;
    if (opt.progress) *opt.progress << "soak: building the testbench of " << configs[c].name() << std::endl;
    sim::cached_rtl(configs[c]);
    Failure ignored;
    bool reset = false;
    run_one(opt, k, ignored, reset);  // counted again by the real pass
    built[c] = true;
  }
}

Summary run_local(const Options& opt) {
  if (opt.runs < 1) throw ConfigError("--runs", std::to_string(opt.runs), "must be at least 1");
  if (opt.jobs < 1) throw ConfigError("-j", std::to_string(opt.jobs), "must be at least 1");
  const auto t0 = std::chrono::steady_clock::now();
  fs::create_directories(opt.out);
  if (opt.task < 0) warm_up(opt);  // a Slurm task: the coordinator has built everything
  std::vector<int> mine;
  for (int k = 0; k < opt.runs; ++k)
    if (opt.task < 0 || k % opt.tasks == opt.task) mine.push_back(k);
  Summary sum;
  std::mutex mu;
  std::atomic<size_t> next{0};
  int done = 0;
  auto worker = [&] {
    for (size_t i = next++; i < mine.size(); i = next++) {
      Failure f;
      bool reset = false;
      const bool ok = run_one(opt, mine[i], f, reset);
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      sum.runs_with_reset += reset ? 1 : 0;
      if (!ok) {
        ++sum.failures;
        sum.failed.push_back(f);
        if (opt.progress) *opt.progress << "soak: run " << f.run << " on " << f.config << " FAILED: " << f.error << std::endl;
      }
      if (opt.progress && (done % 100 == 0 || done == static_cast<int>(mine.size())))
        *opt.progress << "soak: [" << done << "/" << mine.size() << "] " << sum.failures << " failures, "
                      << sum.runs_with_reset << " with a mid-run reset, "
                      << static_cast<int>(seconds_since(t0)) << " s" << std::endl;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < opt.jobs; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  sum.runs = static_cast<int>(mine.size());
  std::sort(sum.failed.begin(), sum.failed.end(), [](const Failure& a, const Failure& b) { return a.run < b.run; });
  sum.seconds = seconds_since(t0);
  if (opt.task >= 0) {
    fs::create_directories(opt.out / "tasks");
    write_file_atomic(opt.out / "tasks" / (std::to_string(opt.task) + ".json"), sum.to_json().dump(1));
  }
  return sum;
}

Summary run_slurm(const Options& opt, int tasks, const slurm::Options& slurm_opt) {
  if (tasks < 1) throw ConfigError("-j", std::to_string(tasks), "must be at least 1 (Slurm tasks)");
  if (!slurm::available())
    throw Error("--backend slurm needs sbatch and squeue on PATH (Debian package slurm-client; docs/slurm.md)");
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path out = fs::absolute(opt.out);
  fs::create_directories(out);
  fs::remove_all(out / "tasks");
  warm_up(opt);  // the tasks then find every testbench in the cache
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) throw Error("cannot find the kaleido executable (/proc/self/exe) to run on the nodes");
  const std::vector<std::string> task = {std::string(exe, static_cast<size_t>(n)), "soak", "--runs",
                                         std::to_string(opt.runs), "--seed", std::to_string(opt.seed), "--configs",
                                         std::to_string(opt.configs), "--out",
                                         out.string(), "--tasks", std::to_string(tasks)};
  std::vector<size_t> indices;
  for (int t = 0; t < tasks; ++t) indices.push_back(static_cast<size_t>(t));
  const std::string job = slurm::submit_array(slurm_opt, "kaleido_soak", indices,
                                              command_text(task) + " --task \"$SLURM_ARRAY_TASK_ID\"", out / "slurm");
  if (opt.progress) *opt.progress << "soak: Slurm job " << job << ", " << tasks << " tasks" << std::endl;
  slurm::wait_for(job, slurm_opt, [&](const slurm::QueueState& q) {
    if (opt.progress)
      *opt.progress << "soak: Slurm tasks: " << q.text() << " (" << static_cast<int>(seconds_since(t0)) << " s)"
                    << std::endl;
  });
  Summary sum;
  for (int t = 0; t < tasks; ++t) {
    int share = 0;
    for (int k = t; k < opt.runs; k += tasks) ++share;
    const fs::path file = out / "tasks" / (std::to_string(t) + ".json");
    if (!fs::exists(file)) {
      sum.not_run += share;
      sum.failed.push_back({-1, "", "Slurm task " + std::to_string(t) + " left no result; log: " +
                                        (out / "slurm" / (job + "_" + std::to_string(t) + ".log")).string(),
                            json()});
      continue;
    }
    const json j = json::parse(read_file(file));
    sum.runs += j.at("runs").get<int>();
    sum.failures += j.at("failures").get<int>();
    sum.runs_with_reset += j.at("runs_with_reset").get<int>();
    for (const json& f : j.at("failed"))
      sum.failed.push_back({f.at("run").get<int>(), f.at("config").get<std::string>(), f.at("error").get<std::string>(),
                            f.at("case")});
  }
  sum.seconds = seconds_since(t0);
  return sum;
}

}  // namespace kaleido::soak
