#include "study/study.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/error.hpp"
#include "common/format.hpp"
#include "golden/quant.hpp"
#include "workload/models.hpp"
#include "workload/qkv.hpp"
#include "workload/denoise.hpp"
#include "workload/video.hpp"

namespace kaleido::study {

const std::vector<std::string>& all_methods() {
  static const std::vector<std::string> m = {"dense",
                                             "channel-reuse",
                                             "channel-reuse-qk",
                                             "channel-reuse-all-axes",
                                             "channel-reuse-pv",
                                             "channel-reuse-adaptive-max",
                                             "channel-reuse-adaptive-l1",
                                             "channel-reuse-adaptive-l2",
                                             "token-reuse",
                                             "spade-style",
                                             "spargeattn-style",
                                             "veda-style",
                                             "scalingattention-style",
                                             "sliding-tile-style",
                                             "oracle-block",
                                             "oracle-block-reuse"};
  return m;
}

bool is_peer(const std::string& m) {
  return m == "spade-style" || m == "spargeattn-style" || m == "veda-style" || m == "scalingattention-style" ||
         m == "sliding-tile-style" || m == "oracle-block";
}

bool is_distance_variant(const std::string& m) {
  return m == "channel-reuse-adaptive-max" || m == "channel-reuse-adaptive-l1" || m == "channel-reuse-adaptive-l2";
}

bool is_proxy(const std::string& name) { return name == "raw" || name == "denoised"; }

void StudyOptions::validate() const {
  for (const std::string& m : methods)
    if (std::find(all_methods().begin(), all_methods().end(), m) == all_methods().end()) {
      std::string known;
      for (const auto& k : all_methods()) known += (known.empty() ? "" : ", ") + k;
      throw ConfigError("methods", m, "must be among " + known);
    }
  if (clips.empty() && q_npy.empty() && hidden_npy.empty())
    throw ConfigError("clip", "none", "give at least one clip, --q-npy or --hidden-npy");
  if (points < 2) throw ConfigError("points", std::to_string(points), "must be at least 2");
  if (rows < 1) throw ConfigError("rows", std::to_string(rows), "must be at least 1");
  if (threads < 1 || threads > 256) throw ConfigError("threads", std::to_string(threads), "must be 1 to 256");
  if (frame_start < 0 || frame_step < 1) throw ConfigError("frame-start/frame-step", "", "start >= 0 and step >= 1");
  for (double t : targets)
    if (!(t > 0.0 && t < 1.0)) throw ConfigError("targets", std::to_string(t), "savings targets are in (0, 1)");
  schedule.validate();
  if (q_npy.empty())
    for (int s : steps)
      if (s < 0 || s > schedule.steps)
        throw ConfigError("steps", std::to_string(s), "must be 0 to num-steps = " + std::to_string(schedule.steps));
  if (proxies.empty()) throw ConfigError("proxies", "none", "give raw, denoised or both");
  for (const std::string& p : proxies)
    if (!is_proxy(p)) throw ConfigError("proxies", p, "must be raw or denoised");
  if (schedule_data_w < 4 || schedule_data_w > 16)
    throw ConfigError("schedule-data-w", std::to_string(schedule_data_w), "must be 4 to 16");
  if (!(ref_tau >= 0.0)) throw ConfigError("ref-tau", std::to_string(ref_tau), "must be >= 0");
  if (std::isnan(block_reuse_tau))
    throw ConfigError("block-reuse-tau", "nan", "a tau/RMS >= 0, or negative for the calibrated one");
  if (!block_schedule.empty() && !dit_block)
    throw ConfigError("block-schedule", block_schedule, "the knobs are for the DiT block study: add --dit-block");
  if (!hidden_npy.empty() && !dit_block)
    throw ConfigError("hidden-npy", hidden_npy, "hidden states feed the DiT block study: add --dit-block");
  if (!gemm_npy.empty() && hidden_npy.empty())
    throw ConfigError("gemm-npy", gemm_npy.front(),
                      "real GEMM inputs join real hidden states: give the block's input X0 with --hidden-npy");
  if (!hidden_npy.empty() && npy_grid.empty())
    throw ConfigError("hidden-npy", hidden_npy, "give the token grid of its rows with --npy-grid TxHxW");
  if (dit_block) {
    if (!q_npy.empty() && hidden_npy.empty())
      throw ConfigError("block", "--q-npy", "the DiT block study needs hidden states (--hidden-npy), or builds them "
                                            "from a clip's token features; real Q/K/V of one head cannot feed it");
    if (block_snr.empty()) throw ConfigError("block-snr", "none", "give at least one per-GEMM output SNR target");
    for (double t : block_snr)
      if (!(t > 0.0 && t <= 200.0)) throw ConfigError("block-snr", std::to_string(t), "SNR targets are in (0, 200] dB");
    if (block_cols < 1) throw ConfigError("block-cols", std::to_string(block_cols), "must be at least 1");
  }
  if (!q_npy.empty() && (k_npy.empty() || v_npy.empty() || npy_grid.empty()))
    throw ConfigError("q-npy", q_npy, "real activations need --k-npy, --v-npy and --npy-grid too");
}

namespace {

// Mean over rows of the smallest fraction of keys that holds 90% of the row's attention.
double keys_for_90(const FloatMatrix& s, int head_dim) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  double total = 0.0;
  std::vector<double> p(static_cast<size_t>(s.cols));
  for (int64_t r = 0; r < s.rows; ++r) {
    const float* row = s.row(r);
    const double mx = *std::max_element(row, row + s.cols);
    double z = 0.0;
    for (int64_t j = 0; j < s.cols; ++j) z += (p[static_cast<size_t>(j)] = std::exp((row[j] - mx) * scale));
    std::sort(p.begin(), p.end(), std::greater<>());
    double acc = 0.0;
    int64_t k = 0;
    while (k < s.cols && acc < 0.9 * z) acc += p[static_cast<size_t>(k++)];
    total += static_cast<double>(k) / static_cast<double>(s.cols);
  }
  return s.rows ? total / static_cast<double>(s.rows) : 0.0;
}

// Mean attention mass inside a window centred on the query whose half-widths
// are 0.266 of each axis (the whole window: 15% of the grid, as in the local
// window that STA reports holds 70% of HunyuanVideo's attention mass).
double local_window_mass(const FloatMatrix& s, const std::vector<int32_t>& rows, const Grid& g, int head_dim) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  const double frac = 0.5 * std::cbrt(0.15);
  const int rt = static_cast<int>(std::lround(frac * g.t)), rh = static_cast<int>(std::lround(frac * g.h)),
            rw = static_cast<int>(std::lround(frac * g.w));
  double total = 0.0;
  for (int64_t r = 0; r < s.rows; ++r) {
    const float* row = s.row(r);
    const double mx = *std::max_element(row, row + s.cols);
    const int32_t q = rows[static_cast<size_t>(r)];
    const int qw = q % g.w, qh = (q / g.w) % g.h, qt = q / (g.w * g.h);
    double z = 0.0, in = 0.0;
    for (int64_t j = 0; j < s.cols; ++j) {
      const double p = std::exp((row[j] - mx) * scale);
      z += p;
      const int jw = static_cast<int>(j % g.w), jh = static_cast<int>((j / g.w) % g.h), jt = static_cast<int>(j / (g.w * g.h));
      if (std::abs(jt - qt) <= rt && std::abs(jh - qh) <= rh && std::abs(jw - qw) <= rw) in += p;
    }
    total += in / z;
  }
  return s.rows ? total / static_cast<double>(s.rows) : 0.0;
}

