// Study outputs: CSV, JSON, Markdown summary and SVG plots.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "common/markdown.hpp"
#include "common/version.hpp"
#include "golden/threshold.hpp"
#include "study/study.hpp"
#include "common/svg.hpp"

namespace kaleido::study {

namespace fs = std::filesystem;
using svg::PlotSpec;
using svg::Series;
using svg::line_plot;
using svg::bar_plot;

namespace {

const char* const kReuseVariants[] = {"channel-reuse",
                                      "channel-reuse-qk",
                                      "channel-reuse-all-axes",
                                      "channel-reuse-pv",
                                      "channel-reuse-adaptive-max",
                                      "channel-reuse-adaptive-l1",
                                      "channel-reuse-adaptive-l2",
                                      "oracle-block-reuse"};

std::string pct(double v, int decimals = 1) { return fixed(100.0 * v, decimals) + "%"; }

std::string slug(const std::string& s) {
  std::string b = fs::path(s).stem().string();
  for (char& c : b)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return b.empty() ? "clip" : b;
}

std::string step_label(int step) {
  return step == kAllSteps ? "all" : step < 0 ? "npy" : std::to_string(step);
}
nlohmann::json step_json(int step) { return step == kAllSteps ? nlohmann::json("all") : nlohmann::json(step); }

double reuse_ratio_of(const PointRecord& p) {
  return p.detail.contains("reuse_ratio") ? p.detail["reuse_ratio"].get<double>() : std::nan("");
}

// CSV columns of a Quality, prefixed: SNR, relative L2, cosine, PSNR and its peak, max error.
std::string quality_header(const std::string& x) {
  return "snr_" + x + "_db,rel_l2_" + x + ",cos_" + x + ",psnr_" + x + "_db,peak_" + x + ",max_err_" + x;
}
std::string quality_cells(const Quality& q) {
  return fixed(q.snr_db, 4) + "," + fixed(q.rel_l2, 8) + "," + fixed(q.cosine, 8) + "," + fixed(q.psnr_db, 4) + "," + fixed(q.peak, 6) + "," +
         fixed(q.max_abs_err, 6);
}

std::string points_csv(const StudyResult& r) {
  std::ostringstream o;
  o << "clip,proxy,step,sigma,method,family,role,basis,target,knob_name,knob,savings,qk_savings,pv_savings,qk_macs,pv_macs,"
       "dense_macs_per_product,overhead,overhead_kind," << quality_header("out") << "," << quality_header("scores")
    << ",reuse_ratio\n";
  for (const PointRecord& p : r.points) {
    o << slug(p.clip) << "," << p.proxy << "," << step_label(p.step) << "," << fixed(p.sigma, 4) << "," << p.method << "," << p.family << ","
      << p.role << "," << p.basis << "," << (p.role == "target" ? fixed(p.target, 2) : "") << "," << p.knob_name << ","
      << fixed(p.knob, 6) << "," << fixed(p.exec.savings(), 6) << "," << fixed(p.exec.qk_savings(), 6) << ","
      << fixed(p.exec.pv_savings(), 6) << "," << p.exec.qk << "," << p.exec.pv << "," << p.exec.dense << ","
      << p.exec.overhead << "," << p.exec.overhead_kind << "," << quality_cells(p.quality.out) << ","
      << quality_cells(p.quality.scores) << "," << fixed(reuse_ratio_of(p), 6) << "\n";
  }
  return o.str();
}

std::string targets_csv(const StudyResult& r) {
  std::ostringstream o;
  o << "clip,proxy,step,sigma,basis,target,method,reached,interpolated,achieved,knob,snr_out_db,rel_l2_out,cos_out,psnr_out_db,"
       "peak_out,snr_scores_db,cos_scores,psnr_scores_db,peak_scores\n";
  for (const TargetRecord& t : r.targets) {
    o << slug(t.clip) << "," << t.proxy << "," << step_label(t.step) << "," << fixed(t.sigma, 4) << "," << t.basis << "," << fixed(t.target, 2)
      << "," << t.method << "," << (t.reached ? 1 : 0) << "," << (t.interpolated ? 1 : 0) << "," << fixed(t.achieved, 6)
      << "," << (t.reached ? fixed(t.knob, 6) : "");
    for (double v : {t.snr_out, t.rel_l2_out, t.cos_out, t.psnr_out, t.out_peak, t.snr_scores, t.cos_scores,
                     t.psnr_scores, t.scores_peak})
      o << "," << (t.reached ? fixed(v, 6) : "");
    o << "\n";
  }
  return o.str();
}

std::string gaps_csv(const std::vector<GapRecord>& gaps) {
  std::ostringstream o;
  o << "clip,proxy,step,sigma,basis,target,reuse_method,reuse_reached,reuse_snr_db,reuse_psnr_db,best_peer,best_peer_snr_db,"
       "best_peer_psnr_db,gap_db\n";
  for (const GapRecord& g : gaps)
    o << slug(g.clip) << "," << g.proxy << "," << step_label(g.step) << "," << fixed(g.sigma, 4) << "," << g.basis << "," << fixed(g.target, 2)
      << "," << g.reuse_method << "," << (g.reuse_reached ? 1 : 0) << "," << (g.reuse_reached ? fixed(g.reuse_snr, 4) : "")
      << "," << (g.reuse_reached ? fixed(g.reuse_psnr, 4) : "") << "," << g.best_peer << ","
      << (g.best_peer.empty() ? "" : fixed(g.best_peer_snr, 4)) << "," << (g.best_peer.empty() ? "" : fixed(g.best_peer_psnr, 4))
      << "," << (g.valid() ? fixed(g.gap_db, 4) : "") << "\n";
  return o.str();
}

std::string groups_csv(const StudyResult& r) {
  std::ostringstream o;
  o << "clip,proxy,step,sigma,setting,tau_over_rms,qk_savings,group,channels,rope_axes,allowed_axes,reuse_ratio,ratio_t,ratio_h,"
       "ratio_w\n";
  auto rows = [&](const std::string& clip, const std::string& proxy, int step, double sigma, const std::string& setting, double knob, double qk,
                  const nlohmann::json& d) {
    for (const auto& g : d["groups"])
      o << slug(clip) << "," << proxy << "," << step_label(step) << "," << fixed(sigma, 4) << "," << setting << "," << fixed(knob, 4) << ","
        << fixed(qk, 4) << "," << g["group"].get<int>() << "," << g["channels"].get<std::string>() << ","
        << g["rope_axes"].get<std::string>() << "," << g["allowed_axes"].get<std::string>() << ","
        << fixed(g["reuse_ratio"].get<double>(), 6) << "," << fixed(g["by_axis"]["t"].get<double>(), 6) << ","
        << fixed(g["by_axis"]["h"].get<double>(), 6) << "," << fixed(g["by_axis"]["w"].get<double>(), 6) << "\n";
  };
  for (const StepRecord& s : r.steps)
    if (s.reuse_at_ref.contains("groups")) rows(s.clip, s.proxy, s.step, s.sigma, "fixed_tau", s.ref_tau, std::nan(""), s.reuse_at_ref);
  for (const PointRecord& p : r.points)
    if (p.method == "channel-reuse" && p.role == "target" && p.basis == "qk")
      rows(p.clip, p.proxy, p.step, p.sigma, "qk_savings_" + fixed(p.target, 2), p.knob, p.exec.qk_savings(), p.detail);
  return o.str();
}

std::string projection_csv(const StudyResult& r) {
  std::ostringstream o;
  o << "clip,proxy,step,sigma,role,target,tau_over_rms,savings,ratio_t,ratio_h,ratio_w," << quality_header("v") << ","
    << quality_header("out") << "," << quality_header("scores") << "\n";
  for (const ProjectionRecord& p : r.projection)
    o << slug(p.clip) << "," << p.proxy << "," << step_label(p.step) << "," << fixed(p.sigma, 4) << "," << p.role << ","
      << (p.role == "target" ? fixed(p.target, 2) : "") << "," << fixed(p.knob, 6) << "," << fixed(p.savings, 6) << ","
      << fixed(p.by_axis[0], 6) << "," << fixed(p.by_axis[1], 6) << "," << fixed(p.by_axis[2], 6) << "," << quality_cells(p.v_proj)
      << "," << quality_cells(p.attention.out) << "," << quality_cells(p.attention.scores) << "\n";
  return o.str();
}

nlohmann::json to_json(const Quality& q) { return quality_json(q); }

// The DiT block table: a row per GEMM (quality on its exact input) and the block rows, per target.
std::string block_csv(const StudyResult& r) {
  std::ostringstream o;
  o << "clip,proxy,step,sigma,snr_target_db,gemm,heads,m_tokens,k,n,macs,mac_share,tau_over_rms,reuse_ratio,savings,"
       "savings_in_block," << quality_header("out") << ",sampled\n";
  auto num = [](double x, int d) { return std::isfinite(x) ? fixed(x, d) : std::string(); };
  for (const BlockRecord& b : r.block)
    o << slug(b.clip) << "," << b.proxy << "," << step_label(b.step) << "," << fixed(b.sigma, 4) << ","
      << fixed(b.snr_target, 2) << "," << b.gemm << "," << b.heads << "," << b.rows << "," << b.k << "," << b.m << ","
      << b.macs << "," << fixed(b.mac_share, 6) << "," << num(b.knob, 6) << "," << num(b.reuse_ratio, 6) << ","
      << fixed(b.savings, 6) << "," << fixed(b.savings_in_block, 6) << "," << quality_cells(b.quality) << ",\""
      << b.sampled << "\"\n";
  return o.str();
}

std::string block_section(const StudyResult& r) {
  if (r.block.empty()) return "";
  std::ostringstream m;
  m << "## Reuse on every GEMM of a DiT block\n\n"
       "One " << r.model.value("title", std::string()) << "-shaped block (self-attention and FFN; no cross-attention, "
       "no adaLN modulation) on "
    << (r.options.hidden_npy.empty() ? "the hidden-state proxy X0 = f W_e (the token features of the latent proxy "
                                       "through a seeded patch embedding)"
                                     : "hidden states X0 loaded from " + r.options.hidden_npy)
    << ", seeded weights of variance 1/fan-in. Every GEMM is closed-loop Out = Ahat B with its "
       "own thresholds tau_g = knob x RMS of group g of its exact A: per GEMM (per head for qk and pv), the largest "
       "knob (at most 4) keeping that GEMM's output SNR at or above the target with its exact input"
    << (r.options.block_schedule.empty() ? "" : " (here: the knobs of " + r.options.block_schedule + ", not calibrated)")
    << ". Savings: MACs "
       "of REUSE pairs over all tokens, on the exact input and in the chained block (every GEMM fed by the reused "
       "GEMMs before it); the block row is the MAC-weighted savings in the chained block against the block output Y "
       "(residual stream after the FFN), and `block_update` the same error against Y - X0 (what the block adds). "
       "Quality is measured on samples: " << r.block.front().sampled << ".\n\n";
  markdown::Table t({"clip", "proxy", "step", "target", "GEMM", "A x B (N x K x M)", "MAC share", "tau/RMS", "reuse",
                     "savings", "savings in block", "SNR (dB)", "cosine", "rel. L2"});
  for (const BlockRecord& b : r.block) {
    const bool row = b.gemm != "block" && b.gemm != "block_update";
    const std::string size = row ? std::to_string(b.rows) + " x " + std::to_string(b.k) + " x " + std::to_string(b.m) +
                                       (b.heads > 1 ? " (x " + std::to_string(b.heads) + " heads)" : "")
                                 : "-";
    t.add_row({slug(b.clip), b.proxy, step_label(b.step), fixed(b.snr_target, 0) + " dB", b.gemm, size,
               pct(b.mac_share), row ? fixed(b.knob, 3) : "-", row ? pct(b.reuse_ratio) : "-",
               row ? pct(b.savings) : "-", pct(b.savings_in_block), fixed(b.quality.snr_db, 2),
               fixed(b.quality.cosine, 6), fixed(b.quality.rel_l2, 5)});
  }
  m << t.render() << "\n";
  return m.str();
}

const TargetRecord* find_target(const StudyResult& r, const StepRecord& s, const std::string& method,
                                const std::string& basis, double target) {
  for (const TargetRecord& tr : r.targets)
    if (tr.clip == s.clip && tr.proxy == s.proxy && tr.step == s.step && tr.method == method && tr.basis == basis &&
        tr.target == target)
      return &tr;
  return nullptr;
}

// Rope-orthogonal channel-reuse (max distance) beside the all-axes adaptive variants with each group distance:
// at equal Q K^T savings (the reuse ratio of Q) and at the same output SNR.
std::string distance_section(const StudyResult& r) {
  const StudyOptions& o = r.options;
  std::vector<std::string> variants;
  for (const std::string& m : o.methods)
    if (is_distance_variant(m)) variants.push_back(m);
  const bool base = std::find(o.methods.begin(), o.methods.end(), "channel-reuse") != o.methods.end();
  if (variants.empty() || !base) return "";
  std::ostringstream m;
  m << "## Group distance: all-axes adaptive (max, L1, L2) beside rope-orthogonal\n\n"
       "Q reused on Q K^T (P V dense except rows that are copies). `channel-reuse`: rope-orthogonal policy, max "
       "distance (what the hardware computes). `channel-reuse-adaptive-<d>`: every axis allowed for every group, the "
       "passing reference with the smallest distance wins; distance d over the group's Gw channels: `max` |x - y|, "
       "`l1` the mean |x - y|, `l2` the RMS of x - y. Each is compared with the same tau_g = knob x RMS_g, in units "
       "of the data, so one tau means the same for a uniform difference.\n\n"
       "At equal Q K^T savings (the fraction of Q's (token, group) pairs reused): attention-output SNR (dB) / "
       "cosine, and in brackets the SNR difference to channel-reuse.\n\n";
  std::vector<markdown::Column> cols = {"clip", "proxy", "step", "target", "channel-reuse"};
  for (const std::string& v : variants) cols.emplace_back(v);
  markdown::Table t(cols);
  auto find = [&](const StepRecord& s, const std::string& meth, double target) -> const TargetRecord* {
    const TargetRecord* hit = find_target(r, s, meth, "qk", target);
    return hit && hit->reached ? hit : nullptr;
  };
  // Sum and count of the SNR difference per (proxy, target, variant), for the mean rows.
  std::map<std::tuple<std::string, double, std::string>, std::pair<double, int>> delta;
  for (const StepRecord& s : r.steps)
    for (double target : o.targets) {
      const TargetRecord* b = find(s, "channel-reuse", target);
      std::vector<std::string> row = {slug(s.clip), s.proxy, step_label(s.step), pct(target, 0),
                                      b ? fixed(b->snr_out, 2) + " / " + fixed(b->cos_out, 5) : "n/r"};
      for (const std::string& v : variants) {
        const TargetRecord* x = find(s, v, target);
        if (!x) {
          row.push_back("n/r");
          continue;
        }
        std::string cell = fixed(x->snr_out, 2) + " / " + fixed(x->cos_out, 5);
        if (b) {
          const double d = x->snr_out - b->snr_out;
          cell += " (" + std::string(d >= 0 ? "+" : "") + fixed(d, 2) + ")";
          auto& [sum, n] = delta[{s.proxy, target, v}];
          sum += d;
          ++n;
        }
        row.push_back(cell);
      }
      t.add_row(std::move(row));
    }
  m << t.render() << "\n";
  markdown::Table mean({"proxy", "target", "variant", "mean SNR difference to channel-reuse", "steps"});
  for (const auto& [key, v] : delta)
    mean.add_row({std::get<0>(key), pct(std::get<1>(key), 0), std::get<2>(key),
                  (v.first >= 0 ? "+" : "") + fixed(v.first / v.second, 2) + " dB", std::to_string(v.second)});
  m << "Mean over the clips and steps where both reached the target:\n\n" << mean.render() << "\n";
  m << "At the same output-error target (attention-output SNR >= " << fixed(o.schedule_snr_db, 1)
    << " dB; the largest knob that keeps it, 14 bisection steps): Q K^T savings, and the SNR / cosine reached.\n\n";
  std::vector<markdown::Column> cols2 = {"clip", "proxy", "step", "sigma"};
  std::vector<std::string> names = {"channel-reuse"};
  names.insert(names.end(), variants.begin(), variants.end());
  for (const std::string& n : names) cols2.emplace_back(n);
  markdown::Table at(cols2);
  for (const StepRecord& s : r.steps) {
    std::vector<std::string> row = {slug(s.clip), s.proxy, step_label(s.step), fixed(s.sigma, 3)};
    for (const std::string& n : names) {
      std::string cell = "-";
      for (const StepRecord::AtSnr& a : s.at_snr)
        if (a.method == n)
          cell = pct(a.qk_savings) + " (" + fixed(a.snr_out, 2) + " dB / " + fixed(a.cos_out, 5) + ")";
      row.push_back(cell);
    }
    at.add_row(std::move(row));
  }
  m << at.render() << "\n";
  return m.str();
}

// oracle-block-reuse beside oracle-block alone at equal attention savings.
std::string combined_section(const StudyResult& r) {
  const auto& ms = r.options.methods;
  if (std::find(ms.begin(), ms.end(), "oracle-block-reuse") == ms.end() ||
      std::find(ms.begin(), ms.end(), "oracle-block") == ms.end())
    return "";
  std::ostringstream m;
  m << "## Reuse inside the kept tiles of the oracle block mask\n\n"
       "`oracle-block-reuse`: the oracle mask (exact tile mass) at a keep fraction picks the tiles; inside them, "
       "channel-reuse on Q (rope-orthogonal, max distance) at tau/RMS given per step (by default the step's "
       "calibrated channel-reuse threshold, the largest keeping the output SNR >= "
    << fixed(r.options.schedule_snr_db, 1)
    << " dB on its own) skips further Q K^T MACs and copies P V rows. Attention-output SNR (dB) / cosine at equal "
       "attention (Q K^T + P V) savings; the combined method's overheads (detector comparisons) are in "
       "`points.csv`.\n\n";
  markdown::Table t({"clip", "proxy", "step", "sigma", "tau/RMS", "target", "oracle-block", "oracle-block-reuse",
                     "difference"});
  auto cell = [](const TargetRecord* x) {
    if (!x) return std::string("-");
    return x->reached ? fixed(x->snr_out, 2) + " / " + fixed(x->cos_out, 5) : std::string("n/r");
  };
  for (const StepRecord& s : r.steps)
    for (double target : r.options.targets) {
      const TargetRecord* o = find_target(r, s, "oracle-block", "attention", target);
      const TargetRecord* c = find_target(r, s, "oracle-block-reuse", "attention", target);
      const bool both = o && c && o->reached && c->reached;
      const double d = both ? c->snr_out - o->snr_out : 0.0;
      t.add_row({slug(s.clip), s.proxy, step_label(s.step), fixed(s.sigma, 3), fixed(s.block_reuse_tau, 3),
                 pct(target, 0), cell(o), cell(c), both ? (d >= 0 ? "+" : "") + fixed(d, 2) + " dB" : "-"});
    }
  m << t.render() << "\n";
  return m.str();
}

// The calibrated thresholds of one (clip, proxy) as a ThresholdSchedule CSV (golden/threshold.hpp): a row
// per step of the schedule; steps not studied take the row of the nearest studied step (said in a comment).
std::string schedule_csv(const StudyResult& r, const std::string& clip, const std::string& proxy) {
  std::vector<const StepRecord*> mine;
  for (const StepRecord& s : r.steps)
    if (s.clip == clip && s.proxy == proxy && !s.calibrated.tau_int.empty()) mine.push_back(&s);
  std::ostringstream o;
  if (mine.empty()) return "";
  o << "# Kaleido threshold schedule (kaleido study " << version() << "): channel-reuse on Q for S = Q K^T, "
    << r.model["title"].get<std::string>() << " head " << r.options.head << ", clip " << slug(clip) << ", proxy "
    << proxy << ".\n# Per step: the largest tau/RMS keeping the attention output's SNR >= "
    << fixed(r.options.schedule_snr_db, 1) << " dB (float, sampled rows), in integer units of Q quantised to DATA_W = "
    << r.options.schedule_data_w << " (tau_int = floor(tau / scale)). Groups of Gw = " << r.options.group_w
    << " channels; use with -K " << r.model["head_dim"].get<int>() << " --group-w " << r.options.group_w
    << " --data-w " << r.options.schedule_data_w << " --tau-schedule FILE --step S.\n";
  const int rows = mine.front()->step < 0 ? 1 : r.options.schedule.steps;
  for (int k = 0; k < rows; ++k) {
    const StepRecord* near = mine.front();
    for (const StepRecord* s : mine)
      if (std::abs(s->step - k) < std::abs(near->step - k)) near = s;
    o << "# step " << k;
    if (near->step != k) o << ": not studied, row of step " << step_label(near->step);
    else
      o << ": sigma " << fixed(near->sigma, 3) << ", tau/RMS " << fixed(near->calibrated.knob, 4) << ", output SNR "
        << fixed(near->calibrated.snr_out, 2) << " dB, Q K^T savings " << pct(near->calibrated.qk_savings) << ", Q scale "
        << fixed(near->calibrated.q_scale, 6);
    o << "\n";
    for (size_t g = 0; g < near->calibrated.tau_int.size(); ++g) o << (g ? "," : "") << near->calibrated.tau_int[g];
    o << "\n";
  }
  return o.str();
}

// The DiT block's calibrated knobs of one (clip, proxy) as a KnobSchedule (golden/threshold.hpp): an entry per
// studied step and SNR target, one knob per GEMM and head.
std::string block_schedule_json(const StudyResult& r, const std::string& clip, const std::string& proxy) {
  KnobSchedule k;
  k.source = "kaleido study " + version() + " --dit-block, " + r.model.value("title", std::string()) + ", clip " +
             slug(clip) + ", proxy " + proxy;
  for (const BlockRecord& b : r.block) {
    if (b.clip != clip || b.proxy != proxy || b.knobs.empty()) continue;
    k.group_w = b.group_w;
    k.policy = b.policy;
    k.distance = b.distance;
    if (k.steps.empty() || k.steps.back().step != b.step || k.steps.back().snr_target_db != b.snr_target) {
      KnobStep e;
      e.step = b.step;
      e.sigma = b.sigma;
      e.snr_target_db = b.snr_target;
      k.steps.push_back(e);
    }
    k.steps.back().knobs[b.gemm] = b.knobs;
  }
  return k.steps.empty() ? "" : k.to_json();
}

nlohmann::json options_json(const StudyOptions& o) {
  return {{"clips", o.clips},
          {"model", o.model},
          {"resolution", o.resolution},
          {"frames", o.frames},
          {"frame_start", o.frame_start},
          {"frame_step", o.frame_step},
          {"steps", o.steps},
          {"proxies", o.proxies},
          {"spectrum_clip", o.spectrum_clip},
          {"latent_scaling", scaling_name(o.latent_scaling)},
          {"num_steps", o.schedule.steps},
          {"shift", o.schedule.shift},
          {"noise_seed", o.noise_seed},
          {"head", o.head},
          {"qk_align", o.qk_align},
          {"pos_bias", o.pos_bias},
          {"qk_gain", o.qk_gain},
          {"methods", o.methods},
          {"points", o.points},
          {"targets", o.targets},
          {"rows", o.rows},
          {"row_seed", o.row_seed},
          {"threads", o.threads},
          {"group_w", o.group_w},
          {"tile", std::to_string(o.tile_h) + "x" + std::to_string(o.tile_w)},
          {"ref_tau", o.ref_tau},
          {"block", o.block.name()},
          {"block_reuse_tau", o.block_reuse_tau},
          {"spade_shortcut", o.spade_shortcut},
          {"sparge_sim", o.sparge_sim},
          {"calib_clip", o.calib_clip},
          {"q_npy", o.q_npy},
          {"k_npy", o.k_npy},
          {"v_npy", o.v_npy},
          {"npy_grid", o.npy_grid},
          {"npy_head", o.npy_head},
          {"npy_rope_applied", o.npy_rope_applied},
          {"projection", o.projection},
          {"dit_block", o.dit_block},
          {"dit_block_snr_db", o.block_snr},
          {"dit_block_cols", o.block_cols},
          {"schedule_snr_db", o.schedule_snr_db},
          {"schedule_data_w", o.schedule_data_w}};
}

const char* kAccounting =
    "MAC savings = fraction of the Q K^T and P V MACs of one head (2 N^2 d for N tokens) that a method does not "
    "execute, counted over all tokens. Reuse: a COMPUTE (token, group) pair costs Gw N MACs of Q K^T, a REUSE pair 0; "
    "with K reused too, a (query, key, group) partial costs Gw MACs only when both compute the group; a P V row (N d "
    "MACs) is skipped only when all groups of the query reuse the same reference token (its output row is then a "
    "copy); channel-reuse-pv also reuses P (A = P, groups of Gw keys): a COMPUTE (query, key group) pair costs "
    "(keys in the group) x d MACs of P V, a REUSE pair none. Block-sparse: |a| |b| d MACs of Q K^T and the same of "
    "P V per kept tile. "
    "oracle-block-reuse (reuse inside the oracle mask's kept tiles): a COMPUTE (query, group) pair costs Gw x the keys "
    "of its block's kept tiles, a REUSE pair Gw x the kept keys its reference's block does not keep; a P V row costs "
    "its kept keys x d unless it copies a reference of a block with the same kept tiles. Estimation overheads (peers' "
    "mask estimation MACs, reuse detector comparisons) are listed apart and not subtracted. 'qk' basis: the fraction "
    "of Q K^T MACs alone (equal to the attention basis for block-sparse methods).";

nlohmann::json at_snr_json(const StudyResult& r, const StepRecord& s) {
  nlohmann::json a = nlohmann::json::array();
  for (const StepRecord::AtSnr& x : s.at_snr)
    a.push_back({{"method", x.method}, {"target_snr_db", r.options.schedule_snr_db}, {"tau_over_rms", x.knob},
                 {"snr_out_db", x.snr_out}, {"cos_out", x.cos_out}, {"qk_savings", x.qk_savings},
                 {"savings", x.savings}});
  return a;
}

nlohmann::json result_json(const StudyResult& r, const std::vector<GapRecord>& gaps) {
  nlohmann::json j;
  j["tool"] = "kaleido " + version();
  j["proxy_statement"] = r.proxy_statement;
  j["accounting"] = kAccounting;
  j["options"] = options_json(r.options);
  j["model"] = r.model;
  j["token_grid"] = {r.grid.t, r.grid.h, r.grid.w};
  j["tokens"] = r.grid.tokens();
  j["sampled_query_rows"] = r.sampled_rows;
  j["trajectory"] = trajectory_json(r);
  j["skipped"] = r.skipped;
  j["spectrum_source"] = r.spectrum_source;
  j["seconds"] = r.seconds;
  for (const ClipRecord& c : r.clips)
    j["clips"].push_back({{"name", c.name}, {"source", c.source}, {"width", c.width}, {"height", c.height},
                          {"frames", c.frames}, {"fps", c.fps}});
  for (const StepRecord& s : r.steps)
    j["steps"].push_back({{"clip", s.clip}, {"proxy", s.proxy}, {"step", s.step},
                          {"latent_neighbour_correlation", {{"t", s.latent_corr[0]}, {"h", s.latent_corr[1]},
                                                            {"w", s.latent_corr[2]}}}, {"sigma", s.sigma}, {"progress", s.progress},
                          {"inputs", s.inputs}, {"keys_for_90pct_attention", s.keys_for_90}, {"local_window_mass", s.local_mass}, {"seconds", s.seconds},
                          {"ref_tau", s.ref_tau}, {"reuse_at_ref_tau", s.reuse_at_ref},
                          {"calibrated",
                           {{"target_snr_db", r.options.schedule_snr_db},
                            {"tau_over_rms", s.calibrated.knob},
                            {"snr_out_db", s.calibrated.snr_out},
                            {"cos_out", s.calibrated.cos_out},
                            {"qk_savings", s.calibrated.qk_savings},
                            {"tau", s.calibrated.tau},
                            {"tau_int", s.calibrated.tau_int},
                            {"data_w", r.options.schedule_data_w},
                            {"q_scale", s.calibrated.q_scale}}},
                          {"at_snr_target", at_snr_json(r, s)},
                          {"block_reuse_tau", s.block_reuse_tau}});
  for (const PointRecord& p : r.points)
    j["points"].push_back({{"clip", p.clip},
                           {"proxy", p.proxy},
                           {"step", p.step},
                           {"sigma", p.sigma},
                           {"method", p.method},
                           {"family", p.family},
                           {"role", p.role},
                           {"basis", p.basis},
                           {"target", p.target},
                           {"knob_name", p.knob_name},
                           {"knob", p.knob},
                           {"savings", p.exec.savings()},
                           {"qk_savings", p.exec.qk_savings()},
                           {"pv_savings", p.exec.pv_savings()},
                           {"macs", {{"qk", p.exec.qk}, {"pv", p.exec.pv}, {"dense_per_product", p.exec.dense}}},
                           {"overhead", {{"count", p.exec.overhead}, {"kind", p.exec.overhead_kind}}},
                           {"out", to_json(p.quality.out)},
                           {"scores", to_json(p.quality.scores)},
                           {"detail", p.detail}});
  for (const TargetRecord& t : r.targets)
    j["equal_savings"].push_back({{"clip", t.clip},
                           {"proxy", t.proxy},
                                  {"step", t.step},
                                  {"basis", t.basis},
                                  {"target", t.target},
                                  {"method", t.method},
                                  {"reached", t.reached},
                                  {"interpolated", t.interpolated},
                                  {"achieved", t.achieved},
                                  {"snr_out_db", t.snr_out},
                                  {"rel_l2_out", t.rel_l2_out},
                                  {"cos_out", t.cos_out},
                                  {"psnr_out_db", t.psnr_out},
                                  {"psnr_out_peak", t.out_peak},
                                  {"snr_scores_db", t.snr_scores},
                                  {"cos_scores", t.cos_scores},
                                  {"psnr_scores_db", t.psnr_scores},
                                  {"psnr_scores_peak", t.scores_peak}});
  for (const ProjectionRecord& p : r.projection)
    j["projection"].push_back({{"clip", p.clip},
                           {"proxy", p.proxy},
                               {"step", p.step},
                               {"role", p.role},
                               {"target", p.target},
                               {"knob", p.knob},
                               {"savings", p.savings},
                               {"by_axis", {{"t", p.by_axis[0]}, {"h", p.by_axis[1]}, {"w", p.by_axis[2]}}},
                               {"v_projection", to_json(p.v_proj)},
                               {"out", to_json(p.attention.out)},
                               {"scores", to_json(p.attention.scores)}});
  auto finite_or_null = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); };
  for (const BlockRecord& b : r.block)
    j["block"].push_back({{"clip", b.clip},
                          {"proxy", b.proxy},
                          {"step", b.step},
                          {"sigma", b.sigma},
                          {"snr_target_db", b.snr_target},
                          {"gemm", b.gemm},
                          {"operands", b.operands},
                          {"heads", b.heads},
                          {"m_tokens", b.rows},
                          {"k", b.k},
                          {"n", b.m},
                          {"macs", b.macs},
                          {"mac_share", b.mac_share},
                          {"tau_over_rms", finite_or_null(b.knob)},
                          {"reuse_ratio", finite_or_null(b.reuse_ratio)},
                          {"savings", b.savings},
                          {"savings_in_block", b.savings_in_block},
                          {"quality", to_json(b.quality)},
                          {"sampled", b.sampled}});
  for (const GapRecord& g : gaps)
    j["gaps"].push_back({{"clip", g.clip},
                           {"proxy", g.proxy},
                         {"step", step_json(g.step)},
                         {"basis", g.basis},
                         {"target", g.target},
                         {"reuse_method", g.reuse_method},
                         {"reuse_reached", g.reuse_reached},
                         {"reuse_snr_db", g.reuse_snr},
                         {"reuse_psnr_db", g.reuse_psnr},
                         {"best_peer", g.best_peer},
                         {"best_peer_snr_db", g.best_peer_snr},
                         {"best_peer_psnr_db", g.best_peer_psnr},
                         {"gap_db", g.valid() ? nlohmann::json(g.gap_db) : nlohmann::json()}});
  return j;
}

