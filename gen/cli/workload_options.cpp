#include "cli/workload_options.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "common/error.hpp"
#include "common/format.hpp"
#include "golden/quant.hpp"
#include "golden/threshold.hpp"
#include "sim/clip_workload.hpp"
#include "workload/models.hpp"

namespace kaleido::cli {

std::vector<long> parse_list(const std::string& s, char sep, const char* what) {
  std::vector<long> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0') throw ConfigError(what, s, "expected integers separated by '" + std::string(1, sep) + "'");
    out.push_back(v);
  }
  return out;
}

Grid parse_grid(const std::string& s) {
  const auto v = parse_list(s, 'x', "grid");
  if (v.size() != 3) throw ConfigError("grid", s, "must be TxHxW, for example 4x8x8");
  for (long x : v)
    if (x <= 0) throw ConfigError("grid", s, "T, H and W must be at least 1");
  return {static_cast<int>(v[0]), static_cast<int>(v[1]), static_cast<int>(v[2])};
}

std::pair<int, int> parse_pair(const std::string& s, const char* what) {
  const auto v = parse_list(s, 'x', what);
  if (v.size() != 2) throw ConfigError(what, s, "must be AxB, for example 4x4");
  return {static_cast<int>(v[0]), static_cast<int>(v[1])};
}

void WorkloadOptions::add_to(CLI::App& cmd) {
  cmd.add_option("--grid", grid, "Token grid TxHxW")->capture_default_str();
  cmd.add_option("--channels,-K", channels, "Channels K (reduction dimension)")->capture_default_str();
  cmd.add_option("--out-cols,-M", out_cols, "Output columns M")->capture_default_str();
  cmd.add_option("--data-w", data_w, "DATA_W: signed operand bits (4..16)")->capture_default_str();
  cmd.add_option("--acc-w", acc_w, "ACC_W: accumulator bits (2*DATA_W..64), wraps")->capture_default_str();
  cmd.add_option("--group-w", group_w, "Gw: channel group width (divides K)")->capture_default_str();
  cmd.add_option("--band", band, "RoPE band split: none, wan2.1, hunyuan, cogvideox, or T,H,W sizes")
      ->capture_default_str();
  cmd.add_option("--policy", policy, "Reference policy: rope-orthogonal, fixed, adaptive")->capture_default_str();
  cmd.add_option("--axes", axes, "Axis order of the fixed policy and of token-level reuse, e.g. t,h,w")
      ->capture_default_str();
  cmd.add_option("--mode", mode, "channel (the algorithm), dense, or token (token-level baseline)")
      ->capture_default_str();
  cmd.add_option("--distance", distance,
                 "Group distance: max (what the RTL detector computes); l1 and l2 are for `kaleido study` only")
      ->capture_default_str();
  cmd.add_option("--tile", tile, "Scan-order tile HxW (0x0 = whole frame)")->capture_default_str();
  cmd.add_option("--window", window, "Reference window depth in tokens (0 = what the scan order needs)")
      ->capture_default_str();
  cmd.add_option("--tau", tau,
                 "Threshold: one value for all groups, or one per group (comma-separated); default: calibrated "
                 "for output SNR " + std::to_string(static_cast<int>(kDefaultTargetSnrDb)) + " dB");
  cmd.add_option("--tau-schedule", tau_schedule, "Threshold table file (CSV or JSON), a row per diffusion step");
  cmd.add_option("--block-schedule", block_schedule,
                 "Block threshold schedule (block_schedule_*.json of `kaleido study --dit-block`): thresholds knob x "
                 "RMS of each group of A, the knob of --gemm, --head at --step");
  cmd.add_option("--gemm", schedule_gemm, "--block-schedule: the GEMM (qkv, qk, pv, out_proj, ffn_up, ffn_down)")
      ->capture_default_str();
  cmd.add_option("--head", schedule_head, "--block-schedule: the head of qk or pv (0 for the others)")
      ->capture_default_str();
  cmd.add_option("--schedule-snr", schedule_snr,
                 "--block-schedule: the SNR target (dB) of the knobs, when the step has several");
  cmd.add_option("--step", step, "Diffusion step: the row of --tau-schedule, or a step of --block-schedule")
      ->capture_default_str();
  cmd.add_option("--target-reuse", target_reuse, "Calibrate per-group thresholds for this reuse ratio (0..1)");
  cmd.add_option("--target-psnr", target_psnr, "Calibrate one threshold for this output PSNR (peak max |A.B|) in dB");
  cmd.add_option("--target-snr", target_snr, "Calibrate one threshold for this output SNR (signal power / MSE) in dB");
  cmd.add_option("--seed", seed, "Workload seed")->capture_default_str();
  cmd.add_option("--spatial-corr", spatial_corr, "Synthetic spatial correlation in [0,1)")->capture_default_str();
  cmd.add_option("--temporal-corr", temporal_corr, "Synthetic temporal correlation in [0,1]")->capture_default_str();
  cmd.add_option("--noise", noise, "Synthetic diffusion noise level sigma in [0,1]")->capture_default_str();
  cmd.add_option("--static-w", static_w, "Synthetic: columns of static background (-1: half the grid width)")
      ->capture_default_str();
}