// block_reuse_tau: tau/RMS of oracle-block-reuse at this step.
// eval_rows: the evaluator's query rows (reuse on P V keeps their Phat rows only).
std::unique_ptr<Method> make_method(const std::string& name, const AttentionInputs& in, const StudyOptions& opt,
                                    const PeerParams& peer, double block_reuse_tau,
                                    const std::vector<int32_t>& eval_rows) {
  ReuseMethodSpec r;
  r.name = name;
  r.group_w = opt.group_w;
  r.tile_h = opt.tile_h;
  r.tile_w = opt.tile_w;
  r.threads = opt.threads;
  if (name == "dense") return make_dense_method(in);
  if (name == "channel-reuse") return make_reuse_method(in, r);
  if (name == "channel-reuse-qk") {
    r.reuse_keys = true;
    return make_reuse_method(in, r);
  }
  if (name == "channel-reuse-pv") {
    r.reuse_p = true;
    r.kept_rows = eval_rows;
    return make_reuse_method(in, r);
  }
  if (name == "channel-reuse-all-axes") {
    r.policy = Policy::Fixed;
    return make_reuse_method(in, r);
  }
  // All axes, adaptive choice, one of the three group distances (beside rope-orthogonal's max).
  for (Distance d : {Distance::Max, Distance::L1, Distance::L2})
    if (name == std::string("channel-reuse-adaptive-") + distance_name(d)) {
      r.policy = Policy::Adaptive;
      r.all_axes = true;
      r.distance = d;
      return make_reuse_method(in, r);
    }
  if (name == "token-reuse") {
    r.mode = Mode::TokenReuse;
    return make_reuse_method(in, r);
  }
  if (name == "spade-style") return make_spade_method(in, peer);
  if (name == "spargeattn-style") return make_sparge_method(in, peer);
  if (name == "veda-style") return make_veda_method(in, peer);
  if (name == "scalingattention-style") return make_scaling_method(in, peer);
  if (name == "sliding-tile-style") return make_sliding_tile_method(in, peer);
  if (name == "oracle-block") return make_oracle_block_method(in, peer);
  if (name == "oracle-block-reuse") return make_oracle_block_reuse_method(in, peer, r, block_reuse_tau);
  throw ConfigError("methods", name, "unknown method");
}