// Mean gap over clips and steps for one basis, target and reuse variant;
// NaN unless every (clip, step) has a valid gap.
double mean_gap(const std::vector<GapRecord>& gaps, const std::string& proxy, const std::string& basis, double target,
                const std::string& variant, int* count) {
  double s = 0.0;
  int n = 0, all = 0;
  for (const GapRecord& g : gaps)
    if (g.step != kAllSteps && g.proxy == proxy && g.basis == basis && g.target == target && g.reuse_method == variant) {
      ++all;
      if (g.valid()) {
        s += g.gap_db;
        ++n;
      }
    }
  if (count) *count = n;
  return n == all && n > 0 ? s / n : std::nan("");
}

// Whole-run means per (clip, proxy, method, basis, target) over the steps that reached the target: study.json's
// `trajectory` and summary.md's "Whole trajectory".
struct TrajectoryRow {
  std::string clip, proxy, method, basis;
  double target = 0;
  int steps = 0, reached = 0;
  double savings = 0, snr_out = 0, cos_out = 0, snr_scores = 0, cos_scores = 0;  // means (sums while adding)
};

std::vector<TrajectoryRow> trajectory_rows(const StudyResult& r) {
  std::map<std::tuple<std::string, std::string, std::string, std::string, double>, TrajectoryRow> acc;
  for (const TargetRecord& t : r.targets) {
    TrajectoryRow& a = acc[{t.clip, t.proxy, t.method, t.basis, t.target}];
    a.clip = t.clip;
    a.proxy = t.proxy;
    a.method = t.method;
    a.basis = t.basis;
    a.target = t.target;
    ++a.steps;
    if (!t.reached) continue;
    ++a.reached;
    a.savings += t.achieved;
    a.snr_out += t.snr_out;
    a.cos_out += t.cos_out;
    a.snr_scores += t.snr_scores;
    a.cos_scores += t.cos_scores;
  }
  std::vector<TrajectoryRow> rows;
  for (auto& [key, a] : acc) {
    const double n = a.reached ? a.reached : std::nan("");
    for (double* v : {&a.savings, &a.snr_out, &a.cos_out, &a.snr_scores, &a.cos_scores}) *v /= n;
    rows.push_back(a);
  }
  return rows;
}

