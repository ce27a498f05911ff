// The quality study (issue 3): on real clips and several diffusion steps,
// every method over a range of its knob, quality of the attention output and
// of Q K^T against exact versus MAC savings, a comparison at equal savings,
// and channel-wise reuse ratios by group, axis and step.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "study/blocks.hpp"
#include "study/dit_block.hpp"
#include "workload/latent.hpp"
#include "study/methods.hpp"
#include "study/progress.hpp"

namespace kaleido::study {

// Clips, the latent proxy and the model shapes live in gen/workload (shared with the simulator).
using namespace kaleido::workload;

// Every method the study knows, in report order.
const std::vector<std::string>& all_methods();
// The peers the equal-savings gap is taken against.
bool is_peer(const std::string& method);
// The all-axes adaptive reuse variants, one per group distance (max, l1, l2), compared with rope-orthogonal
// channel-reuse at equal savings and at the same output SNR.
bool is_distance_variant(const std::string& method);

struct StudyOptions {
  std::vector<std::string> clips{"cockatoo"};  // "cockatoo", "lowmotion", or a video path
  std::string model = "wan2.1-1.3b";
  std::string resolution = "480p";
  int frames = 0;  // pixel frames; 0 = the model's default clip length
  int frame_start = 0;
  int frame_step = 1;
  std::vector<int> steps{10, 30, 49};
  // Proxies evaluated side by side: "raw" (x_t as sampled, pessimistic) and "denoised" (the Wiener estimate
  // E[x0 | x_t], optimistic), see workload/denoise.hpp.
  std::vector<std::string> proxies{"raw", "denoised"};
  // Where the denoised proxy's spectrum comes from: "" = cockatoo frames after those evaluated (a clip other
  // than the one evaluated), or a clip name/path.
  std::string spectrum_clip;
  LatentScaling latent_scaling = LatentScaling::Global;
  FlowSchedule schedule;
  uint64_t noise_seed = 7;
  int head = 0;  // seeds the head's projections
  double qk_align = 0.5;  // proxy defaults: see docs/study.md for how they were chosen
  double pos_bias = 1.0;
  double qk_gain = 1.5;
  std::vector<std::string> methods = all_methods();
  int points = 6;  // sweep points per method
  std::vector<double> targets{0.5, 0.75, 0.85};
  int rows = 512;  // sampled query rows for quality
  uint64_t row_seed = 11;
  int threads = 2;
  int group_w = 8;
  int tile_h = 0, tile_w = 0;
  double ref_tau = 2.0;  // threshold (in group RMS) of the per-group reuse table
  // The threshold schedule: per step, the largest channel-reuse threshold keeping the attention output's SNR
  // at or above schedule_snr_db, written as integer thresholds for DATA_W = schedule_data_w (Q quantised
  // symmetrically per step) in tau_schedule_<clip>_<proxy>.csv, a file `kaleido golden --tau-schedule` reads.
  double schedule_snr_db = 30.0;
  int schedule_data_w = 8;
  BlockShape block{4, 4, 4};
  // oracle-block-reuse: tau/RMS of channel-reuse inside the oracle mask's kept tiles; negative = the step's
  // calibrated channel-reuse knob (output SNR >= schedule_snr_db on its own).
  double block_reuse_tau = -1.0;
  double spade_shortcut = 0.95;
  double sparge_sim = 0.0;
  std::string calib_clip;  // ScalingAttention-style calibration clip; "" = same clip, other noise
  // Real activations instead of the proxy (one "step" labelled npy).
  std::string q_npy, k_npy, v_npy;
  std::string hidden_npy;  // the DiT block's input X0 (N x D), with dit_block
  std::vector<std::string> gemm_npy;  // "<gemm>=<file>": real inputs of later GEMMs (DitRealInputs), with hidden_npy
  std::string npy_grid;  // TxHxW
  int npy_head = 0;
  bool npy_rope_applied = true;
  bool projection = true;  // also study reuse on the Q, K, V projections' input
  // The DiT block table (dit_block.hpp): every GEMM of one block with reuse, thresholds per GEMM (per head for
  // Q K^T and P V) calibrated to each per-GEMM output SNR target; quality on block_rows x block_cols samples.
  bool dit_block = false;
  std::vector<double> block_snr{30.0};
  std::string block_schedule;  // knobs from a file (KnobSchedule) instead of calibrating to block_snr
  int block_cols = 256;
  bool progress = true;