PointRecord record(const std::string& clip, const StepRecord& st, const Method& m, double knob, const Execution& e,
                   const AttentionQuality& q) {
  PointRecord p;
  p.clip = clip;
  p.proxy = st.proxy;
  p.step = st.step;
  p.sigma = st.sigma;
  p.method = m.name();
  p.family = m.family();
  p.knob_name = m.knob();
  p.knob = knob;
  p.exec = e;
  p.quality = q;
  p.detail = m.detail();
  return p;
}

// The target's quality figures, linearly interpolated with weight w between a and b.
void set_quality(TargetRecord& t, const AttentionQuality& a, const AttentionQuality& b, double w) {
  auto lerp = [w](double x, double y) { return std::isfinite(x) && std::isfinite(y) ? x + w * (y - x) : (w < 0.5 ? x : y); };
  t.snr_out = lerp(a.out.snr_db, b.out.snr_db);
  t.rel_l2_out = lerp(a.out.rel_l2, b.out.rel_l2);
  t.cos_out = lerp(a.out.cosine, b.out.cosine);
  t.psnr_out = lerp(a.out.psnr_db, b.out.psnr_db);
  t.out_peak = a.out.peak;
  t.snr_scores = lerp(a.scores.snr_db, b.scores.snr_db);
  t.cos_scores = lerp(a.scores.cosine, b.scores.cosine);
  t.psnr_scores = lerp(a.scores.psnr_db, b.scores.psnr_db);
  t.scores_peak = a.scores.peak;
}

TargetRecord target_from(const PointRecord& p, const std::string& basis, double target) {
  TargetRecord t;
  t.clip = p.clip;
  t.proxy = p.proxy;
  t.step = p.step;
  t.sigma = p.sigma;
  t.basis = basis;
  t.target = target;
  t.method = p.method;
  t.reached = true;
  t.achieved = basis == "qk" ? p.exec.qk_savings() : p.exec.savings();
  t.knob = p.knob;
  set_quality(t, p.quality, p.quality, 0.0);
  return t;
}

// Linear interpolation in savings between the evaluated points of a method
// that bracket the target (used for methods with a discrete knob).
TargetRecord interpolate(const std::vector<const PointRecord*>& pts, const std::string& basis, double target,
                         const std::string& clip, const StepRecord& st, const std::string& method) {
  TargetRecord t;
  t.clip = clip;
  t.proxy = st.proxy;
  t.step = st.step;
  t.sigma = st.sigma;
  t.basis = basis;
  t.target = target;
  t.method = method;
  auto sav = [&basis](const PointRecord* p) { return basis == "qk" ? p->exec.qk_savings() : p->exec.savings(); };
  const PointRecord* below = nullptr;
  const PointRecord* above = nullptr;
  for (const PointRecord* p : pts) {
    const double s = sav(p);
    if (s <= target && (!below || s > sav(below))) below = p;
    if (s >= target && (!above || s < sav(above))) above = p;
  }
  double best = -1.0;
  for (const PointRecord* p : pts) best = std::max(best, sav(p));
  t.achieved = best;
  if (!below || !above) return t;  // not reached
  t.reached = true;
  t.achieved = target;
  const double s0 = sav(below), s1 = sav(above);
  const double w = s1 > s0 ? (target - s0) / (s1 - s0) : 0.0;
  auto lerp = [w](double a, double b) { return std::isfinite(a) && std::isfinite(b) ? a + w * (b - a) : (w < 0.5 ? a : b); };
  t.interpolated = s1 > s0;
  t.knob = lerp(below->knob, above->knob);
  set_quality(t, below->quality, above->quality, w);
  return t;
}

struct StepInputs {
  AttentionInputs in;
  AttentionInputs calib;
  bool has_calib = false;
  // The proxy's projection input, to study reuse on the projections.
  Tokens tokens;
  const ModelShape* model = nullptr;
  ProjectionSpec proj;
};

// Reuse on the token features feeding the Q, K, V projections, tau_g = knob x RMS_g.
struct ProjectionReuse {
  const StepInputs& si;
  ReuseConfig cfg;
  std::vector<float> rms;
  FloatReuse last;