// summary.md's whole-run means, when a clip and proxy were studied at more than one step.
void trajectory_md(const StudyResult& r, std::ostringstream& m) {
  const std::vector<TrajectoryRow> rows = trajectory_rows(r);
  if (std::none_of(rows.begin(), rows.end(), [](const TrajectoryRow& a) { return a.steps > 1; })) return;
  m << "## Whole trajectory\n\n";
  m << "Means over the steps studied of each method at each savings target, over the steps that reached it "
       "(n/r: no step did; a step whose savings do not move with the knob, such as sigma = 1 on the denoised proxy, "
       "where every query is the same, does not reach it). SNR means are of the dB figures; a step with an exact "
       "output (infinite SNR) makes the mean infinite.\n\n";
  markdown::Table t({"clip", "proxy", "method", "basis", "target", "steps reached", "mean savings",
                     "mean output SNR / cosine", "mean scores SNR / cosine"});
  for (const TrajectoryRow& a : rows) {
    const bool any = a.reached > 0;
    const bool block = a.method.find("reuse") == std::string::npos;  // masks skip tiles: scores count them as 0
    t.add_row({a.clip, a.proxy, a.method, a.basis, pct(a.target),
               std::to_string(a.reached) + " / " + std::to_string(a.steps), any ? pct(a.savings) : "n/r",
               any ? fixed(a.snr_out, 2) + " dB / " + fixed(a.cos_out, 5) : "n/r",
               !any ? "n/r" : block ? "-" : fixed(a.snr_scores, 2) + " dB / " + fixed(a.cos_scores, 5)});
  }
  m << t.render() << "\n";
}

