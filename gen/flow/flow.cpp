#include "flow/flow.hpp"

#include <chrono>
#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <tuple>

#include "checks/lint.hpp"
#include "common/atomic_file.hpp"
#include "common/format.hpp"
#include "common/markdown.hpp"
#include "common/svg.hpp"
#include "common/version.hpp"
#include "golden/gemm.hpp"
#include "golden/metrics.hpp"
#include "golden/reuse.hpp"
#include "hw/drift.hpp"
#include "hw/generator.hpp"
#include "hw/schedule.hpp"
#include "hw/sram_budget.hpp"
#include "ppa/stimulus.hpp"
#include "ppa/synth.hpp"
#include "sim/simulate.hpp"

namespace kaleido::flow {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Fixed decimals; a figure that could not be measured (NaN, -inf) reads n/a.
std::string fmt(double v, int prec = 3) {
  if (!std::isfinite(v)) return v > 0 ? "inf" : "n/a";
  return fixed(v, prec);
}

std::string num(const json& v) { return v.dump(); }

// Runs the stages in order: progress line, timing, and a log per stage
// that holds its progress lines and, on failure, the error.
class StageRunner {
 public:
  StageRunner(const FlowOptions& opt, int count) : opt_(opt), count_(count) {
    fs::create_directories(opt.work_dir / "logs");
  }

  void log(const std::string& line) {
    if (log_) *log_ << line << "\n" << std::flush;
    if (opt_.progress) opt_.progress("      " + line);
  }