  explicit ProjectionReuse(const StepInputs& s, int group_w, int tile_h, int tile_w) : si(s) {
    cfg.grid = s.tokens.grid;
    cfg.channels = static_cast<int>(s.tokens.f.cols);
    cfg.out_cols = 3 * s.in.head_dim;  // B = [W_q W_k W_v]
    cfg.group_w = group_w;
    cfg.tile_h = tile_h;
    cfg.tile_w = tile_w;
    cfg.validate();
    for (int g = 0; g < cfg.groups(); ++g) {
      double acc = 0.0;
      for (int64_t i = 0; i < s.tokens.f.rows; ++i)
        for (int c = g * group_w; c < (g + 1) * group_w; ++c) acc += static_cast<double>(s.tokens.f.at(i, c)) * s.tokens.f.at(i, c);
      rms.push_back(static_cast<float>(std::sqrt(acc / static_cast<double>(s.tokens.f.rows * group_w))));
    }
  }
  double savings(double knob) {
    cfg.tau_float.clear();
    for (float r : rms) cfg.tau_float.push_back(static_cast<float>(knob) * r);
    last = run_reuse(cfg, si.tokens.f);
    const auto& c = last.counters;
    return static_cast<double>(c.macs_skipped) / static_cast<double>(c.macs_issued + c.macs_skipped);
  }
};

ProjectionRecord projection_point(ProjectionReuse& pr, double knob, const AttentionEvaluator& ev, const std::string& clip,
                                  const StepRecord& st) {
  ProjectionRecord p;
  p.clip = clip;
  p.proxy = st.proxy;
  p.step = st.step;
  p.sigma = st.sigma;
  p.knob = knob;
  p.savings = pr.savings(knob);
  const auto& c = pr.last.counters;
  for (int a = 0; a < kNumAxes; ++a)
    p.by_axis[static_cast<size_t>(a)] = static_cast<double>(c.reused_per_axis[static_cast<size_t>(a)]) / static_cast<double>(c.pairs);
  Tokens hat{pr.si.tokens.grid, pr.last.a_eff};
  const AttentionInputs in = project_head(hat, *pr.si.model, pr.si.proj);
  p.v_proj = compare(in.v, pr.si.in.v);
  p.attention = ev.with_inputs(in.q, &in.k, &in.v);
  return p;
}

// The largest knob of channel-reuse (Q reused on Q K^T) whose attention output keeps SNR >= the schedule
// target (bisection; the SNR falls as the knob grows), and its thresholds per group.
// The largest knob of a reuse method whose attention output keeps SNR >= target_db (bisection, 14 steps; the SNR
// falls as the knob grows). Leaves the method executed there.
StepRecord::AtSnr calibrate_knob_for_snr(Method& m, const AttentionEvaluator& ev, double target_db) {
  auto snr_at = [&](double knob) {
    m.execute(knob);
    return m.evaluate(ev).out.snr_db;
  };
  double lo = 0.0, hi = m.knob_max();
  if (snr_at(hi) >= target_db) {
    lo = hi;
  } else {
    for (int it = 0; it < 14; ++it) {
      const double mid = 0.5 * (lo + hi);
      (snr_at(mid) >= target_db ? lo : hi) = mid;
    }
  }
  const Execution e = m.execute(lo);
  const AttentionQuality q = m.evaluate(ev);
  return {m.name(), lo, q.out.snr_db, q.out.cosine, e.qk_savings(), e.savings()};
}

StepRecord::AtSnr calibrate_for_snr(Method& m, const AttentionEvaluator& ev, const AttentionInputs& in,
                                    const StudyOptions& opt, StepRecord::Calibrated& c) {
  const StepRecord::AtSnr at = calibrate_knob_for_snr(m, ev, opt.schedule_snr_db);
  c.knob = at.knob;
  c.snr_out = at.snr_out;
  c.cos_out = at.cos_out;
  c.qk_savings = at.qk_savings;
  c.q_scale = symmetric_scale(in.q, opt.schedule_data_w);
  c.tau.clear();
  c.tau_int.clear();
  const nlohmann::json detail = m.detail();
  for (const auto& g : detail["groups"]) {
    const double tau = g["tau"].get<double>();
    c.tau.push_back(tau);
    c.tau_int.push_back(static_cast<uint32_t>(std::floor(tau / c.q_scale)));
  }
  return at;
}