std::string summary_md(const StudyResult& r, const std::vector<GapRecord>& gaps, const std::vector<std::string>& plots) {
  const StudyOptions& o = r.options;
  std::ostringstream m;
  m << "# Kaleido quality study: channel-wise reuse versus block-sparse peers\n\n";
  m << "Generated by `kaleido study` (kaleido " << version() << ") in " << fixed(r.seconds, 1) << " s with " << o.threads
    << " threads.\n\n";
  m << "**" << r.proxy_statement << "**\n\n";
  m << "## Setup\n\n";
  markdown::Table setup({"item", "value"});
  std::ostringstream v;  // the value cell being written
  auto cell = [&v] {
    std::string text = v.str();
    v.str("");
    return text;
  };
  v << r.model["title"].get<std::string>() << " (hidden " << r.model["hidden"].get<int>() << ", "
    << r.model["heads"].get<int>() << " heads of " << r.model["head_dim"].get<int>() << ", RoPE bands "
    << r.model["rope_band"][0].get<int>() << "/" << r.model["rope_band"][1].get<int>() << "/"
    << r.model["rope_band"][2].get<int>() << ", theta " << r.model["rope_theta"].get<double>() << ")";
  setup.add_row({"model shape", cell()});
  v << r.grid.t << " x " << r.grid.h << " x " << r.grid.w << " = " << r.grid.tokens()
    << " tokens (resolution " << o.resolution << ")";
  setup.add_row({"token grid", cell()});
  for (const ClipRecord& c : r.clips)
    setup.add_row({"clip `" + c.name + "`",
                   c.source + (c.width ? fmt::format(" ({}x{}, {} frames used, start {}, every {})", c.width, c.height,
                                                     c.frames, o.frame_start, o.frame_step)
                                       : std::string())});
  v << "projection seed " << o.head + 1 << ", q-k alignment " << fixed(o.qk_align, 2) << ", positional bias "
    << fixed(o.pos_bias, 2) << ", q/k gain " << fixed(o.qk_gain, 2);
  setup.add_row({"head", cell()});
  for (const StepRecord& s : r.steps)
    if (s.clip == r.steps.front().clip && s.proxy == r.steps.front().proxy)
      v << "step " << step_label(s.step) << " (sigma " << fixed(s.sigma, 3) << ") ";
  v << "of " << o.schedule.steps << ", shift " << fixed(o.schedule.shift, 1);
  setup.add_row({"diffusion steps", cell()});
  v << r.sampled_rows << " query rows (seed " << o.row_seed << ") of " << r.grid.tokens()
    << ", against all " << r.grid.tokens() << " keys; float32";
  setup.add_row({"quality sample", cell()});
  v << "golden model float path, Gw = " << o.group_w
    << ", thresholds tau_g = knob x RMS of group g, scan tile " << o.tile_h << "x" << o.tile_w << " (0 = whole frame)";
  setup.add_row({"reuse", cell()});
  setup.add_row({"blocks", o.block.name() + " tokens for SpargeAttn-, ScalingAttention- and sliding-tile-style; "
                                             "SPADE- and Veda-style pick a 64-token shape per head"});
  m << setup.render() << "\n";
  if (r.steps.empty()) {  // the DiT block on loaded hidden states alone: no attention section has data
    m << "This run studied only the DiT block, on hidden states loaded from .npy; the attention sections of a "
         "full study are left out.\n\n"
      << block_section(r)
      << "## Files\n\n- `block_gemms.csv`: the block table\n- `block_schedule_npy_hidden.json`: its knobs as a "
         "schedule\n- `study.json`: all of it, with the options\n";
    return m.str();
  }
  m << "Shape of the exact attention (mean over the sampled rows): fraction of keys holding 90% of a row's mass, and "
       "mass inside a query-centred 3D window covering 15% of the grid (STA reports about 70% for HunyuanVideo):\n\n";
  markdown::Table shape({"clip", "proxy", "step", "sigma", "latent neighbour correlation t / h / w", "keys for 90%",
                         "mass in 15% window"});
  for (const StepRecord& s : r.steps)
    shape.add_row({slug(s.clip), s.proxy, step_label(s.step), fixed(s.sigma, 3),
                   fixed(s.latent_corr[0], 2) + " / " + fixed(s.latent_corr[1], 2) + " / " + fixed(s.latent_corr[2], 2),
                   pct(s.keys_for_90, 2), pct(s.local_mass)});
  m << shape.render();
  m << "\n" << kAccounting << "\n\n";
  for (const std::string& why : r.skipped) m << "- **Not run:** " << why << "\n";
  if (!r.skipped.empty()) m << "\n";

  m << "## SNR gap at equal MAC savings\n\n";
  m << "Attention-output SNR (10 log10 of signal power over MSE) of channel-wise reuse minus that of the best of the "
       "block-sparse peers (five re-implementations and the oracle-block upper bound), both at the same savings (mean over clips and steps; the paper claims more than 17 dB; "
       "this is what we measure on the proxy). Both are measured against the same exact rows, so the PSNR gap is the "
       "same number. n/r: not reached (see below).\n\n";
  std::vector<std::string> proxies;
  for (const StepRecord& s : r.steps)
    if (std::find(proxies.begin(), proxies.end(), s.proxy) == proxies.end()) proxies.push_back(s.proxy);
  std::vector<markdown::Column> gap_columns = {"proxy", "basis", "target"};
  for (const char* variant : kReuseVariants) gap_columns.emplace_back(variant);
  markdown::Table gap_table(gap_columns);
  for (const std::string& proxy : proxies)
    for (const std::string basis : {"attention", "qk"})
      for (double t : o.targets) {
        std::vector<std::string> cells = {proxy, basis, pct(t, 0)};
        for (const char* variant : kReuseVariants) {
          if (std::find(o.methods.begin(), o.methods.end(), variant) == o.methods.end()) {
            cells.push_back("-");
            continue;
          }
          const double g = mean_gap(gaps, proxy, basis, t, variant, nullptr);
          cells.push_back(std::isnan(g) ? std::string("n/r") : (g >= 0 ? "+" : "") + fixed(g, 2) + " dB");
        }
        gap_table.add_row(std::move(cells));
      }
  m << gap_table.render();
  m << "\nPer clip and step (attention-output SNR in dB, PSNR with peak max |exact| in brackets; best peer named):"
       "\n\n";
  markdown::Table per_step({"clip", "proxy", "step", "basis", "target", "channel-reuse SNR (PSNR)",
                            "best peer SNR (PSNR)", "gap"});
  for (const GapRecord& g : gaps) {
    if (g.reuse_method != "channel-reuse") continue;
    per_step.add_row(
        {slug(g.clip), g.proxy, step_label(g.step), g.basis, pct(g.target, 0),
         g.reuse_reached ? fixed(g.reuse_snr, 2) + " (" + fixed(g.reuse_psnr, 2) + ")" : "n/r",
         g.best_peer.empty() ? "n/r" : fixed(g.best_peer_snr, 2) + " (" + fixed(g.best_peer_psnr, 2) + ") " + g.best_peer,
         g.valid() ? fixed(g.gap_db, 2) : "-"});
  }
  m << per_step.render();

  m << "\n## All methods at the targets\n\n";
  std::set<std::pair<std::string, int>> seen;
  for (const StepRecord& s : r.steps) {
    m << "### " << slug(s.clip) << ", " << s.proxy << " proxy, step " << step_label(s.step) << " (sigma " << fixed(s.sigma, 3) << ")\n\n";
    std::vector<markdown::Column> columns = {"method", "basis"};
    for (double t : o.targets) columns.emplace_back(pct(t, 0) + " SNR / cos");
    markdown::Table methods(columns);
    for (const std::string& meth : o.methods) {
      if (meth == "dense") continue;
      for (const std::string basis : {"attention", "qk"}) {
        bool any = false;
        std::vector<std::string> row = {meth, basis};
        for (double t : o.targets) {
          const TargetRecord* hit = nullptr;
          for (const TargetRecord& tr : r.targets)
            if (tr.clip == s.clip && tr.proxy == s.proxy && tr.step == s.step && tr.method == meth && tr.basis == basis && tr.target == t) hit = &tr;
          if (!hit) {
            row.push_back("-");
            continue;
          }
          any = true;
          if (hit->reached)
            row.push_back(fixed(hit->snr_out, 2) + " / " + fixed(hit->cos_out, 5) + (hit->interpolated ? " (i)" : ""));
          else
            row.push_back("n/r (max " + pct(hit->achieved) + ")");
        }
        if (any) methods.add_row(std::move(row));
      }
    }
    m << methods.render() << "\n";
  }
  m << "(i): interpolated between the two evaluated knob values that bracket the target (discrete knob).\n\n";
  trajectory_md(r, m);

  m << "## Reuse ratio by channel group, axis and step\n\n";
  m << "Channel-wise reuse at a fixed threshold tau_g = " << fixed(o.ref_tau, 2)
    << " x RMS_g (rope-orthogonal policy: a group reuses only along the axes its RoPE band does not rotate).\n\n";
  markdown::Table reuse({"clip", "proxy", "step", "sigma", "overall", "by axis t / h / w",
                         "per group (rope axis: ratio)"});
  for (const StepRecord& s : r.steps) {
    if (!s.reuse_at_ref.contains("groups")) continue;
    const auto& d = s.reuse_at_ref;
    std::string groups;
    for (const auto& g : d["groups"])
      groups += (groups.empty() ? "" : " ") + g["rope_axes"].get<std::string>() + ":" +
                fixed(100.0 * g["reuse_ratio"].get<double>(), 0);
    reuse.add_row({slug(s.clip), s.proxy, step_label(s.step), fixed(s.sigma, 3), pct(d["reuse_ratio"].get<double>()),
                   pct(d["by_axis"]["t"].get<double>()) + " / " + pct(d["by_axis"]["h"].get<double>()) + " / " +
                       pct(d["by_axis"]["w"].get<double>()),
                   groups});
  }
  m << reuse.render();
  m << "\nThreshold needed for 50% Q K^T savings (channel-reuse), by step: ";
  for (const PointRecord& p : r.points)
    if (p.method == "channel-reuse" && p.role == "target" && p.basis == "qk" && std::fabs(p.target - 0.5) < 1e-9)
      m << slug(p.clip) << " " << p.proxy << " step " << step_label(p.step) << ": tau/RMS " << fixed(p.knob, 3) << "; ";
  m << "\n\n";

  if (!r.projection.empty()) {
    m << "## Reuse on the Q, K, V projections\n\n"
         "Channel-wise reuse on the projections' input (the token features, no RoPE: every axis allowed; B = [W_q W_k "
         "W_v]). Savings are of that GEMM's MACs, not of attention, so the block-sparse peers have no counterpart here. "
         "Quality: SNR of V = f W_v, and of the attention output computed from the reused Q, K and V.\n\n";
    markdown::Table projection({"clip", "proxy", "step", "target", "tau/RMS", "reuse by axis t / h / w",
                                "V SNR (dB)", "attention output SNR / cos"});
    for (const ProjectionRecord& p : r.projection)
      if (p.role == "target")
        projection.add_row({slug(p.clip), p.proxy, step_label(p.step), pct(p.target, 0), fixed(p.knob, 3),
                            pct(p.by_axis[0]) + " / " + pct(p.by_axis[1]) + " / " + pct(p.by_axis[2]),
                            fixed(p.v_proj.snr_db, 2),
                            fixed(p.attention.out.snr_db, 2) + " / " + fixed(p.attention.out.cosine, 5)});
    m << projection.render() << "\n";
  }

  m << distance_section(r);
  m << combined_section(r);
  m << block_section(r);

  m << "## Files\n\n- `points.csv`: every evaluated point (method, knob, MACs, savings; SNR, relative L2, "
       "cosine, PSNR with its peak of the output and of Q K^T)\n- `equal_savings.csv`: every method at each target\n"
       "- `gaps.csv`: the SNR gaps\n"
       "- `reuse_groups.csv`: reuse ratio by group and axis\n- `projection.csv`: reuse on the projections' input\n- `study.json`: all of it, with the options\n";
  for (const std::string& p : plots) m << "- `" << p << "`\n";
  m << "\n## What is approximate\n\n"
       "- The inputs are a proxy (above); a real model's activations can be loaded with --q-npy/--k-npy/--v-npy.\n"
       "- Quality is measured on the sampled query rows; work is counted over all tokens.\n"
       "- Peers are re-implementations from public descriptions (docs/study.md lists each interpretation).\n"
       "- P V is dense for reuse except rows that are exact copies, as in the v1 hardware: channel-wise reuse cannot "
       "exceed about 50% attention savings on this basis, so high targets are n/r for it there; the qk basis compares "
       "Q K^T work alone.\n";
  return m.str();
}

}  // namespace