ReuseConfig WorkloadOptions::config() const {
  ReuseConfig c;
  c.grid = parse_grid(grid);
  c.channels = channels;
  c.out_cols = out_cols;
  c.data_w = data_w;
  c.acc_w = acc_w;
  c.group_w = group_w;
  c.band = parse_band_split(band);
  c.policy = parse_policy(policy);
  c.fixed_axes.clear();
  std::stringstream ss(axes);
  std::string a;
  while (std::getline(ss, a, ',')) c.fixed_axes.push_back(parse_axis(a));
  c.mode = parse_mode(mode);
  std::tie(c.tile_h, c.tile_w) = parse_pair(tile, "tile");
  c.window_depth = window;
  c.distance = parse_distance(distance);
  c.validate_for_hardware();
  return c;
}

SyntheticSpec WorkloadOptions::synthetic() const {
  SyntheticSpec s;
  s.grid = parse_grid(grid);
  s.channels = channels;
  s.seed = seed;
  s.spatial_corr = spatial_corr;
  s.temporal_corr = temporal_corr;
  s.noise = noise;
  s.static_w = static_w < 0 ? s.grid.w / 2 : static_w;
  s.validate();
  return s;
}

std::string WorkloadOptions::apply_thresholds(ReuseConfig& cfg, const IntMatrix& a, const IntMatrix& b) const {
  const int sources = (target_reuse >= 0.0) + (target_psnr >= 0.0) + (target_snr >= 0.0) + !tau_schedule.empty() +
                      !block_schedule.empty() + !tau.empty();
  if (sources > 1)
    throw ConfigError("thresholds", "several sources",
                      "give only one of --tau, --tau-schedule, --block-schedule, --target-reuse, --target-psnr, "
                      "--target-snr");
  const auto G = static_cast<size_t>(cfg.groups());
  if (target_reuse >= 0.0) {
    const Calibration c = calibrate_reuse_ratio(cfg, a, target_reuse);
    cfg.tau = c.tau;
    return "calibrated per group for reuse ratio " + std::to_string(target_reuse);
  }
  if (target_snr >= 0.0 || sources == 0) {
    const double db = sources == 0 ? kDefaultTargetSnrDb : target_snr;
    const Calibration c = calibrate_snr(cfg, a, b, db);
    cfg.tau = c.tau;
    return std::string(sources == 0 ? "default: " : "") + "calibrated for output SNR " + fixed(db, 1) + " dB (tau " +
           std::to_string(c.tau.front()) + ", reached " + fixed(c.achieved, 1) + " dB)";
  }
  if (target_psnr >= 0.0) {
    const Calibration c = calibrate_psnr(cfg, a, b, target_psnr);
    cfg.tau = c.tau;
    return "calibrated for PSNR " + std::to_string(target_psnr) + " dB";
  }
  if (!tau_schedule.empty()) {
    const ThresholdSchedule s = ThresholdSchedule::load(tau_schedule);
    s.validate(cfg.groups(), cfg.data_w);
    cfg.tau = s.at_step(step);
    return "schedule " + tau_schedule + ", step " + std::to_string(step);
  }
  if (!block_schedule.empty()) {
    const KnobSchedule s = KnobSchedule::load(block_schedule);
    s.check_decisions(cfg.group_w, policy_name(cfg.policy), distance_name(cfg.distance), block_schedule);
    const double knob = s.knob(schedule_gemm, schedule_head, step, schedule_snr);
    cfg.tau = thresholds_from_knob(cfg, a, knob);
    return "block schedule " + block_schedule + ", step " + std::to_string(step) + ", " + schedule_gemm + " head " +
           std::to_string(schedule_head) + ": knob " + fixed(knob, 4) + " x RMS of each group";
  }
  std::vector<uint32_t> t;
  std::stringstream ss(tau);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0) throw ConfigError("tau", tau, "thresholds are non-negative integers");
    t.push_back(static_cast<uint32_t>(v));
  }
  if (t.size() == 1) t.assign(G, t[0]);
  cfg.tau = t;
  cfg.validate();
  return "--tau " + tau;
}

