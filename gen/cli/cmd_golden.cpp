// `kaleido golden`: run the golden model on a workload, write golden vectors
// and print a summary.
#include <chrono>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/workload_options.hpp"
#include "common/error.hpp"
#include "golden/gemm.hpp"
#include "golden/metrics.hpp"
#include "golden/quant.hpp"
#include "golden/vectors.hpp"

namespace kaleido::cli {

namespace {

struct GoldenCommand {
  WorkloadOptions w;
  std::string out = "golden.kvec";
  bool json = false;

  void run() const {
    const auto t0 = std::chrono::steady_clock::now();
    ReuseConfig cfg = w.config();
    const SyntheticSpec spec = w.synthetic();
    const Quantized a = quantize(make_latent(spec), cfg.data_w);
    const IntMatrix b = make_int_weights(cfg.channels, cfg.out_cols, cfg.data_w, spec.seed + 1);
    const std::string tau_source = w.apply_thresholds(cfg, a.q, b);

    nlohmann::json workload = spec;
    workload["a_scale"] = a.scale;
    workload["b"] = {{"kind", "uniform"}, {"seed", spec.seed + 1}};
    workload["thresholds"] = tau_source;
    const GoldenVectors v = make_vectors(cfg, a.q, b, workload);
    write_vectors(out, v);

    // Quality against the exact product A . B (no reuse), and the error bound.
    const WideMatrix exact = gemm_exact(a.q, b);
    const WideMatrix approx = gemm_exact(run_reuse(cfg, a.q).a_eff, b);
    const Quality q = compare(approx, exact);
    const std::vector<double> bound = error_bound_per_column(cfg, b);
    int64_t violations = 0;
    for (int64_t i = 0; i < exact.rows; ++i)
      for (int64_t m = 0; m < exact.cols; ++m)
        if (std::abs(static_cast<double>(approx.at(i, m) - exact.at(i, m))) > bound[static_cast<size_t>(m)]) ++violations;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    const ReuseCounters& c = v.counters;
    if (json) {
      nlohmann::json j = {{"vectors", out},
                          {"config", cfg},
                          {"workload", workload},
                          {"counters", counters_json(c)},
                          {"window_depth", v.window_depth},
                          {"required_window_depth", v.required_window_depth},
                          {"quality", quality_json(q)},
                          {"error_bound_violations", violations},
                          {"seconds", secs}};
      std::cout << j.dump(2) << "\n";
      return;
    }
    std::printf("kaleido golden: %s, %dx%dx%d tokens, K=%d, M=%d, DATA_W=%d, ACC_W=%d, Gw=%d, %s policy, %s mode\n",
                out.c_str(), cfg.grid.t, cfg.grid.h, cfg.grid.w, cfg.channels, cfg.out_cols, cfg.data_w, cfg.acc_w,
                cfg.group_w, policy_name(cfg.policy), mode_name(cfg.mode));
    std::printf("  workload      synthetic seed %llu, rho_s %.2f, rho_t %.2f, noise %.2f, static columns %d of %d; "
                "thresholds: %s\n",
                static_cast<unsigned long long>(spec.seed), spec.spatial_corr, spec.temporal_corr, spec.noise,
                spec.static_w, spec.grid.w,
                tau_source.c_str());
    std::printf("  reuse ratio   %.4f (%lld of %lld pairs; by axis t %lld, h %lld, w %lld)\n", c.reuse_ratio(),
                static_cast<long long>(c.reused_pairs), static_cast<long long>(c.pairs),
                static_cast<long long>(c.reused_per_axis[0]), static_cast<long long>(c.reused_per_axis[1]),
                static_cast<long long>(c.reused_per_axis[2]));
    std::printf("  MACs          %lld issued, %lld skipped (%.1f%%)\n", static_cast<long long>(c.macs_issued),
                static_cast<long long>(c.macs_skipped),
                100.0 * static_cast<double>(c.macs_skipped) / static_cast<double>(c.macs_issued + c.macs_skipped));
    std::printf("  window        %lld tokens applied, %lld needed by the scan order, %lld references dropped\n",
                static_cast<long long>(v.window_depth), static_cast<long long>(v.required_window_depth),
                static_cast<long long>(c.refs_beyond_window));
    std::printf("  quality       %s, max abs error %.0f (vs exact A.B)\n", quality_line(q).c_str(), q.max_abs_err);
    std::printf("  error bound   %s (|Out - A.B| <= sum_g tau_g * sum|B|; %lld violations)\n",
                violations == 0 ? "holds" : "VIOLATED", static_cast<long long>(violations));
    std::printf("  time          %.3f s\n", secs);
    if (violations != 0) throw Error("error bound violated: this is a bug in the golden model");
  }
};

}  // namespace

void register_golden(CLI::App& app) {
  auto cmd = std::make_shared<GoldenCommand>();
  CLI::App* sub = app.add_subcommand("golden", "Run the golden model on a synthetic workload; write golden vectors");
  cmd->w.add_to(*sub);
  sub->add_option("--out,-o", cmd->out, "Golden-vector file to write")->capture_default_str();
  sub->add_flag("--json", cmd->json, "Print the summary as JSON");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace kaleido::cli