std::vector<GapRecord> equal_savings_gaps(const StudyResult& r) {
  std::vector<GapRecord> out;
  std::vector<std::tuple<std::string, std::string, int>> steps;
  for (const StepRecord& s : r.steps) steps.emplace_back(s.clip, s.proxy, s.step);
  for (const auto& [clip, proxy, step] : steps)
    for (const std::string basis : {"attention", "qk"})
      for (double t : r.options.targets)
        for (const char* variant : kReuseVariants) {
          const TargetRecord* reuse = nullptr;
          const TargetRecord* best = nullptr;
          double sigma = 0.0;
          for (const TargetRecord& tr : r.targets) {
            if (tr.clip != clip || tr.proxy != proxy || tr.step != step || tr.basis != basis || tr.target != t) continue;
            sigma = tr.sigma;
            if (tr.method == variant) reuse = &tr;
            if (is_peer(tr.method) && tr.reached && (!best || tr.snr_out > best->snr_out)) best = &tr;
          }
          if (!reuse) continue;
          GapRecord g;
          g.clip = clip;
          g.proxy = proxy;
          g.step = step;
          g.sigma = sigma;
          g.basis = basis;
          g.target = t;
          g.reuse_method = variant;
          g.reuse_reached = reuse->reached;
          g.reuse_snr = reuse->snr_out;
          g.reuse_psnr = reuse->psnr_out;
          if (best) {
            g.best_peer = best->method;
            g.best_peer_snr = best->snr_out;
            g.best_peer_psnr = best->psnr_out;
          }
          g.gap_db = g.reuse_snr - g.best_peer_snr;
          out.push_back(g);
        }
  // Whole-run rows: means over the steps of each (clip, proxy).
  std::vector<std::pair<std::string, std::string>> runs;
  for (const auto& [clip, proxy, step] : steps)
    if (std::find(runs.begin(), runs.end(), std::make_pair(clip, proxy)) == runs.end()) runs.emplace_back(clip, proxy);
  for (const auto& [clip, proxy] : runs) {
    int nsteps = 0;
    for (const auto& st : steps) nsteps += std::get<0>(st) == clip && std::get<1>(st) == proxy;
    if (nsteps < 2) continue;
    for (const std::string basis : {"attention", "qk"})
      for (double t : r.options.targets) {
        // Mean SNR per method over the steps; NaN unless every step reached the target.
        std::map<std::string, std::pair<double, int>> mean;
        for (const TargetRecord& tr : r.targets)
          if (tr.clip == clip && tr.proxy == proxy && tr.basis == basis && tr.target == t) {
            auto& [sum, n] = mean[tr.method];
            if (tr.reached) sum += tr.snr_out, ++n;
          }
        auto full = [&](const std::string& m) { return mean.count(m) && mean[m].second == nsteps; };
        for (const char* variant : kReuseVariants) {
          if (!mean.count(variant)) continue;
          GapRecord g;
          g.clip = clip;
          g.proxy = proxy;
          g.step = kAllSteps;
          g.sigma = std::nan("");
          g.basis = basis;
          g.target = t;
          g.reuse_method = variant;
          g.reuse_reached = full(variant);
          g.reuse_snr = g.reuse_reached ? mean[variant].first / nsteps : std::nan("");
          g.reuse_psnr = std::nan("");
          for (const auto& [m, v] : mean)
            if (is_peer(m) && full(m) && (g.best_peer.empty() || v.first / nsteps > g.best_peer_snr)) {
              g.best_peer = m;
              g.best_peer_snr = v.first / nsteps;
            }
          g.best_peer_psnr = std::nan("");
          g.gap_db = g.reuse_snr - g.best_peer_snr;
          out.push_back(g);
        }
      }
  }
  return out;
}