  void validate() const;
};

struct PointRecord {
  std::string clip;
  std::string proxy;  // "raw", "denoised", or "npy" for real activations
  int step = 0;
  double sigma = 0.0;
  std::string method, family, knob_name;
  double knob = 0.0;
  std::string role;   // "sweep" or "target"
  std::string basis;  // for targets: "attention" or "qk"
  double target = 0.0;
  Execution exec;
  AttentionQuality quality;
  nlohmann::json detail;
};

struct TargetRecord {
  std::string clip, proxy;
  int step = 0;
  double sigma = 0.0;
  std::string basis;  // "attention": Q K^T + P V MACs; "qk": Q K^T MACs only
  double target = 0.0;
  std::string method;
  bool reached = false;
  bool interpolated = false;
  double achieved = 0.0;
  double knob = 0.0;
  // Of the attention output and of Q K^T; PSNR's peak is max |exact| over the sampled rows (out_peak, scores_peak).
  double snr_out = 0.0, rel_l2_out = 0.0, cos_out = 0.0, psnr_out = 0.0, out_peak = 0.0;
  double snr_scores = 0.0, cos_scores = 0.0, psnr_scores = 0.0, scores_peak = 0.0;
};

struct StepRecord {
  std::string clip, proxy;
  int step = 0;
  double sigma = 0.0;
  double progress = 0.0;
  std::string inputs;       // how Q, K, V were made
  double keys_for_90 = 0.0;  // mean fraction of keys holding 90% of a row's attention (exact)
  double local_mass = 0.0;   // mean attention mass in a centred window of 15% of the grid
  std::array<double, 3> latent_corr{};  // neighbour correlation t/h/w of the proxy's latent (pooled by energy)
  double seconds = 0.0;
  nlohmann::json reuse_at_ref;  // channel-reuse detail at ref_tau
  double ref_tau = 0.0;
  // Calibrated for the output SNR target (StudyOptions::schedule_snr_db).
  struct Calibrated {
    double knob = 0.0, snr_out = 0.0, cos_out = 0.0, qk_savings = 0.0, q_scale = 0.0;
    std::vector<double> tau;          // float thresholds per group
    std::vector<uint32_t> tau_int;    // the same in Q's DATA_W integer units (floor)
  } calibrated;
  // Q-only reuse at the same output-error target (schedule_snr_db): channel-reuse (rope-orthogonal, max) and each
  // all-axes adaptive distance variant that was run, at its largest knob keeping the attention output's SNR.
  struct AtSnr {
    std::string method;
    double knob = 0.0, snr_out = 0.0, cos_out = 0.0, qk_savings = 0.0, savings = 0.0;
  };
  std::vector<AtSnr> at_snr;
  double block_reuse_tau = 0.0;  // tau/RMS of oracle-block-reuse at this step
};

// Channel-wise reuse on the input of the Q, K, V projections (the token
// features, no RoPE, so every axis is allowed): savings of that GEMM, quality
// of its V output and of the attention output built from the reused projections.
struct ProjectionRecord {
  std::string clip, proxy;
  int step = 0;
  double sigma = 0.0;
  std::string role;  // "sweep" or "target"
  double target = 0.0;
  double knob = 0.0;
  double savings = 0.0;  // of the projection GEMM's MACs (N x 4C x 3d)
  std::array<double, 3> by_axis{};
  Quality v_proj;             // V = f W_v against exact
  AttentionQuality attention;  // attention output from reused Q, K, V
};

struct ClipRecord {
  std::string name, source;
  int width = 0, height = 0, frames = 0;
  double fps = 0.0;
};

struct StudyResult {
  StudyOptions options;
  nlohmann::json model;
  Grid grid;
  std::vector<ClipRecord> clips;
  std::vector<StepRecord> steps;
  std::vector<PointRecord> points;
  std::vector<TargetRecord> targets;
  std::vector<ProjectionRecord> projection;
  std::vector<BlockRecord> block;  // the DiT block table (StudyOptions::block)
  int64_t sampled_rows = 0;
  double seconds = 0.0;
  std::string proxy_statement;
  std::string spectrum_source;  // the denoised proxy's spectrum clip and frames
  std::vector<std::string> skipped;  // methods not run, and why
};

// The valid proxy names.
bool is_proxy(const std::string& name);

StudyResult run_study(const StudyOptions& opt, Progress& progress);

// At each (clip, step, basis, target): a channel-wise reuse variant's SNR of
// the attention output minus the best peer's (the five block-sparse and oracle-block
// "-style" methods), where both reach the target. (Both are measured against
// the same exact rows, so the PSNR gap is the same number.)
struct GapRecord {
  std::string clip, proxy;
  int step = 0;
  double sigma = 0.0;
  std::string basis;
  double target = 0.0;
  std::string reuse_method;
  bool reuse_reached = false;
  double reuse_snr = 0.0, reuse_psnr = 0.0;
  std::string best_peer;  // "" when no peer reaches the target
  double best_peer_snr = 0.0, best_peer_psnr = 0.0;
  double gap_db = 0.0;  // meaningful when both reached
  bool valid() const { return reuse_reached && !best_peer.empty(); }
};
// Per (clip, proxy, step), and, when a clip and proxy have several steps, a
// row with step kAllSteps: the mean SNR over the steps (reuse against the peer
// with the best mean), valid only when every step reached the target.
constexpr int kAllSteps = -2;
std::vector<GapRecord> equal_savings_gaps(const StudyResult& r);

// Whole-run averages per clip, proxy, method, basis and target over the steps studied (every step with
// --steps all): mean achieved savings (MACs are equal at every step, so this is the MAC-weighted mean),
// mean SNR and cosine of the attention output and of Q K^T, and how many steps reached the target.
nlohmann::json trajectory_json(const StudyResult& r);

// CSV, JSON, Markdown and SVG files into `dir` (created if missing).
std::vector<std::string> write_study(const StudyResult& r, const std::string& dir);

}  // namespace kaleido::study