void run_step(const StudyOptions& opt, const std::string& clip, StepRecord st, StepInputs& si, StudyResult& res,
              Progress& progress) {
  const double t0 = progress.elapsed();
  const AttentionInputs& in = si.in;
  const std::vector<int32_t> rows = sample_rows(in.grid.tokens(), opt.rows, opt.row_seed);
  res.sampled_rows = static_cast<int64_t>(rows.size());
  const std::string where = clip + " (" + st.proxy + ") step " + std::to_string(st.step) + " (sigma " + fixed(st.sigma, 3) + ")";
  progress.note(where + ": exact attention of " + std::to_string(rows.size()) + " sampled query rows over " +
                std::to_string(in.grid.tokens()) + " keys");
  AttentionEvaluator ev(in, rows, opt.threads);
  st.keys_for_90 = keys_for_90(ev.exact_scores(), in.head_dim);
  st.local_mass = local_window_mass(ev.exact_scores(), rows, in.grid, in.head_dim);
  st.inputs = in.source;
  progress.advance(where + ": exact done; 90% of a row's attention lies in " + fixed(100.0 * st.keys_for_90, 2) +
                   "% of keys; a local window of 15% of the grid holds " + fixed(100.0 * st.local_mass, 1) + "%");

  PeerParams peer;
  peer.progress = st.progress;
  peer.spade_shortcut = opt.spade_shortcut;
  peer.sparge_sim = opt.sparge_sim;
  peer.block = opt.block;
  peer.calibration = si.has_calib ? &si.calib : &si.in;
  peer.seed = opt.row_seed + 17;
  peer.threads = opt.threads;

  // Per-group reuse at a fixed threshold, to follow it across steps.
  {
    ReuseMethodSpec r;
    r.group_w = opt.group_w;
    r.tile_h = opt.tile_h;
    r.tile_w = opt.tile_w;
    auto m = make_reuse_method(in, r);
    m->execute(opt.ref_tau);
    st.reuse_at_ref = m->detail();
    st.ref_tau = opt.ref_tau;
    st.at_snr.push_back(calibrate_for_snr(*m, ev, in, opt, st.calibrated));
    progress.note(where + ": thresholds for output SNR >= " + fixed(opt.schedule_snr_db, 1) + " dB: tau/rms " +
                  fixed(st.calibrated.knob, 3) + ", Q K^T savings " + fixed(100.0 * st.calibrated.qk_savings, 1) + "%");
  }

  // The exact tile mass, once for both oracle methods.
  std::vector<double> oracle_mass;
  const auto wants = [&opt](const char* m) {
    return std::find(opt.methods.begin(), opt.methods.end(), m) != opt.methods.end();
  };
  if (wants("oracle-block") || wants("oracle-block-reuse")) {
    progress.note(where + ": exact tile mass of the oracle block mask (every query, full attention)");
    oracle_mass = exact_block_attention_mass(in, BlockLayout(in.grid, opt.block), opt.threads);
    peer.oracle_mass = &oracle_mass;
  }
  const double block_reuse_tau = opt.block_reuse_tau >= 0.0 ? opt.block_reuse_tau : st.calibrated.knob;
  st.block_reuse_tau = block_reuse_tau;

  for (const std::string& name : opt.methods) {
    std::unique_ptr<Method> m = make_method(name, in, opt, peer, block_reuse_tau, rows);
    if (is_distance_variant(name)) {
      st.at_snr.push_back(calibrate_knob_for_snr(*m, ev, opt.schedule_snr_db));
      const StepRecord::AtSnr& at = st.at_snr.back();
      progress.note(where + ": " + name + " at output SNR >= " + fixed(opt.schedule_snr_db, 1) + " dB: tau/rms " +
                    fixed(at.knob, 3) + ", Q K^T savings " + fixed(100.0 * at.qk_savings, 1) + "%");
    }
    std::vector<const PointRecord*> mine;
    std::vector<PointRecord> local;
    local.reserve(64);
    for (double k : m->sweep(opt.points)) {
      const Execution e = m->execute(k);
      PointRecord p = record(clip, st, *m, k, e, m->evaluate(ev));
      p.role = "sweep";
      local.push_back(std::move(p));
      progress.advance(where + ": " + name + " " + m->knob() + " " + fixed(k, 3) + ", savings " +
                       fixed(100.0 * e.savings(), 1) + "%, SNR " + fixed(local.back().quality.out.snr_db, 2) + " dB");
    }
    if (name != "dense") {
      const bool reuse = m->family() != "block-sparse";  // reuse and combined: Q K^T savings differ from P V's
      for (const std::string basis : {"attention", "qk"}) {
        if (!reuse && basis == std::string("qk")) continue;  // the same as attention for masks
        if (name == "channel-reuse-pv" && basis == std::string("qk")) continue;  // Q K^T as channel-reuse
        for (double target : opt.targets) {
          if (!m->continuous()) continue;
          const KnobSearch ks = find_knob(*m, target, basis == std::string("qk"));
          if (std::fabs(ks.achieved - target) > 0.01) continue;  // not reachable: recorded below
          PointRecord p = record(clip, st, *m, ks.knob, ks.exec, m->evaluate(ev));
          p.role = "target";
          p.basis = basis;
          p.target = target;
          local.push_back(std::move(p));
          progress.advance(where + ": " + name + " at " + fixed(100.0 * target, 0) + "% " + basis + " savings, SNR " +
                           fixed(local.back().quality.out.snr_db, 2) + " dB");
        }
      }
      for (const PointRecord& p : local) mine.push_back(&p);
      for (const std::string basis : {"attention", "qk"}) {
        if (!reuse && basis == std::string("qk")) continue;
        if (name == "channel-reuse-pv" && basis == std::string("qk")) continue;
        for (double target : opt.targets) {
          const PointRecord* hit = nullptr;
          for (const PointRecord& p : local)
            if (p.role == "target" && p.basis == basis && p.target == target) hit = &p;
          TargetRecord t = hit ? target_from(*hit, basis, target) : interpolate(mine, basis, target, clip, st, name);
          res.targets.push_back(t);
          if (!reuse) {
            t.basis = "qk";
            res.targets.push_back(t);
          }
        }
      }
    }
    for (PointRecord& p : local) res.points.push_back(std::move(p));
  }
  if (opt.projection && si.model) {
    ProjectionReuse pr(si, opt.group_w, opt.tile_h, opt.tile_w);
    std::vector<double> knobs;
    for (int i = 0; i < opt.points; ++i) {
      const double u = static_cast<double>(i) / (opt.points - 1);
      knobs.push_back(4.0 * u * u);
    }
    for (double k : knobs) {
      ProjectionRecord p = projection_point(pr, k, ev, clip, st);
      p.role = "sweep";
      progress.advance(where + ": projection reuse tau/rms " + fixed(k, 3) + ", savings " + fixed(100.0 * p.savings, 1) +
                       "%, attention SNR " + fixed(p.attention.out.snr_db, 2) + " dB");
      res.projection.push_back(p);
    }
    for (double target : opt.targets) {
      double lo = 0.0, hi = 4.0, best = hi, best_err = 1e30;
      for (int it = 0; it < 30 && best_err > 2e-4; ++it) {
        const double mid = 0.5 * (lo + hi), s = pr.savings(mid);
        if (std::fabs(s - target) < best_err) best_err = std::fabs(s - target), best = mid;
        (s < target ? lo : hi) = mid;
      }
      if (best_err > 0.01) continue;
      ProjectionRecord p = projection_point(pr, best, ev, clip, st);
      p.role = "target";
      p.target = target;
      progress.advance(where + ": projection reuse at " + fixed(100.0 * target, 0) + "% savings, attention SNR " +
                       fixed(p.attention.out.snr_db, 2) + " dB");
      res.projection.push_back(p);
    }
  }
  st.seconds = progress.elapsed() - t0;
  res.steps.push_back(st);
}

}  // namespace

