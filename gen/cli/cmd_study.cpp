// `kaleido study`: quality of channel-wise reuse versus block-sparse peers on
// real video (docs/study.md).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/workload_options.hpp"
#include "common/error.hpp"
#include "workload/models.hpp"
#include "study/study.hpp"

namespace kaleido::cli {

namespace {

struct StudyCommand {
  study::StudyOptions o;
  std::vector<std::string> methods{"all"};
  std::string tile = "0x0";
  std::string block = "4x4x4";
  std::string out = "out/study";
  bool quiet = false;
  bool list_models = false;
  bool npy_pre_rope = false;
  bool no_projection = false;
  std::string latent_scaling = "global";
  std::vector<std::string> steps{"10", "30", "49"};
  CLI::Option* block_snr_option = nullptr;  // to tell a given --block-snr from its default

  void run() {
    if (list_models) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& m : study::model_shapes()) j.push_back(study::to_json(m));
      std::cout << j.dump(2) << "\n";
      return;
    }
    if (methods.size() == 1 && methods[0] == "all")
      o.methods = study::all_methods();
    else
      o.methods = methods;
    std::tie(o.tile_h, o.tile_w) = parse_pair(tile, "tile");
    o.block = study::parse_block_shape(block);
    o.npy_rope_applied = !npy_pre_rope;
    o.latent_scaling = workload::parse_latent_scaling(latent_scaling);
    o.steps.clear();
    for (const std::string& s : steps) {
      if (s == "all") {
        for (int k = 0; k < o.schedule.steps; ++k) o.steps.push_back(k);
        continue;
      }
      char* end = nullptr;
      const long v = std::strtol(s.c_str(), &end, 10);
      if (s.empty() || *end != '\0') throw ConfigError("steps", s, "must be step numbers or all");
      o.steps.push_back(static_cast<int>(v));
    }
    o.projection = !no_projection;
    if (!o.block_schedule.empty() && block_snr_option->count() > 0)
      throw ConfigError("block-snr", "given", "--block-schedule brings its own knobs and targets: give one of the two");
    o.progress = !quiet;
    study::Progress progress(!quiet);
    const study::StudyResult r = study::run_study(o, progress);
    const auto files = study::write_study(r, out);
    std::printf("kaleido study: %s, %d x %d x %d = %lld tokens, %zu clip(s), %zu step(s), %lld sampled query rows, %.1f s\n",
                o.model.c_str(), r.grid.t, r.grid.h, r.grid.w, static_cast<long long>(r.grid.tokens()), r.clips.size(),
                r.steps.size(), static_cast<long long>(r.sampled_rows), r.seconds);
    std::printf("  no model weights are available: inputs are the documented proxy unless --q-npy was given\n");
    const auto gaps = study::equal_savings_gaps(r);
    std::vector<std::string> proxies;
    for (const auto& st : r.steps)
      if (std::find(proxies.begin(), proxies.end(), st.proxy) == proxies.end()) proxies.push_back(st.proxy);
    for (const std::string& proxy : proxies)
    for (const std::string basis : {"attention", "qk"})
      for (double t : o.targets) {
        double s = 0.0;
        int n = 0, all = 0;
        for (const auto& g : gaps)
          if (g.step != study::kAllSteps && g.proxy == proxy && g.basis == basis && g.target == t &&
              g.reuse_method == "channel-reuse") {
            ++all;
            if (g.valid()) s += g.gap_db, ++n;
          }
        if (all == 0) continue;
        if (n == all)
          std::printf("  %-8s output SNR gap (channel-reuse - best peer) at %2.0f%% %-9s savings: %+.2f dB (mean of %d)\n",
                      proxy.c_str(), 100 * t, basis.c_str(), s / n, n);
        else
          std::printf("  %-8s output SNR gap (channel-reuse - best peer) at %2.0f%% %-9s savings: not reached in %d of %d\n",
                      proxy.c_str(), 100 * t, basis.c_str(), all - n, all);
      }
    for (const auto& b : r.block)
      if (b.gemm == "block")
        std::printf("  %-8s step %s DiT block at %.0f dB per GEMM: MAC-weighted savings %.1f%%, "
                    "block output SNR %.2f dB, cosine %.6f\n",
                    b.proxy.c_str(), std::to_string(b.step).c_str(), b.snr_target, 100.0 * b.savings, b.quality.snr_db,
                    b.quality.cosine);
    std::printf("  wrote %zu files to %s (summary.md, study.json, CSV, SVG)\n", files.size(), out.c_str());
  }
};

}  // namespace