PreparedWorkload prepare_workload(const WorkloadOptions& w, const std::string& clip, int diffusion_step) {
  PreparedWorkload p;
  p.cfg = w.config();
  if (clip.empty()) {
    const SyntheticSpec spec = w.synthetic();
    p.a = quantize(make_latent(spec), p.cfg.data_w).q;
    p.b = make_int_weights(p.cfg.channels, p.cfg.out_cols, p.cfg.data_w, spec.seed + 1);
    p.description = spec;
  } else {
    sim::ClipWorkloadSpec cs;
    cs.clip = clip;
    cs.grid = p.cfg.grid;
    cs.channels = p.cfg.channels;
    cs.out_cols = p.cfg.out_cols;
    cs.data_w = p.cfg.data_w;
    cs.step = diffusion_step;
    cs.seed = w.seed;
    sim::ClipWorkload cw = sim::make_clip_workload(cs);
    p.a = std::move(cw.a);
    p.b = std::move(cw.b);
    p.description = cw.description;
  }
  p.description["thresholds"] = w.apply_thresholds(p.cfg, p.a, p.b);
  return p;
}

PreparedWorkload prepare_qk_workload(WorkloadOptions w, const workload::QkWorkloadSpec& spec, int keys,
                                     int tiles) {
  workload::QkWorkload qk = workload::make_qk_workload(spec);
  const int64_t n = qk.b.cols;
  if (keys < 1 || keys > n)
    throw ConfigError("out-cols", std::to_string(keys),
                      "the key tile of Q K^T holds 1 to N = " + std::to_string(n) + " keys (the tokens of the grid)");
  const int64_t whole = n / keys;
  if (tiles == 0) tiles = static_cast<int>(whole);
  if (tiles < 1 || tiles > whole)
    throw ConfigError("key-tiles", std::to_string(tiles),
                      "1 to the " + std::to_string(whole) + " whole tiles of " + std::to_string(keys) + " keys in N = " +
                          std::to_string(n) + " (0: all of them)");
  w.channels = static_cast<int>(qk.a.cols);
  w.out_cols = keys;
  PreparedWorkload p;
  p.cfg = w.config();
  p.a = std::move(qk.a);
  auto tile = [&](int64_t t) {
    IntMatrix b(qk.b.rows, keys);
    for (int64_t c = 0; c < qk.b.rows; ++c)
      for (int64_t j = 0; j < keys; ++j) b.at(c, j) = qk.b.at(c, t * keys + j);
    return b;
  };
  p.b = tile(0);
  for (int64_t t = 1; t < tiles; ++t) p.more_b.push_back(tile(t));
  p.description = std::move(qk.description);
  p.description["keys"] =
      tiles == 1 ? "0.." + std::to_string(keys - 1) + " of " + std::to_string(n) +
                       " (one key tile: the first M keys in scan order; the detector's decisions depend on Q "
                       "only and serve every tile)"
                 : "0.." + std::to_string(tiles * keys - 1) + " of " + std::to_string(n) + " in " +
                       std::to_string(tiles) + " tiles of M keys (scan order): the first detects, the others run "
                       "with CTRL.KEEP on its decisions";
  p.description["key_tiles"] = tiles;
  p.description["thresholds"] = w.apply_thresholds(p.cfg, p.a, p.b);
  return p;
}