nlohmann::json trajectory_json(const StudyResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const TrajectoryRow& a : trajectory_rows(r))
    rows.push_back({{"clip", a.clip},
                    {"proxy", a.proxy},
                    {"method", a.method},
                    {"basis", a.basis},
                    {"target", a.target},
                    {"steps", a.steps},
                    {"steps_reached", a.reached},
                    {"mean_savings", a.savings},
                    {"mean_snr_out_db", a.snr_out},
                    {"mean_cos_out", a.cos_out},
                    {"mean_snr_scores_db", a.snr_scores},
                    {"mean_cos_scores", a.cos_scores}});
  return {{"what", "means over the steps studied of each method at each savings target (steps that reached it)"},
          {"rows", rows}};
}

std::vector<std::string> write_study(const StudyResult& r, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir)) throw FileError(dir, "cannot create the output folder" + (ec ? ": " + ec.message() : ""));
  const std::vector<GapRecord> gaps = equal_savings_gaps(r);
  std::vector<std::string> written, plots;
  auto put = [&](const std::string& name, const std::string& text) {
    write_file_atomic(fs::path(dir) / name, text);
    written.push_back((fs::path(dir) / name).string());
  };

  // Plots: quality against savings per clip and step, and reuse by group.
  for (const StepRecord& s : r.steps) {
    const std::string tag = slug(s.clip) + "_" + s.proxy + "_step" + step_label(s.step);
    for (int kind = 0; kind < 3; ++kind) {
      PlotSpec spec;
      spec.x_percent = true;
      spec.x_marks = r.options.targets;
      spec.y_cap = 80.0;
      const bool qk = kind == 1, scores = kind == 2;
      spec.title = std::string(scores ? "Q K^T" : "Attention output") + " SNR vs " + (qk ? "Q K^T" : "attention") +
                   " MAC savings, " + slug(s.clip) + " (" + s.proxy + "), step " + step_label(s.step) + " (sigma " + fixed(s.sigma, 2) + ")";
      spec.x_label = qk ? "Q K^T MACs skipped" : "Q K^T + P V MACs skipped";
      spec.y_label = scores ? "SNR of Q K^T (dB)" : "SNR of softmax(QK^T/sqrt d) V (dB)";
      std::vector<Series> series;
      for (const std::string& meth : r.options.methods) {
        if (meth == "dense") continue;
        Series se;
        se.name = meth;
        se.dashed = meth.find("reuse") == std::string::npos;
        for (const PointRecord& p : r.points)
          if (p.clip == s.clip && p.proxy == s.proxy && p.step == s.step && p.method == meth)
            se.points.emplace_back(qk ? p.exec.qk_savings() : p.exec.savings(),
                                   scores ? p.quality.scores.snr_db : p.quality.out.snr_db);
        series.push_back(se);
      }
      const std::string name = std::string(scores ? "scores_" : qk ? "quality_qk_" : "quality_") + tag + ".svg";
      put(name, line_plot(spec, series));
      plots.push_back(name);
    }
  }
  std::set<std::pair<std::string, std::string>> clips;
  for (const StepRecord& s : r.steps)
    if (s.reuse_at_ref.contains("groups")) clips.emplace(s.clip, s.proxy);
  for (const auto& [clip, proxy] : clips) {
    std::vector<std::string> cats;
    std::vector<Series> series;
    for (const StepRecord& s : r.steps) {
      if (s.clip != clip || s.proxy != proxy || !s.reuse_at_ref.contains("groups")) continue;
      Series se;
      se.name = "step " + step_label(s.step) + " (sigma " + fixed(s.sigma, 2) + ")";
      cats.clear();
      for (const auto& g : s.reuse_at_ref["groups"]) {
        cats.push_back("g" + std::to_string(g["group"].get<int>()) + ":" + g["rope_axes"].get<std::string>());
        se.points.emplace_back(0.0, g["reuse_ratio"].get<double>());
      }
      series.push_back(se);
    }
    PlotSpec spec;
    spec.title = "Reuse ratio by channel group (RoPE axis) at tau = " + fixed(r.options.ref_tau, 2) + " x RMS, " + slug(clip) + " (" + proxy + ")";
    spec.x_label = "channel group : RoPE band axis";
    spec.y_label = "reuse ratio";
    spec.auto_y = false;
    const std::string name = "reuse_groups_" + slug(clip) + "_" + proxy + ".svg";
    put(name, bar_plot(spec, cats, series));
    plots.push_back(name);
  }

  {
    std::set<std::pair<std::string, std::string>> runs;
    for (const StepRecord& s : r.steps) runs.emplace(s.clip, s.proxy);
    for (const BlockRecord& b : r.block) runs.emplace(b.clip, b.proxy);  // a block on real hidden states has no step
    for (const auto& [clip, proxy] : runs) {
      const std::string text = schedule_csv(r, clip, proxy);
      if (!text.empty()) put("tau_schedule_" + slug(clip) + "_" + proxy + ".csv", text);
      const std::string knobs = block_schedule_json(r, clip, proxy);
      if (!knobs.empty()) put("block_schedule_" + slug(clip) + "_" + proxy + ".json", knobs);
    }
  }
  put("points.csv", points_csv(r));
  put("equal_savings.csv", targets_csv(r));
  put("gaps.csv", gaps_csv(gaps));
  put("reuse_groups.csv", groups_csv(r));
  if (!r.projection.empty()) put("projection.csv", projection_csv(r));
  if (!r.block.empty()) put("block_gemms.csv", block_csv(r));
  put("study.json", result_json(r, gaps).dump() + "\n");
  put("summary.md", summary_md(r, gaps, plots));
  return written;
}

}  // namespace kaleido::study