void register_study(CLI::App& app) {
  auto cmd = std::make_shared<StudyCommand>();
  study::StudyOptions& o = cmd->o;
  o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  CLI::App* sub = app.add_subcommand(
      "study", "Quality versus MAC savings of channel-wise reuse and block-sparse peers on real video attention");
  sub->add_option("--clip", o.clips, "Clips: cockatoo (python3-imageio's), lowmotion (made from it), or video paths")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--model", o.model, "Model shape: wan2.1-1.3b, wan2.1-14b, hunyuanvideo, cogvideox-5b")
      ->capture_default_str();
  sub->add_option("--resolution", o.resolution, "480p, 720p (per model) or HxW pixels")->capture_default_str();
  sub->add_option("--frames", o.frames, "Pixel frames, 4k+1 (0 = the model's default)")->capture_default_str();
  sub->add_option("--frame-start", o.frame_start, "First frame of the clip used")->capture_default_str();
  sub->add_option("--frame-step", o.frame_step, "Use every n-th frame")->capture_default_str();
  sub->add_option("--steps", cmd->steps, "Diffusion steps studied (0 = pure noise), or all (every step of the schedule)")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--proxies", o.proxies,
                  "Proxies side by side: raw (x_t as sampled), denoised (Wiener estimate of the clean latent)")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--spectrum-clip", o.spectrum_clip,
                  "Clip whose spectrum the denoised proxy uses (default: cockatoo, frames after those evaluated)");
  sub->add_option("--latent-scaling", cmd->latent_scaling,
                  "Latent scaling: global (one factor, keeps the spectrum), per-channel (z-score, v1), none")
      ->capture_default_str();
  sub->add_option("--num-steps", o.schedule.steps, "Sampling steps of the schedule")->capture_default_str();
  sub->add_option("--shift", o.schedule.shift, "Flow-matching sigma shift")->capture_default_str();
  sub->add_option("--noise-seed", o.noise_seed, "Seed of the diffusion noise")->capture_default_str();
  sub->add_option("--head", o.head, "Head index (seeds its projections)")->capture_default_str();
  sub->add_option("--qk-align", o.qk_align, "Proxy q-k alignment a in [0,1] (docs/study.md)")->capture_default_str();
  sub->add_option("--pos-bias", o.pos_bias, "Proxy positional bias b >= 0 (docs/study.md)")->capture_default_str();
  sub->add_option("--qk-gain", o.qk_gain, "Proxy q/k RMSNorm gain g (softmax sharpness)")->capture_default_str();
  sub->add_option("--methods", cmd->methods, "Methods, or all")->delimiter(',')->capture_default_str();
  sub->add_option("--points", o.points, "Sweep points per method")->capture_default_str();
  sub->add_option("--targets", o.targets, "Savings targets of the equal-savings table")->delimiter(',')->capture_default_str();
  sub->add_option("--rows", o.rows, "Query rows sampled for quality (all if >= tokens)")->capture_default_str();
  sub->add_option("--row-seed", o.row_seed, "Seed of the row sample")->capture_default_str();
  sub->add_option("--threads", o.threads, "Worker threads")->capture_default_str();
  sub->add_option("--group-w", o.group_w, "Reuse channel group width Gw")->capture_default_str();
  sub->add_option("--tile", cmd->tile, "Reuse scan-order tile HxW (0x0 = whole frame)")->capture_default_str();
  sub->add_option("--ref-tau", o.ref_tau, "Threshold (x group RMS) of the per-group reuse table")->capture_default_str();
  sub->add_option("--schedule-snr", o.schedule_snr_db,
                  "Output SNR (dB) the per-step threshold schedule (tau_schedule_*.csv) is calibrated for")
      ->capture_default_str();
  sub->add_option("--schedule-data-w", o.schedule_data_w, "DATA_W of the integer thresholds in the schedule")
      ->capture_default_str();
  sub->add_option("--block", cmd->block, "Block shape TxHxW of the fixed-shape peers")->capture_default_str();
  sub->add_option("--block-reuse-tau", o.block_reuse_tau,
                  "oracle-block-reuse: tau/RMS of the reuse inside the kept tiles (negative: the step's calibrated "
                  "channel-reuse threshold, --schedule-snr)")
      ->capture_default_str();
  sub->add_option("--spade-shortcut", o.spade_shortcut, "SPADE-style high-similarity shortcut threshold")
      ->capture_default_str();
  sub->add_option("--sparge-sim", o.sparge_sim, "SpargeAttn-style self-similarity threshold")->capture_default_str();
  sub->add_option("--calib-clip", o.calib_clip, "ScalingAttention-style calibration clip (default: same clip, other noise)");
  sub->add_option("--q-npy", o.q_npy, "Real activations: Q of shape (N,d) or (heads,N,d)");
  sub->add_option("--k-npy", o.k_npy, "Real activations: K");
  sub->add_option("--v-npy", o.v_npy, "Real activations: V");
  sub->add_option("--hidden-npy", o.hidden_npy,
                  "Real hidden states for --dit-block: the block input X0 of shape (N,D) or (1,N,D), tokens in "
                  "t,h,w scan order, D the model's hidden size (weights stay seeded)");
  sub->add_option("--gemm-npy", o.gemm_npy,
                  "Real input of a later GEMM of the block, with --hidden-npy: out_proj=O.npy (attention output, "
                  "N x D), ffn_up=X1N.npy (FFN input after its LayerNorm, N x D) or ffn_down=H.npy (FFN hidden "
                  "activation after GELU, N x FFN); repeat for several");
  sub->add_option("--npy-grid", o.npy_grid, "Token grid TxHxW of the .npy activations");
  sub->add_option("--npy-head", o.npy_head, "Head of (heads,N,d) activations")->capture_default_str();
  sub->add_flag("--npy-pre-rope", cmd->npy_pre_rope, "The .npy Q and K were dumped before RoPE (apply it here)");
  sub->add_flag("--no-projection", cmd->no_projection, "Skip the study of reuse on the Q, K, V projections' input");
  sub->add_flag("--dit-block", o.dit_block,
                "Also the DiT block table: reuse on every GEMM of one block (QKV, Q K^T, P V, output projection, FFN "
                "up and down), block_gemms.csv; at most 8192 tokens");
  cmd->block_snr_option = sub->add_option("--block-snr", o.block_snr,
                  "Per-GEMM output SNR targets (dB) the block's thresholds are calibrated for, one table each")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--block-schedule", o.block_schedule,
                  "Run the DiT block at the knobs of this block schedule (block_schedule_*.json) instead of "
                  "calibrating: every entry of each studied step");
  sub->add_option("--block-cols", o.block_cols,
                  "Output columns sampled per GEMM for the block's quality (rows: --rows)")
      ->capture_default_str();
  sub->add_option("--out,-o", cmd->out, "Output folder")->capture_default_str();
  sub->add_flag("--quiet,-q", cmd->quiet, "No progress lines");
  sub->add_flag("--list-models", cmd->list_models, "Print the model shapes as JSON and exit");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace kaleido::cli