StudyResult run_study(const StudyOptions& opt, Progress& progress) {
  opt.validate();
  StudyResult res;
  res.options = opt;
  const ModelShape& model = find_model(opt.model);
  res.model = to_json(model);
  res.proxy_statement =
      "No model weights are available here, and no real VAE. Unless real activations were loaded from .npy, "
      "Q, K and V are a proxy: real video frames through a fixed 3D-DCT patchify (4x8x8 -> " +
      std::to_string(model.latent_channels) + " channels, " + scaling_name(opt.latent_scaling) +
      " scaling), rectified-flow noise of the step (proxy 'raw': x_t as sampled; 'denoised': its Wiener estimate of "
      "the clean latent, spectrum from another clip), a 1x2x2 DiT patchify, fixed seeded projections to one head with "
      "RMS-normalised q and k, and the model's real 3D RoPE. Quality numbers describe this proxy, not " + model.title + ".";
  const double t0 = progress.elapsed();

  // Work units, for the progress percentage (approximate).
  int64_t per_step = 1 + (opt.projection && opt.q_npy.empty() ? opt.points + static_cast<int64_t>(opt.targets.size()) : 0);
  for (const std::string& m : opt.methods) {
    const bool reuse = m.find("reuse") != std::string::npos;
    per_step += m == "dense" ? 1 : opt.points + static_cast<int64_t>(opt.targets.size()) * (reuse ? 2 : 1);
  }

  BlockStudySpec block_spec;
  block_spec.snr_targets = opt.block_snr;
  block_spec.rows = opt.rows;
  block_spec.cols = opt.block_cols;
  block_spec.seed = opt.row_seed;
  block_spec.reuse.group_w = opt.group_w;
  block_spec.reuse.tile_h = opt.tile_h;
  block_spec.reuse.tile_w = opt.tile_w;
  block_spec.proxy = {static_cast<uint64_t>(opt.head) + 1, opt.qk_align, opt.pos_bias, opt.qk_gain};
  block_spec.threads = opt.threads;
  if (!opt.block_schedule.empty()) {
    auto schedule = std::make_shared<KnobSchedule>(KnobSchedule::load(opt.block_schedule));
    schedule->check_decisions(block_spec.reuse.group_w, policy_name(block_spec.reuse.policy),
                              distance_name(ReuseConfig{}.distance), opt.block_schedule);
    block_spec.schedule = std::move(schedule);
  }
  const auto check_block_tokens = [&](const Grid& g) {
    if (opt.dit_block && g.tokens() > kMaxDitBlockTokens)
      throw ConfigError("block", std::to_string(g.tokens()) + " tokens",
                        "the DiT block study holds every activation of the block and P of one head (N x N floats): "
                        "at most " + std::to_string(kMaxDitBlockTokens) +
                            " tokens (e.g. --resolution 240x416 --frames 41)");
  };

  if (!opt.q_npy.empty() || !opt.hidden_npy.empty()) {
    progress.set_total((opt.q_npy.empty() ? 0 : per_step) + (opt.dit_block ? block_study_units(block_spec) : 0));
    Grid g;
    {
      int t = 0, h = 0, w = 0, n = 0;
      if (std::sscanf(opt.npy_grid.c_str(), "%dx%dx%d%n", &t, &h, &w, &n) != 3 || n != static_cast<int>(opt.npy_grid.size()) ||
          t < 1 || h < 1 || w < 1)
        throw ConfigError("npy-grid", opt.npy_grid, "must be TxHxW");
      g = {t, h, w};
    }
    res.grid = g;
    check_block_tokens(g);
    if (!opt.hidden_npy.empty()) {
      FloatMatrix x0 = load_hidden_states(opt.hidden_npy, g, DitShape::of(model).hidden);
      ClipRecord c;
      c.name = "npy";
      c.source = opt.hidden_npy + " (hidden states X0, " + std::to_string(g.tokens()) + " x " +
                 std::to_string(x0.cols) + ")";
      DitRealInputs real;
      std::string loaded = "qkv";
      for (const std::string& spec : opt.gemm_npy) {
        auto [gemm, a] = load_gemm_input(spec, g, DitShape::of(model));
        if (real.count(gemm)) throw ConfigError("gemm-npy", spec, "gives the input of that GEMM a second time");
        c.source += "; " + spec + " (input of " + dit_gemm_name(gemm) + ", " + std::to_string(a.rows) + " x " +
                    std::to_string(a.cols) + ")";
        loaded += std::string(", ") + dit_gemm_name(gemm);
        real.emplace(gemm, std::move(a));
      }
      res.proxy_statement += " The DiT block's input X0 was loaded from " + opt.hidden_npy +
                             (real.empty() ? std::string("; its weights are seeded Gaussians, so only the qkv GEMM "
                                                         "sees a real operand.")
                                           : "; the inputs of " + loaded + " are real (loaded), the others what the "
                                             "block's seeded weights make of them. A loaded input replaces the "
                                             "block's own value in the exact and the chained block alike: reuse "
                                             "error made before it does not pass through it (the residual stream "
                                             "still carries it).");
      res.clips.push_back(c);
      std::vector<BlockRecord> rows = run_block_study(g, std::move(x0), model, block_spec, "npy", "hidden", -1,
                                                      std::nan(""), progress, std::move(real));
      res.block.insert(res.block.end(), rows.begin(), rows.end());
    }
    if (opt.q_npy.empty()) {
      res.seconds = progress.elapsed() - t0;
      return res;
    }
    StepInputs si;
    si.in = load_npy_head(opt.q_npy, opt.k_npy, opt.v_npy, g, model, opt.npy_head, opt.npy_rope_applied);
    ClipRecord c;
    c.name = "npy";
    c.source = si.in.source;
    res.clips.push_back(c);
    StepRecord st;
    st.clip = "npy";
    st.proxy = "npy";
    st.step = -1;
    st.sigma = std::nan("");
    run_step(opt, "npy", st, si, res, progress);
    res.seconds = progress.elapsed() - t0;
    return res;
  }

  const Resolution resolution = parse_resolution(model, opt.resolution);
  const int frames = opt.frames > 0 ? opt.frames : model.frames;
  res.grid = token_grid(model, resolution, frames);
  check_block_tokens(res.grid);
  if (opt.dit_block) per_step += block_study_units(block_spec);
  progress.set_total(per_step * static_cast<int64_t>(opt.clips.size() * opt.steps.size() * opt.proxies.size()) +
                     static_cast<int64_t>(opt.clips.size()));
  LatentSpec spec{model.latent_channels, model.vae_t_stride, model.vae_s_stride};
  spec.scaling = opt.latent_scaling;
  FrameSelection sel;
  sel.start = opt.frame_start;
  sel.count = frames;
  sel.step = opt.frame_step;
  ProjectionSpec proj;
  proj.seed = static_cast<uint64_t>(opt.head) + 1;
  proj.qk_align = opt.qk_align;
  proj.pos_bias = opt.pos_bias;
  proj.qk_gain = opt.qk_gain;

  Latent calib_latent;
  if (!opt.calib_clip.empty()) {
    progress.note("calibration clip " + opt.calib_clip);
    calib_latent = encode_latent(to_pixels(load_clip(opt.calib_clip, sel), resolution.width, resolution.height), spec);
  }
  // The denoised proxy's spectrum, from a clip other than the one evaluated (read once, when first needed,
  // so that a broken evaluated clip is reported first).
  LatentSpectrum spectrum;
  auto need_spectrum = [&] {
    if (!spectrum.power.empty()) return;
    FrameSelection other = sel;
    std::string name = opt.spectrum_clip;
    if (name.empty()) {  // cockatoo, the frames right after the evaluated ones (280 frames hold 81 + 81 + ...)
      name = "cockatoo";
      other.start = opt.frame_start + frames * opt.frame_step;
    }
    progress.note("spectrum of the denoised proxy: " + name + " from frame " + std::to_string(other.start));
    const Latent sl = encode_latent(to_pixels(load_clip(name, other), resolution.width, resolution.height), spec);
    spectrum = estimate_spectrum(sl.grid, sl.x, 1);
    res.spectrum_source = name + ", frames " + std::to_string(other.start) + " to " +
                          std::to_string(other.start + (frames - 1) * other.step) + " (every " + std::to_string(other.step) + ")";
  };

  for (const std::string& clip : opt.clips) {
    progress.note(clip + ": reading " + std::to_string(frames) + " frames, " + std::to_string(resolution.height) + "x" +
                  std::to_string(resolution.width) + " pixels, latent patchify");
    ClipRecord cr;
    Latent lat;
    {
      const Video v = load_clip(clip, sel);
      cr.name = clip;
      cr.source = v.source;
      cr.width = v.width;
      cr.height = v.height;
      cr.frames = static_cast<int>(v.frames.size());
      cr.fps = static_cast<double>(v.fps_num) / v.fps_den / opt.frame_step;
      lat = encode_latent(to_pixels(v, resolution.width, resolution.height), spec);
    }
    res.clips.push_back(cr);
    progress.advance(clip + ": latent " + std::to_string(lat.grid.t) + "x" + std::to_string(lat.grid.h) + "x" +
                     std::to_string(lat.grid.w) + "x" + std::to_string(lat.x.cols) + ", tokens " +
                     std::to_string(res.grid.t) + "x" + std::to_string(res.grid.h) + "x" + std::to_string(res.grid.w));
    for (const std::string& proxy : opt.proxies)
    for (int step : opt.steps) {
      StepRecord st;
      st.clip = clip;
      st.proxy = proxy;
      st.step = step;
      st.sigma = opt.schedule.sigma(step);
      st.progress = opt.schedule.progress(step);
      StepInputs si;
      // One noise sample eps for the whole trajectory, as in sampling.
      FloatMatrix x = add_noise(lat.x, st.sigma, opt.noise_seed);
      if (proxy == "denoised") {
        need_spectrum();
        x = wiener_denoise(lat.grid, x, st.sigma, spectrum);
      }
      for (int axis = 0; axis < 3; ++axis) st.latent_corr[static_cast<size_t>(axis)] = neighbour_correlation(lat.grid, x, axis);
      si.tokens = patchify(lat.grid, x, model.patch_h, model.patch_w);
      si.model = &model;
      si.proj = proj;
      si.in = project_head(si.tokens, model, proj);
      const bool want_calib =
          std::find(opt.methods.begin(), opt.methods.end(), "scalingattention-style") != opt.methods.end();
      if (want_calib) {
        const Latent& cl = opt.calib_clip.empty() ? lat : calib_latent;
        FloatMatrix cx = add_noise(cl.x, st.sigma, opt.noise_seed + 1000);
        if (proxy == "denoised") cx = wiener_denoise(cl.grid, cx, st.sigma, spectrum);
        si.calib = project_head(patchify(cl.grid, cx, model.patch_h, model.patch_w), model, proj);
        si.has_calib = true;
      }
      run_step(opt, clip, st, si, res, progress);
      if (opt.dit_block) {
        std::vector<BlockRecord> rows =
            run_block_study(si.tokens, model, block_spec, clip, proxy, step, st.sigma, progress);
        res.block.insert(res.block.end(), rows.begin(), rows.end());
      }
    }
  }
  res.seconds = progress.elapsed() - t0;
  return res;
}

}  // namespace kaleido::study