  template <class F>
  void run(const std::string& name, F&& body) {
    ++index_;
    const std::string prefix = fmt::format("[{}/{}] ", index_, count_);
    std::string file = std::to_string(index_) + "_" + name + ".log";
    for (char& c : file)
      if (c == ' ') c = '_';
    const fs::path log_path = opt_.work_dir / "logs" / file;
    log_ = std::make_unique<std::ofstream>(log_path);
    if (opt_.progress) opt_.progress(prefix + name + " ...");
    const auto t0 = std::chrono::steady_clock::now();
    try {
      body();
    } catch (const std::exception& e) {
      *log_ << "ERROR: " << e.what() << "\n";
      log_.reset();
      if (opt_.progress) opt_.progress(std::string(prefix) + name + " FAILED");
      throw StageError(name, log_path, e.what());
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    *log_ << "done in " << fmt(s, 1) << " s\n";
    log_.reset();
    times.push_back({name, s});
    if (opt_.progress) opt_.progress(std::string(prefix) + name + " done (" + fmt(s, 1) + " s)");
  }

  std::vector<StageTime> times;

 private:
  const FlowOptions& opt_;
  int count_;
  int index_ = 0;
  std::unique_ptr<std::ofstream> log_;
};

ModeEnergy mode_energy(int64_t tb_cycles, int64_t macs_issued, int64_t useful_macs, const ppa::PowerReport& p,
                       uint64_t counted, uint64_t replayed, double clock_ns, double fmax_mhz) {
  ModeEnergy e;
  e.measured = true;
  e.cycles = tb_cycles;
  e.counted_cycles = counted;
  e.replayed_cycles = replayed;
  e.clock_ns = clock_ns;
  e.logic_w = p.logic.total_w();
  e.sram_w = p.sram_w;
  e.leakage_w = p.logic.leakage_w + p.sram_leakage_w;
  // Average power of the replay times the replayed cycles: the whole run,
  // register programming and operand loading included (both modes do them).
  const double run_s = static_cast<double>(replayed) * clock_ns * 1e-9;
  e.dynamic_energy_j = (e.logic_w + e.sram_w - e.leakage_w) * run_s;
  e.energy_j = e.dynamic_energy_j + e.leakage_w * run_s;
  e.pj_per_useful_mac = useful_macs > 0 ? e.energy_j / static_cast<double>(useful_macs) * 1e12 : 0.0;
  e.pj_per_issued_mac = macs_issued > 0 ? e.energy_j / static_cast<double>(macs_issued) * 1e12 : 0.0;
  double split_j = 0.0;
  for (const ppa::BlockPower& b : p.blocks) {
    e.blocks.push_back(
        {b.block.empty() ? "(top)" : b.block, b.module, b.logic_w * run_s, b.sram_w * run_s, b.leakage_w});
    split_j += (b.logic_w + b.sram_w) * run_s;
  }
  if (!p.blocks.empty() && std::abs(split_j - e.energy_j) > 1e-6 * e.energy_j)
    throw InternalError("the energy by block (" + fmt(split_j * 1e9) + " nJ) does not add up to the run's (" +
                        fmt(e.energy_j * 1e9) + " nJ)");
  if (fmax_mhz > 0) {
    e.fmax_clock_ns = 1000.0 / fmax_mhz;
    e.energy_at_fmax_j = e.dynamic_energy_j + e.leakage_w * static_cast<double>(replayed) * e.fmax_clock_ns * 1e-9;
    e.pj_per_useful_mac_at_fmax = useful_macs > 0 ? e.energy_at_fmax_j / static_cast<double>(useful_macs) * 1e12 : 0.0;
  }
  return e;
}

json energy_json(const ModeEnergy& e) {
  if (!e.measured) return nullptr;
  json j{{"cycles", e.cycles},
         {"gate_level_cycles_replayed", e.replayed_cycles},
         {"gate_level_cycles_counted", e.counted_cycles},
         {"a_bank_writes_counted", e.a_bank_writes},
         {"clock_ns", e.clock_ns},
         {"logic_power_w", e.logic_w},
         {"sram_power_w", e.sram_w},
         {"leakage_power_w", e.leakage_w},
         {"dynamic_energy_j", e.dynamic_energy_j},
         {"energy_j", e.energy_j},
         {"energy_per_useful_mac_pj", e.pj_per_useful_mac},
         {"energy_per_issued_mac_pj", e.pj_per_issued_mac}};
  json blocks = json::array();
  for (const BlockEnergy& b : e.blocks)
    blocks.push_back({{"block", b.block}, {"module", b.module}, {"logic_energy_j", b.logic_j},
                      {"sram_energy_j", b.sram_j}, {"leakage_power_w", b.leakage_w}});
  j["energy_by_block"] = blocks;
  if (e.fmax_clock_ns > 0)
    j["at_fmax"] = {{"clock_ns", e.fmax_clock_ns},
                    {"energy_j", e.energy_at_fmax_j},
                    {"energy_per_useful_mac_pj", e.pj_per_useful_mac_at_fmax}};
  return j;
}

// Area of the blocks directly below the top (the PE array, detector,
// dispatcher, merge, SRAMs are costed apart) plus the top's own logic.
std::vector<std::pair<std::string, double>> block_areas(const ppa::SynthResult& r) {
  std::vector<std::pair<std::string, double>> out;
  for (const ppa::InstanceArea& i : r.instances) {
    if (i.depth == 0) out.emplace_back("top (control, registers)", i.own_area_um2);
    if (i.depth == 1 && i.area_um2 > 0) out.emplace_back(i.path + " (" + i.module + ")", i.area_um2);
  }
  return out;
}

}  // namespace

std::string top_rtl_hash(const fs::path& dir, const std::string& top) {
  return ppa::rtl_content_hash(ppa::rtl_files_for_top(ppa::rtl_files_in(dir), top));
}

void check_same_rtl(const std::string& top, const fs::path& simulated, const std::string& synthesised_hash,
                    const fs::path& synthesised) {
  const std::string simulated_hash = top_rtl_hash(simulated, top);
  if (simulated_hash == synthesised_hash) return;
  throw Error("the RTL synthesised for " + top + " (content hash " + synthesised_hash + ", " + synthesised.string() +
              ") is not the RTL simulated (content hash " + simulated_hash + ", " + simulated.string() +
              "): the report would mix two designs");
}

FlowResult run_flow(const FlowOptions& opt) {
  opt.hw.validate();
  hw::check_workload_fits(opt.hw, opt.cfg);  // before any stage runs
  if (opt.report_dir.empty() || opt.work_dir.empty()) throw ConfigError("flow", "output", "report and work folders are required");
  if (!(opt.clock_ns > 0)) throw ConfigError("clock-ns", fmt(opt.clock_ns), "must be > 0");
  const auto t_all = std::chrono::steady_clock::now();
  FlowResult res;
  res.config = opt.hw.name();
  const int stages = 4 + (opt.lint ? 1 : 0) + (opt.synth ? 1 + (opt.plain_top ? 1 : 0) : 0);
  StageRunner run(opt, stages);
  const fs::path rtl = opt.work_dir / "rtl";
  json rep;
  rep["kaleido_version"] = version();
  rep["config"] = res.config;
  rep["hw"] = opt.hw;
  rep["workload"] = opt.workload;
  rep["reuse_config"] = opt.cfg;
  const int64_t n = opt.a.rows, k = opt.a.cols, m = opt.b.cols;
  const int64_t useful_macs = n * k * m;

  // 1. Generate (and compare with the checked-in copy, when there is one).
  run.run("generate", [&] {
    fs::remove_all(rtl);
    hw::write_rtl(opt.hw, rtl);
    const fs::path checked_in = fs::path(source_dir()) / "rtl" / res.config;
    json g{{"rtl", rtl.string()}};
    if (fs::exists(checked_in / "manifest.json")) {
      const hw::DriftReport d = hw::check_drift(checked_in);
      g["checked_in"] = checked_in.string();
      g["checked_in_clean"] = d.clean();
      run.log(std::string("rtl/") + res.config + (d.clean() ? ": identical to the generator's output"
                                                            : ": DIFFERS from the generator's output (kaleido drift)"));
    }
    int files = 0;
    for (const auto& e : fs::directory_iterator(rtl)) files += e.path().extension() == ".v";
    g["files"] = files;
    run.log(std::to_string(files) + " Verilog files in " + rtl.string());
    rep["generate"] = g;
  });

  // 2. Lint.
  if (opt.lint) {
    run.run("lint", [&] {
      const std::vector<checks::LintResult> lr = checks::lint_folder(rtl);
      json l = checks::lint_report_json(lr);
      bool clean = true;
      for (const checks::LintResult& x : lr) {
        run.log(x.top + ": " + (x.clean ? "clean" : "NOT clean") + " (" + fmt(x.seconds, 1) + " s)");
        if (!x.clean) run.log(x.output);
        clean = clean && x.clean;
      }
      rep["lint"] = {{"clean", clean}, {"results", l}};
      if (!clean) throw Error("verilator --lint-only -Wall reports warnings (see above)");
    });
  }

  // 3. Golden model: decisions, quality against the exact product, error bound.
  run.run("golden model", [&] {
    const IntReuse r = run_reuse(opt.cfg, opt.a);
    const WideMatrix out = reuse_output(opt.cfg, opt.a, opt.b, r);
    const WideMatrix exact = gemm_exact(opt.a, opt.b);
    const Quality q = compare(out, exact);
    const std::vector<double> bound = error_bound_per_column(opt.cfg, opt.b);
    bool within = true;
    for (int64_t t = 0; t < out.rows; ++t)
      for (int64_t c = 0; c < out.cols; ++c) {
        const double e = std::fabs(static_cast<double>(out.at(t, c)) - static_cast<double>(exact.at(t, c)));
        within = within && e <= bound[static_cast<size_t>(c)];
      }
    const ReuseCounters& ct = r.counters;
    json groups = json::array();
    for (int g = 0; g < r.groups; ++g) groups.push_back(ct.group_ratio(g, n));
    rep["golden"] = {{"reuse_ratio", ct.reuse_ratio()},
                     {"reuse_ratio_per_group", groups},
                     {"macs_issued", ct.macs_issued},
                     {"macs_skipped", ct.macs_skipped},
                     {"useful_macs", useful_macs},
                     {"snr_db", q.snr_db},
                     {"cosine", q.cosine},
                     {"rel_l2", q.rel_l2},
                     {"psnr_db", q.psnr_db},
                     {"psnr_peak", q.peak},
                     {"max_abs_err", q.max_abs_err},
                     {"error_bound_holds", within},
                     {"window_depth_required", r.required_window_depth}};
    run.log("reuse ratio " + fmt(ct.reuse_ratio()) + ", SNR " + fmt(q.snr_db, 2) + " dB, cosine " + fmt(q.cosine, 5) +
            " (PSNR " + fmt(q.psnr_db, 2) + " dB at peak max|A.B| = " + fmt(q.peak, 0) + "), error bound " +
            (within ? "holds" : "VIOLATED"));
    if (!within) throw Error("the golden model's output breaks the closed-loop error bound");
  });

  // 4. Verilator simulation of both modes, bit for bit against the golden model.
  sim::SimResult sr;
  run.run("simulate", [&] {
    sim::SimRequest req;
    req.hw = opt.hw;
    req.fit_hw = false;  // the configuration that is synthesised
    req.cfg = opt.cfg;
    req.a = opt.a;
    req.b = opt.b;
    if (opt.kept_b.rows > 0) req.keep_b = {opt.kept_b};
    req.workload = opt.workload;
    req.seed = opt.tb_seed;
    req.work_dir = opt.work_dir / "sim";
    req.dump_inputs = opt.synth && opt.activity_power;
    sr = sim::run_sim(req, [&](const std::string& s) { run.log(s); });
    rep["simulation"] = sr.to_json();
    res.rtl_hash_simulated = top_rtl_hash(sr.rtl_dir, "kld_top");
    run.log("RTL simulated: " + sr.rtl_dir.string() + ", content hash " + res.rtl_hash_simulated);
    // Fail before synthesis when the generated RTL is not what was simulated.
    check_same_rtl("kld_top", sr.rtl_dir, top_rtl_hash(rtl, "kld_top"), rtl);
    res.bit_exact = sr.bit_exact();
    res.speedup = sr.speedup;
    run.log("bit-exact " + std::string(sr.bit_exact() ? "yes" : "NO") + "; cycles reuse " +
            std::to_string(sr.reuse.cycles) + ", dense " + std::to_string(sr.dense.cycles) + "; speedup " +
            fmt(sr.speedup) + "x (ideal " + fmt(sr.ideal_speedup) + "x)");
    if (!sr.bit_exact())
      throw Error("the RTL does not match the golden model: see " + (opt.work_dir / "sim").string() + "/tb_*.json");
  });

  // 5-6. Synthesis, timing and power.
  ppa::SynthResult top, plain;
  auto synth_options = [&](const std::string& module) {
    ppa::SynthOptions o;
    o.rtl_dir = rtl;
    o.top = module;
    o.liberty = opt.liberty;
    o.clock_period_ns = opt.clock_ns;
    o.out_dir = opt.work_dir / ("synth_" + module);
    o.config_name = res.config;
    o.progress = [&](const std::string& s) { run.log(s); };
    return o;
  };
  if (opt.synth) {
    uint64_t reuse_rows = 0, dense_rows = 0;  // replayed cycles
    run.run("synthesise kld_top", [&] {
      ppa::SynthOptions o = synth_options("kld_top");
      if (opt.activity_power) {
        auto reuse = std::make_shared<ppa::VectorFileStimulus>(sr.reuse.inputs.string());
        auto dense = std::make_shared<ppa::VectorFileStimulus>(sr.dense.inputs.string());
        if (reuse->cycles() <= o.sim_warmup || dense->cycles() <= o.sim_warmup)
          throw Error("the testbench's input dump is shorter than the warm-up of the gate-level replay");
        // The reuse dump is replayed whole. With a kept tile it holds that tile's run too, so the
        // reuse run's figures are a window ending where the testbench had checked it (before the
        // kept tile's B is loaded); without one the replay is the reuse run.
        reuse_rows = sr.kept.empty() ? reuse->cycles() : sr.reuse.checked_cycle;
        dense_rows = dense->cycles();
        if (reuse_rows <= o.sim_warmup || reuse_rows > reuse->cycles())
          throw InternalError("the reuse run's checks end at cycle " + std::to_string(reuse_rows) +
                              ", outside the input dump");
        o.stimulus = reuse;
        o.sim_cycles = reuse->cycles() - o.sim_warmup;
        o.extra_stimuli.push_back({"dense", dense, dense->cycles() - o.sim_warmup});
        if (!sr.kept.empty()) o.extra_stimuli.push_back({"reuse", reuse, reuse_rows - o.sim_warmup});
        // The GEMM alone: the same inputs, counted from the START write to done (the rest, register
        // programming and operand loading, is the same work in both modes).
        std::vector<std::tuple<const char*, const sim::ModeRun*, std::shared_ptr<ppa::VectorFileStimulus>>> gemms{
            {"reuse GEMM", &sr.reuse, reuse}, {"dense GEMM", &sr.dense, dense}};
        if (!sr.kept.empty()) gemms.emplace_back("kept tile GEMM", &sr.kept.front(), reuse);
        for (const auto& [name, run_of, rows] : gemms) {
          const uint64_t start = run_of->start_cycle, end = run_of->end_cycle;
          if (end <= start || end > rows->cycles() || start < o.sim_warmup)
            throw InternalError(std::string(name) + ": START at cycle " + std::to_string(start) + " and done at " +
                                std::to_string(end) + " do not fit the input dump");
          o.extra_stimuli.push_back({name, rows, end - start, static_cast<int64_t>(start)});
        }
        run.log("gate-level replay: reuse " + std::to_string(reuse->cycles()) + " cycles, dense " +
                std::to_string(dense->cycles()) + " cycles");
      }
      top = ppa::run_synthesis_flow(o);
      check_same_rtl("kld_top", sr.rtl_dir, top.rtl_hash, rtl);
      res.rtl_hash_synthesised.emplace_back("kld_top", top.rtl_hash);
      if (opt.activity_power) {
        const auto activity = [&](const std::string& name) -> const ppa::ActivityRun& {
          for (const ppa::ActivityRun& r : top.extra_activity)
            if (r.name == name) return r;
          throw InternalError("the gate-level replay produced no power figure for " + name);
        };
        const double fmax = top.timed ? top.fmax_mhz : 0.0;
        auto energy_of = [&](const sim::ModeRun& run_of, const ppa::PowerReport& p, uint64_t counted,
                             uint64_t replayed) {
          return mode_energy(run_of.cycles, run_of.macs_issued, useful_macs, p, counted, replayed, opt.clock_ns,
                             fmax);
        };
        if (sr.kept.empty()) {
          res.reuse = energy_of(sr.reuse, top.activity, top.toggles.cycles, reuse_rows);
        } else {
          const ppa::ActivityRun& r = activity("reuse");
          res.reuse = energy_of(sr.reuse, r.power, r.cycles, reuse_rows);
        }
        const ppa::ActivityRun &d = activity("dense"), &rg = activity("reuse GEMM"), &dg = activity("dense GEMM");
        res.dense = energy_of(sr.dense, d.power, d.cycles, dense_rows);
        res.reuse_gemm = energy_of(sr.reuse, rg.power, rg.cycles, rg.cycles);
        res.dense_gemm = energy_of(sr.dense, dg.power, dg.cycles, dg.cycles);
        if (!sr.kept.empty()) {
          const ppa::ActivityRun& kg = activity("kept tile GEMM");
          res.kept_gemm = energy_of(sr.kept.front(), kg.power, kg.cycles, kg.cycles);
        }
        // Operand loading: A is written into its banks before START, so none of it is in the GEMM's window.
        const auto a_writes = [](const std::vector<ppa::SramAccessCount>& srams) {
          uint64_t writes = 0;
          for (const ppa::SramAccessCount& c : srams)
            if (c.path.rfind(hw::kABankInstancePrefix, 0) == 0) writes += c.writes;
          return writes;
        };
        res.reuse.a_bank_writes = a_writes(sr.kept.empty() ? top.toggles.srams : activity("reuse").srams);
        res.dense.a_bank_writes = a_writes(d.srams);
        res.reuse_gemm.a_bank_writes = a_writes(rg.srams);
        res.dense_gemm.a_bank_writes = a_writes(dg.srams);
        if (!sr.kept.empty()) res.kept_gemm.a_bank_writes = a_writes(activity("kept tile GEMM").srams);
      }
    });
    if (opt.plain_top) {
      run.run("synthesise kld_plain_top", [&] {
        plain = ppa::run_synthesis_flow(synth_options("kld_plain_top"));
        check_same_rtl("kld_plain_top", sr.rtl_dir, plain.rtl_hash, rtl);
        res.rtl_hash_synthesised.emplace_back("kld_plain_top", plain.rtl_hash);
      });
    }
  }

  // 7. Report.
  run.run("report", [&] {
    fs::create_directories(opt.report_dir);
    const double pes = static_cast<double>(opt.hw.rows) * opt.hw.cols;
    std::string library = "kaleido_generic (generated by scripts/liberty/make_kaleido_generic.py, for relative studies only)";
    if (opt.synth) {
      library = top.library_name;
      for (const std::string& s : top.liberty_sources) library += " " + fs::path(s).filename().string();
      rep["synthesis"] = {{"kld_top", ppa::result_json(top)}};
      write_file_atomic(opt.report_dir / "synth_kld_top.md", ppa::result_markdown(top));
      if (opt.plain_top) {
        rep["synthesis"]["kld_plain_top"] = ppa::result_json(plain);
        write_file_atomic(opt.report_dir / "synth_kld_plain_top.md", ppa::result_markdown(plain));
      }
      rep["energy"] = {{"reuse", energy_json(res.reuse)},
                       {"dense", energy_json(res.dense)},
                       {"definition",
                        "energy = (logic + SRAM power averaged over the gate-level replay of the testbench's inputs) x "
                        "replayed cycles (the whole run: reset, register programming, operand loading, the GEMM) x "
                        "clock period; per useful MAC: / (N*K*M), the MACs of the dense GEMM. Dynamic energy "
                        "(switching, internal, SRAM accesses) is the same at any clock; leakage energy = leakage "
                        "power x run time, so at_fmax is the same run at the period 1000 / Fmax"},
                       {"gemm_phase",
                        {{"reuse", energy_json(res.reuse_gemm)},
                         {"dense", energy_json(res.dense_gemm)},
                         {"kept_tile", res.kept_gemm.measured ? energy_json(res.kept_gemm) : json()},
                         {"definition",
                          "the same replays with toggles and SRAM accesses counted from the START write to done "
                          "(gate_level_cycles_replayed = the counted window): the GEMM without register programming "
                          "and operand loading; kept_tile: the next key tile run with CTRL.KEEP (no detection)"}}}};
    }
    const json& g = rep["golden"];
    const bool timed = opt.synth && top.timed;
    // kld_top's memories as the manifest counts them (sram.kld_top: a formula per role).
    const int64_t sram_bits = hw::sram_bits_total(hw::sram_roles(opt.hw, "kld_top"));
    json headline{{"bit_exact", res.bit_exact},
                  {"speedup", sr.speedup},
                  {"speedup_kept_tile", sr.kept.empty() ? json() : json(static_cast<double>(sr.dense.cycles) /
                                                                          static_cast<double>(sr.kept.front().cycles))},
                  {"ideal_speedup", sr.ideal_speedup},
                  {"reuse_ratio", g["reuse_ratio"]},
                  {"snr_db", g["snr_db"]},
                  {"cosine", g["cosine"]},
                  {"psnr_db", g["psnr_db"]},
                  {"psnr_peak", g["psnr_peak"]},
                  {"sram_bits_total", sram_bits}};
    if (opt.synth) {
      headline["area_mm2"] = top.total_area_um2() * 1e-6;
      headline["logic_area_mm2"] = top.logic_area_um2 * 1e-6;
      headline["sram_area_mm2"] = top.sram_area_um2 * 1e-6;
      if (timed) headline["fmax_mhz"] = top.fmax_mhz;
      if (opt.plain_top) headline["logic_area_overhead_vs_plain"] = top.logic_area_um2 / plain.logic_area_um2 - 1.0;
      if (res.reuse.measured) {
        headline["power_reuse_mw"] = (res.reuse.logic_w + res.reuse.sram_w) * 1e3;
        headline["leakage_reuse_mw"] = res.reuse.leakage_w * 1e3;
        headline["energy_clock_ns"] = opt.clock_ns;
        headline["energy_per_useful_mac_pj"] = {{"reuse", res.reuse.pj_per_useful_mac},
                                                {"dense", res.dense.pj_per_useful_mac}};
        headline["energy_ratio_dense_over_reuse"] = res.dense.energy_j / res.reuse.energy_j;
        headline["energy_ratio_dense_over_reuse_gemm_phase"] = res.dense_gemm.energy_j / res.reuse_gemm.energy_j;
        if (res.kept_gemm.measured)
          headline["energy_ratio_dense_over_kept_tile_gemm_phase"] = res.dense_gemm.energy_j / res.kept_gemm.energy_j;
        if (res.reuse.fmax_clock_ns > 0) {
          headline["fmax_clock_ns"] = res.reuse.fmax_clock_ns;
          headline["energy_per_useful_mac_pj_at_fmax"] = {{"reuse", res.reuse.pj_per_useful_mac_at_fmax},
                                                          {"dense", res.dense.pj_per_useful_mac_at_fmax}};
          headline["energy_ratio_dense_over_reuse_at_fmax"] = res.dense.energy_at_fmax_j / res.reuse.energy_at_fmax_j;
        }
      }
    }
    rep["headline"] = headline;
    json hashes{{"simulated", res.rtl_hash_simulated}, {"synthesised", json::object()},
                {"method",
                 "FNV-1a 64 over the name and bytes of each .v/.sv file the top needs (its module closure), "
                 "in name order (ppa::rtl_content_hash of ppa::rtl_files_for_top)"}};
    for (const auto& [name, hash] : res.rtl_hash_synthesised) hashes["synthesised"][name] = hash;
    rep["rtl_hash"] = hashes;

    // Plots.
    std::vector<std::string> plots;
    auto put = [&](const std::string& name, const std::string& svg_text) {
      write_file_atomic(opt.report_dir / name, svg_text);
      plots.push_back(name);
    };
    {
      svg::PlotSpec s;
      s.title = "Cycles of the workload, " + res.config + " (Verilator, bit-exact run)";
      s.y_label = "cycles";
      svg::Series ser{"cycles", {{0, static_cast<double>(sr.dense.cycles)}, {1, static_cast<double>(sr.reuse.cycles)},
                                 {2, sr.ideal_speedup > 0 ? static_cast<double>(sr.dense.cycles) / sr.ideal_speedup : 0}}};
      put("cycles.svg", svg::bar_plot(s, {"dense", "reuse", "reuse, ideal (skipped MACs free)"}, {ser}));
    }
    {
      svg::PlotSpec s;
      s.title = "Reuse ratio by channel group (golden model)";
      s.y_label = "reuse ratio";
      s.auto_y = false;
      std::vector<std::string> cats;
      svg::Series ser{"reuse ratio", {}};
      for (size_t i = 0; i < g["reuse_ratio_per_group"].size(); ++i) {
        cats.push_back("g" + std::to_string(i));
        ser.points.emplace_back(static_cast<double>(i), g["reuse_ratio_per_group"][i].get<double>());
      }
      put("reuse_groups.svg", svg::bar_plot(s, cats, {ser}));
    }
    if (opt.synth) {
      svg::PlotSpec s;
      s.title = "Logic area by block, kld_top " + res.config + " (" + top.library_name + ", SRAMs apart)";
      s.y_label = "um^2";
      std::vector<std::string> cats;
      svg::Series ser{"area", {}};
      for (const auto& [name, area] : block_areas(top)) {
        cats.push_back(name);
        ser.points.emplace_back(static_cast<double>(cats.size()), area);
      }
      put("area_blocks.svg", svg::bar_plot(s, cats, {ser}));
      if (res.reuse.measured) {
        svg::PlotSpec e;
        e.title = "Energy per useful MAC at " + fmt(opt.clock_ns, 2) + " ns (" + top.library_name +
                  ", gate-level replay, SRAM model)";
        e.y_label = "pJ";
        auto per = [&](const ModeEnergy& me, double part_w) {
          return me.energy_j * (part_w / (me.logic_w + me.sram_w)) / static_cast<double>(useful_macs) * 1e12;
        };
        svg::Series logic{"logic", {{0, per(res.dense, res.dense.logic_w)}, {1, per(res.reuse, res.reuse.logic_w)}}};
        svg::Series sram{"SRAM", {{0, per(res.dense, res.dense.sram_w)}, {1, per(res.reuse, res.reuse.sram_w)}}};
        svg::Series total{"total", {{0, res.dense.pj_per_useful_mac}, {1, res.reuse.pj_per_useful_mac}}};
        put("energy_per_mac.svg", svg::bar_plot(e, {"dense", "reuse"}, {logic, sram, total}));
      }
    }
    rep["plots"] = plots;

    // Markdown.
    std::ostringstream md;
    md << "# Kaleido flow: " << res.config << "\n\n";
    md << "Generated by `kaleido flow` (kaleido " << version() << "). Every figure below names how it was obtained.\n\n";
    md << "## Inputs\n\n";
    md << "- Configuration: " << res.config << " (" << opt.hw.rows << "x" << opt.hw.cols << " PEs, DATA_W "
       << opt.hw.data_w << ", ACC_W " << opt.hw.acc_w << ", group width " << opt.hw.group_w << ", max grid "
       << opt.hw.max_t << "x" << opt.hw.max_h << "x" << opt.hw.max_w << ", K <= " << opt.hw.max_k << ", M <= "
       << opt.hw.max_m << ")\n";
    // The workload as a list a person can read (the full description is in flow.json).
    md << "- Workload:";
    for (auto it = opt.workload.begin(); it != opt.workload.end(); ++it) {
      if (it.value().is_object() || it.value().is_array()) continue;
      md << " " << it.key() << " = " << (it.value().is_string() ? it.value().get<std::string>() : it.value().dump()) << ";";
    }
    md << "\n";
    md << "- GEMM: N = " << n << " tokens (" << opt.cfg.grid.t << "x" << opt.cfg.grid.h << "x" << opt.cfg.grid.w
       << "), K = " << k << ", M = " << m << " (" << useful_macs << " MACs dense)\n";
    md << "- RTL content hash (of the files the top needs): simulated kld_top " << res.rtl_hash_simulated;
    for (const auto& [name, hash] : res.rtl_hash_synthesised) md << ", synthesised " << name << " " << hash;
    md << (res.rtl_hash_synthesised.empty() ? "" : " (each the same files as in the simulated folder: checked)")
       << "\n";
    if (opt.synth)
      md << "- Library: " << library << "; clock target " << fmt(opt.clock_ns, 2) << " ns\n";
    md << "\n## Golden model (" << "gen/golden, closed-loop channel-group reuse)\n\n";
    markdown::Table quality({"reuse ratio", "MACs issued", "MACs skipped", "SNR vs exact (dB)", "cosine",
                             "relative L2 error", "PSNR (dB) at peak max abs exact", "max abs error", "error bound"});
    quality.add_row({fmt(g["reuse_ratio"].get<double>()), num(g["macs_issued"]), num(g["macs_skipped"]),
                     fmt(g["snr_db"].get<double>(), 2), fmt(g["cosine"].get<double>(), 5),
                     fmt(g["rel_l2"].get<double>(), 4),
                     fmt(g["psnr_db"].get<double>(), 2) + " at " + fmt(g["psnr_peak"].get<double>(), 0),
                     num(g["max_abs_err"]), g["error_bound_holds"].get<bool>() ? "holds" : "VIOLATED"});
    md << quality.render() << "\n";
    md << "SNR = signal power of the exact output / mean squared error; PSNR's peak is the largest |exact| "
          "entry, so it reads higher than the SNR by 10 log10(peak^2 / mean square).\n\n";
    md << "Quality is that of this one GEMM ("
       << (opt.workload.contains("what") ? opt.workload["what"].get<std::string>()
                                         : std::string("Out = A.B of the workload's latent tokens"))
       << ") at the chosen thresholds; the trade-off of quality against savings, and the comparison with block-sparse peers on attention, is in "
          "`reports/study/` (kaleido study).\n\n";
    md << "![reuse by group](reuse_groups.svg)\n\n";
    md << "## Simulation (Verilator, testbench tb/ driven by the golden model)\n\n";
    markdown::Table modes({"mode", "bit-exact", "cycles", "schedule formula", "MACs issued", "PE utilisation"});
    modes.add_row({"dense", sr.dense.bit_exact ? "yes" : "NO", std::to_string(sr.dense.cycles),
                   std::to_string(sr.dense.schedule), std::to_string(sr.dense.macs_issued), fmt(sr.utilisation_dense)});
    modes.add_row({"reuse", sr.reuse.bit_exact ? "yes" : "NO", std::to_string(sr.reuse.cycles),
                   std::to_string(sr.reuse.schedule), std::to_string(sr.reuse.macs_issued), fmt(sr.utilisation_reuse)});
    md << modes.render() << "\n";
    md << "Speedup dense/reuse cycles: " << fmt(sr.speedup) << "x measured; " << fmt(sr.ideal_speedup)
       << "x ideal (1 / (1 - skipped fraction), skipped MACs free, no detection or gather cost).\n\n";
    md << "![cycles](cycles.svg)\n\n";
    if (opt.synth) {
      md << "## Synthesis and timing (Yosys, OpenSTA; " << top.library_name << ")\n\n";
      md << "Hierarchical synthesis, recipe `" << top.recipe << "` (" << ppa::synth_recipe(top.recipe).summary
         << "), the " << fmt(top.clock_period_ns) << " ns target as ABC's delay target.\n\n";
      markdown::Table area({"top", "logic area (um^2)", "SRAM area (um^2, SRAM model)", "cells", "worst slack (ns)",
                            "Fmax (MHz)"});
      auto row = [&](const ppa::SynthResult& r) {
        area.add_row({r.top, fmt(r.logic_area_um2, 0), fmt(r.sram_area_um2, 0), std::to_string(r.cells),
                      r.timed ? fmt(r.sta.worst_slack_ns) : "n/a", r.timed ? fmt(r.fmax_mhz, 1) : "n/a"});
      };
      row(top);
      if (opt.plain_top) row(plain);
      md << area.render() << "\n";
      if (opt.plain_top)
        md << "Logic area of the reuse hardware (detector, dispatcher, merge, wider control) against the dense "
              "baseline kld_plain_top of the same size: +"
           << fmt(100.0 * (top.logic_area_um2 / plain.logic_area_um2 - 1.0), 1) << " % logic, SRAM "
           << fmt(top.sram_area_um2, 0) << " vs " << fmt(plain.sram_area_um2, 0) << " um^2.\n\n";
      md << "Per PE (kld_top logic / " << fmt(pes, 0) << " PEs): " << fmt(top.logic_area_um2 / pes, 1) << " um^2.\n\n";
      if (timed)
        md << "Critical path: " << top.sta.path.startpoint << " -> " << top.sta.path.endpoint << ", "
           << fmt(top.sta.path.arrival_ns) << " ns.\n\n";
      md << "![area by block](area_blocks.svg)\n\n";
      md << "Full reports: [synth_kld_top.md](synth_kld_top.md)"
         << (opt.plain_top ? ", [synth_kld_plain_top.md](synth_kld_plain_top.md)" : "") << ".\n\n";
      if (res.reuse.measured) {
        md << "## Power and energy (kaleido power model on the mapped netlist)\n\n";
        md << "Activity: the testbench's per-cycle inputs of each mode replayed on the gate netlist (Verilator, "
              "every net read after each evaluation: gen/ppa/gatelevel_sim.hpp), "
              "toggles counted per net after a "
           << 16 << "-cycle warm-up; SRAM accesses counted in the same replay and costed by the SRAM model; "
           << "power at the " << fmt(opt.clock_ns, 2) << " ns clock target. Energy = average power x replayed "
              "cycles (the whole run: reset, register programming, operand loading, the GEMM with its outputs) x "
              "period. "
              "Useful MACs = N*K*M = " << useful_macs << ", the same for both modes; issued MACs are what the array "
              "computed. Dense mode runs on the same kld_top (its reuse logic idle), not on kld_plain_top.\n\n";
        const std::string at_t = "at " + fmt(opt.clock_ns, 2) + " ns";
        const bool fmax_known = res.reuse.fmax_clock_ns > 0;
        const std::string at_f = fmax_known ? "at Fmax, " + fmt(res.reuse.fmax_clock_ns, 2) + " ns" : "at Fmax";
        markdown::Table energy({"mode", "replayed cycles", "logic power " + at_t + " (mW)",
                                "SRAM power " + at_t + " (mW)", "of which leakage (mW)",
                                "dynamic energy, any clock (nJ)", "energy " + at_t + " (nJ)",
                                "pJ per useful MAC " + at_t, "pJ per issued MAC " + at_t, "energy " + at_f + " (nJ)",
                                "pJ per useful MAC " + at_f});
        for (const auto& [name, e] : {std::pair<std::string, ModeEnergy>{"dense", res.dense}, {"reuse", res.reuse}})
          energy.add_row({name, std::to_string(e.replayed_cycles), fmt(e.logic_w * 1e3), fmt(e.sram_w * 1e3),
                          fmt(e.leakage_w * 1e3), fmt(e.dynamic_energy_j * 1e9), fmt(e.energy_j * 1e9),
                          fmt(e.pj_per_useful_mac, 4), fmt(e.pj_per_issued_mac, 4),
                          fmax_known ? fmt(e.energy_at_fmax_j * 1e9) : "n/a",
                          fmax_known ? fmt(e.pj_per_useful_mac_at_fmax, 4) : "n/a"});
        md << energy.render();
        const auto outside = [](uint64_t replayed, uint64_t gemm) { return replayed > gemm ? replayed - gemm : 0; };
        md << "\nOf the replayed cycles, " << sr.dense.cycles << " (dense) and " << sr.reuse.cycles
           << " (reuse) are the GEMM itself (CYCLES, START to DONE); the other "
           << outside(res.dense.replayed_cycles, sr.dense.cycles) << " and "
           << outside(res.reuse.replayed_cycles, sr.reuse.cycles)
           << " reset the design, program the registers and load A and B: work both modes share, which keeps "
              "the energy ratio below the cycle ratio.\n";
        md << "\nThe GEMM alone (the same replays, toggles and SRAM accesses counted from the START write to "
              "done; the bound when only the array's MACs are saved is the ideal speedup, "
           << fmt(sr.ideal_speedup, 2) << "x):\n\n";
        markdown::Table gemm({"mode", "counted cycles", "energy " + at_t + " (nJ)", "pJ per useful MAC " + at_t,
                              "dynamic energy (nJ)", "pJ per useful MAC " + at_f});
        std::vector<std::pair<std::string, ModeEnergy>> gemm_rows{{"dense", res.dense_gemm}, {"reuse", res.reuse_gemm}};
        if (res.kept_gemm.measured) gemm_rows.emplace_back("reuse, kept tile (CTRL.KEEP)", res.kept_gemm);
        for (const auto& [name, e] : gemm_rows)
          gemm.add_row({name, std::to_string(e.replayed_cycles), fmt(e.energy_j * 1e9), fmt(e.pj_per_useful_mac, 4),
                        fmt(e.dynamic_energy_j * 1e9),
                        fmax_known ? fmt(e.pj_per_useful_mac_at_fmax, 4) : "n/a"});
        const auto ratio = [](double dense_j, double reuse_j) { return fmt(dense_j / reuse_j, 2) + "x"; };
        auto ratio_row = [&](const std::string& name, const ModeEnergy& r) {
          gemm.add_row({name, "", ratio(res.dense_gemm.energy_j, r.energy_j), "",
                        ratio(res.dense_gemm.dynamic_energy_j, r.dynamic_energy_j),
                        fmax_known ? ratio(res.dense_gemm.energy_at_fmax_j, r.energy_at_fmax_j) : "n/a"});
        };
        ratio_row("dense / reuse", res.reuse_gemm);
        if (res.kept_gemm.measured) ratio_row("dense / kept tile", res.kept_gemm);
        md << gemm.render();
        if (res.kept_gemm.measured && !sr.kept.empty())
          md << "\nThe kept tile is the next key tile (B = the next " << opt.b.cols
             << " columns of K^T, the same A), run after the reuse run with CTRL.KEEP: no detection, the compute "
                "lists and root tables of the reuse run; "
             << sr.kept.front().cycles << " cycles (dense / kept tile "
             << fmt(static_cast<double>(sr.dense.cycles) / static_cast<double>(sr.kept.front().cycles), 3)
             << "x), bit-exact against the golden model of its tile. Over a head of many key tiles every tile but "
                "the first is a kept tile.\n";
        md << "\nWhere the GEMM's energy goes (the same windows; pJ per useful MAC " << at_t
           << ", leakage included, as logic / SRAM: each block's cells with the nets they drive, and its "
              "memories with their accesses, leakage and the nets their outputs drive; leakage is paid per "
              "cycle, so it weighs less at a faster clock):\n\n";
        std::vector<markdown::Column> heads{"block"};
        for (const auto& mode : gemm_rows) heads.push_back(mode.first);
        heads.push_back("leakage power (mW)");
        markdown::Table by_block(heads);
        const auto pj = [&](double j) { return fmt(j / static_cast<double>(useful_macs) * 1e12, 3); };
        for (size_t b = 0; b < res.dense_gemm.blocks.size(); ++b) {
          const BlockEnergy& name = res.dense_gemm.blocks[b];
          std::vector<std::string> cells{name.block == "(top)" ? name.module + " (its own cells and memories)"
                                                               : name.block + " (" + name.module + ")"};
          for (const auto& mode : gemm_rows) {
            const std::vector<BlockEnergy>& split = mode.second.blocks;
            if (b >= split.size() || split[b].block != name.block)
              throw InternalError("the GEMM windows split kld_top into different blocks");
            cells.push_back(pj(split[b].logic_j) + " / " + pj(split[b].sram_j));
          }
          cells.push_back(fmt(name.leakage_w * 1e3, 3));
          by_block.add_row(cells);
        }
        std::vector<std::string> total{"total"};
        for (const auto& mode : gemm_rows) total.push_back(fmt(mode.second.pj_per_useful_mac, 3));
        total.push_back(fmt(res.dense_gemm.leakage_w * 1e3, 3));
        by_block.add_row(total);
        md << by_block.render();
        md << "\nDynamic energy (switching, internal, SRAM accesses) is per transition and per access, the same at "
              "any clock; leakage energy is leakage power x run time, so the run at Fmax (the fastest clock the "
              "STA allows) spends less of it.\n";
        md << "\nOpenSTA vectorless power of kld_top (activity " << fmt(top.vectorless_activity) << "): "
           << (top.has_opensta_power ? fmt(top.opensta_power.total_w * 1e3) + " mW logic" : std::string("n/a"))
           << "; kaleido model at the same uniform activity: " << fmt(top.vectorless_opensta_convention.total_w() * 1e3)
           << " mW in OpenSTA 2019's internal-power convention (the one to compare), "
           << fmt(top.vectorless.logic.total_w() * 1e3)
           << " mW in the per-transition convention the activity figures above use (gen/ppa/README.md).\n\n";
        md << "![energy per MAC](energy_per_mac.svg)\n\n";
      }
    }
    markdown::Table stage_times({"stage", "seconds"});
    for (const StageTime& t : run.times) stage_times.add_row({t.name, fmt(t.seconds, 1)});
    md << "## Stage times\n\n" << stage_times.render();
    md << "\nOn a machine with " << std::thread::hardware_concurrency() << " hardware threads.\n";
    rep["stage_times_s"] = json::object();
    for (const StageTime& t : run.times) rep["stage_times_s"][t.name] = t.seconds;

    // The headline, last.
    md << "\n## Headline\n\n";
    md << "- bit-exact (RTL vs golden model, both modes): **" << (res.bit_exact ? "yes" : "NO") << "**\n";
    md << "- speedup: **" << fmt(sr.speedup, 2) << "x** measured (" << fmt(sr.ideal_speedup, 2) << "x ideal) at reuse ratio "
       << fmt(g["reuse_ratio"].get<double>()) << "\n";
    if (!sr.kept.empty())
      md << "- the next key tile with CTRL.KEEP (no detection): "
         << fmt(static_cast<double>(sr.dense.cycles) / static_cast<double>(sr.kept.front().cycles), 2) << "x ("
         << sr.kept.front().cycles << " cycles), bit-exact " << (sr.kept.front().bit_exact ? "yes" : "NO") << "\n";
    md << "- quality: SNR " << fmt(g["snr_db"].get<double>(), 2) << " dB, cosine " << fmt(g["cosine"].get<double>(), 5)
       << " (reuse output vs exact GEMM; PSNR " << fmt(g["psnr_db"].get<double>(), 2) << " dB at peak "
       << fmt(g["psnr_peak"].get<double>(), 0) << ")\n";
    md << "- SRAM: " << sram_bits << " bits (" << fmt(static_cast<double>(sram_bits) / (1 << 20), 2)
       << " Mib) in kld_top's memories (manifest.json, sram.kld_top: one formula per role)\n";
    if (opt.synth) {
      md << "- area: " << fmt(top.total_area_um2() * 1e-6, 3) << " mm^2 (logic " << fmt(top.logic_area_um2 * 1e-6, 3)
         << ", SRAM model " << fmt(top.sram_area_um2 * 1e-6, 3) << "), " << top.library_name << "\n";
      if (timed) md << "- Fmax: " << fmt(top.fmax_mhz, 1) << " MHz (target " << fmt(1000.0 / opt.clock_ns, 0) << " MHz)\n";
      if (res.reuse.measured) {
        md << "- power (reuse mode): " << fmt((res.reuse.logic_w + res.reuse.sram_w) * 1e3, 2) << " mW at "
           << fmt(opt.clock_ns, 2) << " ns, of which leakage " << fmt(res.reuse.leakage_w * 1e3, 2) << " mW\n";
        md << "- energy per useful MAC at the " << fmt(opt.clock_ns, 2) << " ns target clock: reuse "
           << fmt(res.reuse.pj_per_useful_mac, 3) << " pJ, dense " << fmt(res.dense.pj_per_useful_mac, 3)
           << " pJ (dense / reuse energy " << fmt(res.dense.energy_j / res.reuse.energy_j, 2)
           << "x; the bound when only the array's MACs are saved is the ideal speedup, " << fmt(sr.ideal_speedup, 2)
           << "x)\n";
        md << "- the GEMM alone (START to done) at " << fmt(opt.clock_ns, 2) << " ns: reuse "
           << fmt(res.reuse_gemm.pj_per_useful_mac, 3) << " pJ, dense " << fmt(res.dense_gemm.pj_per_useful_mac, 3)
           << " pJ per useful MAC (" << fmt(res.dense_gemm.energy_j / res.reuse_gemm.energy_j, 2) << "x)\n";
        if (res.kept_gemm.measured)
          md << "- the kept tile's GEMM at " << fmt(opt.clock_ns, 2) << " ns: "
             << fmt(res.kept_gemm.pj_per_useful_mac, 3) << " pJ per useful MAC ("
             << fmt(res.dense_gemm.energy_j / res.kept_gemm.energy_j, 2) << "x against the dense GEMM)\n";
        if (res.reuse.fmax_clock_ns > 0)
          md << "- energy per useful MAC at Fmax (" << fmt(res.reuse.fmax_clock_ns, 2) << " ns): reuse "
             << fmt(res.reuse.pj_per_useful_mac_at_fmax, 3) << " pJ, dense " << fmt(res.dense.pj_per_useful_mac_at_fmax, 3)
             << " pJ (" << fmt(res.dense.energy_at_fmax_j / res.reuse.energy_at_fmax_j, 2) << "x)\n";
      }
    }
    res.markdown = opt.report_dir / "flow.md";
    res.json = opt.report_dir / "flow.json";
    write_file_atomic(res.markdown, md.str());
    write_file_atomic(opt.report_dir / "sim.json", sr.to_json().dump(2) + "\n");
    rep["total_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_all).count();
    write_file_atomic(res.json, rep.dump(2) + "\n");
  });
  res.stages = run.times;
  res.report = rep;
  return res;
}

}  // namespace kaleido::flow
