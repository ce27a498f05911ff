#include "sim/simulate.hpp"

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"
#include "common/process.hpp"
#include "common/version.hpp"
#include "golden/vectors.hpp"
#include "hw/generator.hpp"
#include "hw/schedule.hpp"
#include "sim/verilator_build.hpp"

namespace kaleido::sim {

namespace fs = std::filesystem;

namespace {

int next_pow2(int64_t v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

// One testbench run of `mode`; its files are tb_<name>.json and .log (name: the mode unless given).
// One run's figures from the testbench JSON (the report's top level is its first run).
void read_run(const nlohmann::json& j, ModeRun& r) {
  r.cycles = j.at("cycles").get<int64_t>();
  r.busy = j.at("busy_cycles").get<int64_t>();
  r.stall = j.at("stall_cycles").get<int64_t>();
  r.schedule = j.at("schedule_cycles").get<int64_t>();
  r.macs_issued = j.at("macs_issued").get<int64_t>();
  r.macs_skipped = j.at("macs_skipped").get<int64_t>();
  r.compared_outputs = j.at("compared_outputs").get<int64_t>();
  r.compared_decisions = j.at("compared_decisions").get<int64_t>();
  r.start_cycle = j.at("start_cycle").get<uint64_t>();
  r.end_cycle = j.at("end_cycle").get<uint64_t>();
  r.checked_cycle = j.at("checked_cycle").get<uint64_t>();
}

// `keep`: vectors of further B tiles, run with CTRL.KEEP after the first reuse run (`kept`).
ModeRun run_mode(const fs::path& exe, const fs::path& vectors, const std::string& mode, const SimRequest& req,
                 const fs::path& dir, const std::string& name = "", const std::vector<fs::path>& keep = {},
                 std::vector<ModeRun>* kept = nullptr) {
  ModeRun r;
  r.ran = true;
  const std::string file = name.empty() ? mode : name;
  const fs::path json = dir / ("tb_" + file + ".json");
  const fs::path log = dir / ("tb_" + file + ".log");
  std::vector<std::string> argv = {exe.string(), "--vectors", vectors.string(), "--mode", mode, "--seed",
                                   std::to_string(req.seed), "--stall", std::to_string(req.stall), "--json",
                                   json.string()};
  if (req.dump_inputs) {
    r.inputs = dir / ("inputs_" + file + ".txt");
    argv.insert(argv.end(), {"--dump-inputs", r.inputs.string()});
  }
  if (req.reset_fraction >= 0) argv.insert(argv.end(), {"--reset-at-fraction", std::to_string(req.reset_fraction)});
  for (const fs::path& k : keep) argv.insert(argv.end(), {"--keep", k.string()});
  if (mode == "reuse" && !req.trace.empty()) {
    argv.insert(argv.end(), {"--trace", req.trace});
    if (!req.trace_window.empty()) argv.insert(argv.end(), {"--trace-window", req.trace_window});
  }
  ProcessOptions po;
  po.log = log;
  const ProcessResult run = run_process(argv, po);
  r.seconds = run.seconds;
  if (!fs::exists(json))
    throw Error("testbench (" + mode + " mode) failed to run; log: " + log.string() + "\n" + run.output);
  r.tb = nlohmann::json::parse(read_file(json));
  r.bit_exact = run.ok() && r.tb.at("bit_exact").get<bool>();
  read_run(r.tb, r);
  for (const nlohmann::json& j : r.tb.at("runs")) {
    if (j.at("mode") != "keep" || !kept) continue;
    ModeRun k;
    k.ran = true;
    k.bit_exact = j.at("bit_exact").get<bool>();
    k.tb = j;
    read_run(j, k);
    kept->push_back(k);
  }
  if (kept && kept->size() != keep.size())
    throw Error("testbench: " + std::to_string(keep.size()) + " kept B tiles asked for, " +
                std::to_string(kept->size()) + " run; log: " + log.string());
  return r;
}

nlohmann::json mode_json(const ModeRun& m) {
  if (!m.ran) return nullptr;
  return {{"bit_exact", m.bit_exact},     {"cycles", m.cycles},          {"busy_cycles", m.busy},
          {"stall_cycles", m.stall},      {"schedule_cycles", m.schedule}, {"macs_issued", m.macs_issued},
          {"macs_skipped", m.macs_skipped}, {"compared_outputs", m.compared_outputs},
          {"compared_decisions", m.compared_decisions}, {"sim_seconds", m.seconds},
          {"stalls", m.tb.value("stalls", nlohmann::json::object())},
          {"errors", m.tb.value("errors", nlohmann::json::array())}};
}

}  // namespace

fs::path cached_rtl(const hw::HwConfig& hw) {
  const auto files = hw::generate_files(hw);
  uint64_t h = kFnv1aOffset;
  for (const auto& f : files) h = fnv1a(fnv1a(h, f.name), f.text);
  const fs::path dir = default_cache_root() / ("rtl-" + hw.name() + "-" + fmt::format("{:016x}", h));
  if (!fs::exists(dir / "manifest.json")) {
    fs::create_directories(dir.parent_path());
    hw::write_rtl(hw, dir);
  }
  return dir;
}

SimResult run_sim(SimRequest req, const Log& log) {
  auto say = [&](const std::string& s) {
    if (log) log(s);
  };
  const ReuseConfig& c = req.cfg;
  c.validate();
  SimResult res;
  hw::HwConfig hw = req.hw;
  // One configuration: never simulate with widths silently copied over the hardware's.
  hw::check_algorithm_widths(hw, c.data_w, c.acc_w, c.group_w);
  const GoldenVectors v = make_vectors(c, req.a, req.b, req.workload);
  if (req.fit_hw) {
    auto fit = [&](const char* key, int& field, int64_t value) {
      if (req.hw_given.count(key) == 0) field = static_cast<int>(value);
    };
    fit("max_t", hw.max_t, c.grid.t);
    fit("max_h", hw.max_h, c.grid.h);
    fit("max_w", hw.max_w, c.grid.w);
    fit("max_k", hw.max_k, c.channels);
    fit("max_m", hw.max_m, c.out_cols);
    fit("win_cap", hw.win_cap, next_pow2(std::max<int64_t>(1, v.window_depth)));
    if (hw.lanes > hw.max_groups()) fit("lanes", hw.lanes, 0);
  }
  hw.validate();
  hw::check_workload_fits(hw, c);
  res.hw = hw;
  say("generate RTL for " + hw.name());
  res.rtl_dir = cached_rtl(hw);

  const fs::path src = source_dir();
  auto testbench_of = [&](const std::string& top) {
    BuildSpec spec;
    spec.name = (top == "kld_top" ? "kld_tb_" : "kld_tb_plain_") + hw.name();
    spec.rtl_dir = res.rtl_dir;
    spec.top = top;
    spec.sources = {src / "tb/tb_main.cpp"};
    spec.include_dirs = {src / "gen", src / "tb", res.rtl_dir};
    spec.libs = testbench_libs();
    spec.trace = top == "kld_top" && !req.trace.empty();
    say("build the Verilator testbench of " + top + " (cached by content)");
    return build_model(spec);
  };
  const BuildResult b = testbench_of("kld_top");
  res.build_cached = b.cached;
  res.build_seconds = b.seconds;

  fs::create_directories(req.work_dir);
  const fs::path vec = req.work_dir / "golden.kvec";
  write_vectors(vec.string(), v);
  std::vector<fs::path> keep;
  for (size_t k = 0; k < req.keep_b.size(); ++k) {
    if (req.keep_b[k].rows != req.b.rows || req.keep_b[k].cols != req.b.cols)
      throw ConfigError("B tile", std::to_string(k + 1), "a kept B tile must have the shape of B");
    keep.push_back(req.work_dir / ("golden_keep" + std::to_string(k + 1) + ".kvec"));
    write_vectors(keep.back().string(), make_vectors(c, req.a, req.keep_b[k], req.workload));
  }
  if (!keep.empty() && !req.reuse) throw ConfigError("B tiles", "kept", "need the reuse run (their detection)");
  if (req.reuse) {
    say(keep.empty() ? "simulate reuse mode"
                     : "simulate reuse mode, then " + std::to_string(keep.size()) + " further B tile(s) with CTRL.KEEP");
    res.reuse = run_mode(b.exe, vec, "reuse", req, req.work_dir, "", keep, &res.kept);
  }
  if (req.dense) {
    say("simulate dense mode");
    res.dense = run_mode(b.exe, vec, "dense", req, req.work_dir);
  }
  if (req.plain) {
    const BuildResult p = testbench_of("kld_plain_top");
    res.build_cached = res.build_cached && p.cached;
    res.build_seconds += p.seconds;
    say("simulate the dense GEMM on kld_plain_top");
    res.plain = run_mode(p.exe, vec, "dense", req, req.work_dir, "plain");
  }
  const double all = static_cast<double>(v.counters.macs_issued + v.counters.macs_skipped);
  res.skipped_fraction = all > 0 ? static_cast<double>(v.counters.macs_skipped) / all : 0.0;
  res.ideal_speedup = res.skipped_fraction < 1.0 ? 1.0 / (1.0 - res.skipped_fraction) : 0.0;
  const double pes = static_cast<double>(hw.rows) * hw.cols;
  if (res.reuse.ran && res.reuse.cycles > 0)
    res.utilisation_reuse = static_cast<double>(res.reuse.macs_issued) / (static_cast<double>(res.reuse.cycles) * pes);
  if (res.dense.ran && res.dense.cycles > 0)
    res.utilisation_dense = static_cast<double>(res.dense.macs_issued) / (static_cast<double>(res.dense.cycles) * pes);
  if (res.plain.ran && res.plain.cycles > 0)
    res.utilisation_plain = all / (static_cast<double>(res.plain.cycles) * pes);
  if (res.reuse.ran && res.reuse.cycles > 0) {
    const std::vector<int64_t> len = hw::compute_list_lengths(c, v.decisions);
    const int64_t mt = (c.out_cols + hw.cols - 1) / hw.cols;
    std::vector<int64_t> issues(static_cast<size_t>(hw.segs()), 0);
    int64_t pairs = 0;
    for (size_t g = 0; g < len.size(); ++g) {
      issues[g % issues.size()] += mt * len[g];
      pairs += len[g];
    }
    // Every COMPUTE pair costs GROUP_W x M MACs over the m-tiles: what MACS_ISSUED counted.
    if (pairs * c.group_w * c.out_cols != res.reuse.macs_issued)
      throw InternalError("segment issues from the decisions (" + std::to_string(pairs) +
                          " COMPUTE pairs) disagree with MACS_ISSUED " + std::to_string(res.reuse.macs_issued));
    for (int64_t n : issues)
      res.segment_utilisation_reuse.push_back(static_cast<double>(n) / static_cast<double>(res.reuse.cycles));
  }
  if (res.reuse.ran && res.dense.ran && res.reuse.cycles > 0)
    res.speedup = static_cast<double>(res.dense.cycles) / static_cast<double>(res.reuse.cycles);
  if (res.reuse.ran && res.dense.ran) {
    res.tiles_reuse_cycles = res.reuse.cycles;
    for (const ModeRun& k : res.kept) res.tiles_reuse_cycles += k.cycles;
    res.tiles_dense_cycles = res.dense.cycles * static_cast<int64_t>(1 + res.kept.size());
    if (res.tiles_reuse_cycles > 0)
      res.tiles_speedup = static_cast<double>(res.tiles_dense_cycles) / static_cast<double>(res.tiles_reuse_cycles);
  }
  return res;
}

nlohmann::json SimResult::kept_json() const {
  if (kept.empty()) return nullptr;
  nlohmann::json runs = nlohmann::json::array();
  for (const ModeRun& k : kept) runs.push_back(mode_json(k));
  return {{"runs", runs},
          {"tiles", 1 + kept.size()},
          {"reuse_cycles", tiles_reuse_cycles},
          {"dense_cycles", tiles_dense_cycles},
          {"speedup", tiles_speedup},
          {"how", "the first B tile's reuse run detects; each further tile runs with CTRL.KEEP on its compute lists "
                  "and root tables (no detection); dense cycles are the dense run's once per tile"}};
}

nlohmann::json SimResult::to_json() const {
  return {{"config", hw},
          {"config_name", hw.name()},
          {"rtl", rtl_dir.string()},
          {"build_cached", build_cached},
          {"build_seconds", build_seconds},
          {"bit_exact", bit_exact()},
          {"reuse", mode_json(reuse)},
          {"dense", mode_json(dense)},
          {"skipped_fraction", skipped_fraction},
          {"speedup", speedup},
          {"ideal_speedup", ideal_speedup},
          {"achieved_over_ideal", ideal_speedup > 0 ? speedup / ideal_speedup : 0.0},
          {"stalls", {{"reuse", reuse.ran ? reuse.tb.value("stalls", nlohmann::json::object()) : nlohmann::json()},
                      {"dense", dense.ran ? dense.tb.value("stalls", nlohmann::json::object()) : nlohmann::json()}}},
          {"pe_utilisation_reuse", utilisation_reuse},
          {"pe_utilisation_dense", utilisation_dense},
          {"segment_utilisation_reuse", segment_utilisation_reuse},
          {"plain", mode_json(plain)},
          {"kept_b_tiles", kept_json()},
          {"pe_utilisation_plain", utilisation_plain},
          {"generator_version", version()}};
}

}  // namespace kaleido::sim
