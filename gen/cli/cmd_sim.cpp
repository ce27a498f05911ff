// `kaleido sim`: the workload on the generated RTL in reuse and dense mode.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/hw_options.hpp"
#include "hw/schedule.hpp"
#include "cli/workload_options.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "sim/simulate.hpp"

namespace kaleido::cli {

namespace {

struct SimCommand {
  CLI::App* sub = nullptr;
  HwOptions hw;
  WorkloadOptions w;
  WorkloadSource source{"synthetic"};
  std::string out = "out/sim";
  uint64_t tb_seed = 1;
  double stall = 0.0;
  std::string trace, trace_window;
  bool json = false;
  bool plain = false;

  // The reuse run's stall cycles by cause, and a hint when the detector starved the passes or the
  // passes waited for the gather (the bank of the m-tile before: the gather-bound regime).
  static void print_reuse_stalls(const sim::SimResult& r, int groups, int lanes_needed, int gather_w_needed) {
    const nlohmann::json st = r.reuse.tb.value("stalls", nlohmann::json::object());
    auto n = [&](const char* key) { return static_cast<long long>(st.value(key, int64_t{0})); };
    std::printf("  stalls (reuse)  detector-starved %lld, bank conflict %lld, output %lld, weight load %lld, "
                "trace %lld cycles\n",
                n("detector_starved"), n("bank_conflict"), n("output"), n("weight_load"), n("trace"));
    const long long conflict = n("bank_conflict");
    if (conflict * 100 > r.reuse.cycles) {  // over 1 %
      std::printf("  note            the passes waited %lld cycles (%.1f %%) for the gather of the m-tile before: "
                  "GATHER_W = %d tokens a cycle are slower than the passes at this reuse; ",
                  conflict, 100.0 * static_cast<double>(conflict) / static_cast<double>(r.reuse.cycles),
                  r.hw.gather_w);
      if (gather_w_needed == 0)
        std::printf("no GATHER_W the generator builds keeps up\n");
      else if (gather_w_needed > r.hw.gather_w)
        std::printf("GATHER_W %d keeps up (--gather-w %d; docs/hardware.md, \"Cycle count\")\n", gather_w_needed,
                    gather_w_needed);
      else
        std::printf("a wider gather would not help by the rule (the waits follow each m-tile's landing)\n");
    }
    const long long starved = n("detector_starved");
    if (starved * 100 <= r.reuse.cycles) return;  // under 1 %: nothing to act on
    const int lanes = r.hw.det_lanes(), rounds = hw::detection_rounds(groups, lanes, r.hw.lane_groups);
    std::printf("  note            the passes waited %lld cycles (%.1f %%) for the detector: %d lanes decide %d "
                "groups in %d rounds of N cycles; ",
                starved, 100.0 * static_cast<double>(starved) / static_cast<double>(r.reuse.cycles), lanes, groups,
                rounds);
    if (lanes_needed == 0)
      std::printf("at this reuse no lane count keeps up (one round is longer than the first m-tile's passes)\n");
    else if (lanes_needed > lanes)
      std::printf("%d lanes keep up at this reuse (--lanes %d; docs/hardware.md, \"Detector lanes sized by the "
                  "schedule\")\n", lanes_needed, lanes_needed);
    else
      std::printf("more lanes would not shorten the rounds enough to matter here\n");
  }