void WorkloadSource::add_to(CLI::App& cmd) {
  cmd.add_option("--workload", kind,
                 "qk: S = Q K^T of one attention head (K = the model's head dimension, M = one key tile of "
                 "MAX_M keys, at most N) from the clip's proxy; latent: the clip's proxy latent times random weights; "
                 "synthetic: the correlated synthetic latent (also chosen by --clip '')")
      ->capture_default_str();
  cmd.add_option("--clip", clip, "Real clip (any ffmpeg-readable file, .y4m natively, or 'cockatoo'); '' = synthetic")
      ->capture_default_str();
  cmd.add_option("--diffusion-step", diffusion_step,
                 "Clip workloads: step of a 50-step flow schedule (shift 5; step 47 is sigma 0.24)")
      ->capture_default_str();
  cmd.add_option("--proxy", proxy,
                 "qk: denoised (Wiener estimate of the clean latent, spectrum from other frames) or raw (x_t)")
      ->capture_default_str();
  cmd.add_option("--model", model,
                 "qk: the model shape (head dimension, RoPE bands, VAE and patch strides); MAX_K defaults to "
                 "its head dimension")
      ->capture_default_str();
}

std::string WorkloadSource::resolve(const CLI::App& cmd, HwOptions& hw) const {
  auto given = [&](const char* o) { return option_given(cmd, o); };
  std::string k = kind;
  if (!given("--workload") && given("--clip")) k = clip.empty() ? "synthetic" : (k == "synthetic" ? "latent" : k);
  if (k != "qk" && k != "latent" && k != "synthetic")
    throw ConfigError("workload", k, "must be qk, latent or synthetic");
  if (k != "synthetic" && clip.empty())
    throw ConfigError("clip", "''", "the " + k + " workload is built from a clip; give one, or --workload synthetic");
  if (k == "synthetic")
    for (const char* o : {"--clip", "--diffusion-step"})
      if (given(o) && !(o == std::string("--clip") && clip.empty()))
        throw ConfigError(o + 2, cmd.get_option(o)->as<std::string>(), "applies to the clip workloads only");
  if (k != "qk") {
    for (const char* o : {"--proxy", "--model", "--key-tiles"})
      if (given(o)) throw ConfigError(o + 2, cmd.get_option(o)->as<std::string>(), "applies to --workload qk only");
    return k;
  }
  hw.default_unless_given(cmd, "--max-k", workload::find_model(model).head_dim);
  return k;
}

bool threshold_option_given(const CLI::App& cmd) {
  for (const char* o : {"--tau", "--tau-schedule", "--block-schedule", "--target-reuse", "--target-psnr", "--target-snr"})
    if (option_given(cmd, o)) return true;
  return false;
}

PreparedWorkload WorkloadSource::prepare(const CLI::App& cmd, WorkloadOptions& w, const hw::HwConfig& hw,
                                         const std::string& k) const {
  auto given = [&](const char* o) { return option_given(cmd, o); };
  if (k != "qk") {
    if (!threshold_option_given(cmd) && untuned_target_reuse >= 0) w.target_reuse = untuned_target_reuse;
    return prepare_workload(w, k == "synthetic" ? std::string() : clip, diffusion_step);
  }
  // Q K^T of one head: K is the head dimension, M one key tile (MAX_M keys, at most the N tokens,
  // unless --out-cols).
  // With no threshold option, the thresholds are calibrated for the shared default output SNR.
  workload::QkWorkloadSpec spec;
  spec.clip = clip;
  spec.grid = parse_grid(w.grid);
  spec.model = model;
  spec.proxy = proxy;
  spec.step = diffusion_step;
  spec.data_w = w.data_w;
  spec.noise_seed = w.seed + 6;  // 7 with the default seed, as in the study
  const workload::ModelShape& shape = workload::find_model(model);
  if (given("--channels") && w.channels != shape.head_dim)
    throw ConfigError("channels", std::to_string(w.channels),
                      "the qk workload's K is " + shape.title + "'s head dimension, " + std::to_string(shape.head_dim));
  if (!given("--band")) w.band = shape.band_preset;
  const int64_t n = static_cast<int64_t>(spec.grid.t) * spec.grid.h * spec.grid.w;
  const int keys = given("--out-cols") ? w.out_cols : static_cast<int>(std::min<int64_t>(hw.max_m, n));
  // A default of several tiles shrinks to the whole tiles the grid holds; a given one is checked.
  const int64_t whole = std::max<int64_t>(1, n / std::max(1, keys));
  const int tiles = given("--key-tiles") || key_tiles == 0 ? key_tiles
                                                            : static_cast<int>(std::min<int64_t>(key_tiles, whole));
  return prepare_qk_workload(w, spec, keys, tiles);
}

}  // namespace kaleido::cli