  void run() {
    const auto t0 = std::chrono::steady_clock::now();
    sim::SimRequest req;
    const std::string kind = source.resolve(*sub, hw);
    req.hw = hw.config_to_fit();  // sim::simulate validates it once sized to the workload
    req.hw_given = hw.given_keys(*sub);
    WorkloadOptions wo = w;
    derive_algorithm_widths(*sub, req.hw, wo.data_w, wo.acc_w, wo.group_w);
    hw::check_algorithm_widths(req.hw, wo.data_w, wo.acc_w, wo.group_w);  // before the workload is prepared
    PreparedWorkload pw = source.prepare(*sub, wo, req.hw, kind);
    req.cfg = pw.cfg;
    req.a = std::move(pw.a);
    req.b = std::move(pw.b);
    req.keep_b = std::move(pw.more_b);
    req.workload = pw.description;
    req.seed = tb_seed;
    req.stall = stall;
    req.trace = trace;
    req.trace_window = trace_window;
    req.work_dir = out;
    req.plain = plain;
    const sim::SimResult r = sim::run_sim(req, [this](const std::string& s) {
      if (!json) std::fprintf(stderr, "kaleido sim: %s\n", s.c_str());
    });
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    nlohmann::json j = r.to_json();
    // The fewest lanes whose detection keeps up with this run's reuse (0: none does).
    const int lanes_needed = r.reuse.ran ? hw::lanes_to_keep_up(r.hw, req.cfg.groups(), r.skipped_fraction) : 0;
    if (r.reuse.ran) j["lanes_to_keep_up"] = lanes_needed;
    // The narrowest gather that keeps up with this run's reuse (0: none the generator builds).
    const int gather_w_needed =
        r.reuse.ran ? hw::gather_w_to_keep_up(r.hw, req.cfg.channels, r.skipped_fraction) : 0;
    if (r.reuse.ran) j["gather_w_to_keep_up"] = gather_w_needed;
    j["workload"] = req.workload;
    j["reuse_config"] = req.cfg;
    j["seconds"] = secs;
    write_file_atomic(std::filesystem::path(out) / "sim.json", j.dump(2) + "\n");
    if (json) {
      std::cout << j.dump(2) << "\n";
    } else {
      std::printf("kaleido sim: %s, %dx%dx%d tokens, K=%d, M=%d (%s)\n", r.hw.name().c_str(), req.cfg.grid.t,
                  req.cfg.grid.h, req.cfg.grid.w, req.cfg.channels, req.cfg.out_cols,
                  req.workload.value("kind", "synthetic").c_str());
      int64_t outputs = r.reuse.compared_outputs + r.dense.compared_outputs + r.plain.compared_outputs;
      for (const sim::ModeRun& k : r.kept) outputs += k.compared_outputs;  // every key tile's outputs
      std::printf("  bit-exact       %s (%lld outputs, %lld decisions compared)\n", r.bit_exact() ? "yes" : "NO",
                  static_cast<long long>(outputs), static_cast<long long>(r.reuse.compared_decisions));
      std::printf("  cycles          reuse %lld, dense %lld (stall %lld / %lld)\n", static_cast<long long>(r.reuse.cycles),
                  static_cast<long long>(r.dense.cycles), static_cast<long long>(r.reuse.stall),
                  static_cast<long long>(r.dense.stall));
      std::printf("  speedup         %.3fx measured, %.3fx ideal (1/(1-%.3f skipped)), achieved/ideal %.3f\n", r.speedup,
                  r.ideal_speedup, r.skipped_fraction, r.ideal_speedup > 0 ? r.speedup / r.ideal_speedup : 0.0);
      std::printf("  PE utilisation  reuse %.3f, dense %.3f\n", r.utilisation_reuse, r.utilisation_dense);
      if (!r.segment_utilisation_reuse.empty()) {
        std::printf("  segments        issue in");
        for (size_t s = 0; s < r.segment_utilisation_reuse.size(); ++s)
          std::printf("%s %.3f", s ? "," : "", r.segment_utilisation_reuse[s]);
        std::printf(" of the reuse run's cycles (segment 0 first)\n");
      }
      if (r.reuse.ran) print_reuse_stalls(r, req.cfg.groups(), lanes_needed, gather_w_needed);
      if (!r.kept.empty()) {
        int64_t lo = r.kept.front().cycles, hi = lo;
        size_t exact = 0;
        for (const sim::ModeRun& k : r.kept) {
          lo = std::min(lo, k.cycles);
          hi = std::max(hi, k.cycles);
          exact += k.bit_exact ? 1 : 0;
        }
        std::printf("  kept tiles      %zu with CTRL.KEEP (no detection), %zu bit-exact, %lld to %lld cycles each\n",
                    r.kept.size(), exact, static_cast<long long>(lo), static_cast<long long>(hi));
        std::printf("  all %zu tiles   reuse %lld cycles (detection once), dense %lld: %.3fx\n", r.kept.size() + 1,
                    static_cast<long long>(r.tiles_reuse_cycles), static_cast<long long>(r.tiles_dense_cycles),
                    r.tiles_speedup);
      }
      if (r.plain.ran)
        std::printf("  kld_plain_top   dense %lld cycles, PE utilisation %.3f (kld_top dense / plain cycles %.4f)\n",
                    static_cast<long long>(r.plain.cycles), r.utilisation_plain,
                    r.plain.cycles > 0 ? static_cast<double>(r.dense.cycles) / static_cast<double>(r.plain.cycles) : 0.0);
      std::printf("  build           %s (%.1f s); report %s/sim.json; %.1f s in all\n",
                  r.build_cached ? "cached" : "built", r.build_seconds, out.c_str(), secs);
    }
    if (!r.bit_exact()) throw Error("the RTL does not match the golden model: see " + out + "/tb_*.json");
  }
};

}  // namespace

void register_sim(CLI::App& app) {
  auto cmd = std::make_shared<SimCommand>();
  CLI::App* sub = app.add_subcommand(
      "sim", "Run a workload on the generated RTL (Verilator), reuse and dense mode; MAX_T/H/W/K/M and "
             "WIN_CAP fit the workload unless given");
  cmd->sub = sub;
  cmd->hw.add_to(*sub);
  cmd->w.add_to(*sub);
  cmd->source.add_to(*sub);
  sub->add_option("--key-tiles", cmd->source.key_tiles,
                  "qk: key tiles of M keys to run: the first detects, each further one runs with CTRL.KEEP on its "
                  "decisions (keys streamed; 0: every whole tile)")
      ->capture_default_str();
  sub->add_option("--out,-o", cmd->out, "Folder for vectors and reports")->capture_default_str();
  sub->add_option("--tb-seed", cmd->tb_seed, "Seed of the testbench's random stalls")->capture_default_str();
  sub->add_option("--stall", cmd->stall, "Probability that a stream is stalled in a cycle")->capture_default_str();
  sub->add_option("--trace", cmd->trace, "Write an FST waveform of the reuse run");
  sub->add_option("--trace-window", cmd->trace_window, "Cycles FROM:TO of the waveform");
  sub->add_flag("--json", cmd->json, "Print the report as JSON");
  sub->add_flag("--plain", cmd->plain,
                "Also run the dense GEMM on kld_plain_top, the dense baseline of the same size (cycles, PE utilisation)");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace kaleido::cli
