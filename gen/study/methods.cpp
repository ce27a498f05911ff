#include "study/methods.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "common/error.hpp"

namespace kaleido::study {

std::vector<double> Method::sweep(int points) const {
  std::vector<double> v;
  const int n = std::max(2, points);
  for (int i = 0; i < n; ++i) v.push_back(knob_min() + (knob_max() - knob_min()) * i / (n - 1));
  return v;
}

namespace {

int64_t dense_macs(const AttentionInputs& in) { return in.grid.tokens() * in.grid.tokens() * in.head_dim; }

// ---------------------------------------------------------------- dense
class DenseMethod : public Method {
 public:
  explicit DenseMethod(const AttentionInputs& in) : in_(in) {}
  std::string name() const override { return "dense"; }
  std::string family() const override { return "dense"; }
  std::string knob() const override { return "-"; }
  double knob_min() const override { return 0.0; }
  double knob_max() const override { return 0.0; }
  bool savings_rise_with_knob() const override { return true; }
  bool continuous() const override { return false; }
  std::vector<double> sweep(int) const override { return {0.0}; }
  Execution execute(double) override {
    Execution e;
    e.dense = e.qk = e.pv = dense_macs(in_);
    return e;
  }
  AttentionQuality evaluate(const AttentionEvaluator& ev) const override { return ev.with_inputs(in_.q); }

 private:
  const AttentionInputs& in_;
};

}  // namespace

std::vector<float> group_rms(const FloatMatrix& x, int group_w) {
  const int G = static_cast<int>(x.cols) / group_w;
  std::vector<float> rms(static_cast<size_t>(G));
  for (int g = 0; g < G; ++g) {
    double s = 0.0;
    for (int64_t i = 0; i < x.rows; ++i)
      for (int c = g * group_w; c < (g + 1) * group_w; ++c) s += static_cast<double>(x.at(i, c)) * x.at(i, c);
    rms[static_cast<size_t>(g)] = static_cast<float>(std::sqrt(s / (static_cast<double>(x.rows) * group_w)));
  }
  return rms;
}

namespace {

// Reuse on Q for S = Q K^T (B = K^T, one output column per key), with Q's RoPE band split.
ReuseConfig q_reuse_config(const AttentionInputs& in, const ReuseMethodSpec& spec) {
  if (spec.group_w < 1 || in.head_dim % spec.group_w)
    throw ConfigError("group-w", std::to_string(spec.group_w),
                      "must divide the head dim " + std::to_string(in.head_dim));
  ReuseConfig c;
  c.grid = in.grid;
  c.channels = in.head_dim;
  c.out_cols = static_cast<int>(in.grid.tokens());
  c.group_w = spec.group_w;
  c.band = BandSplit{"rope", {in.rope.band[0], in.rope.band[1], in.rope.band[2]}};
  c.policy = spec.policy;
  c.mode = spec.mode;
  c.distance = spec.distance;
  c.tile_h = spec.tile_h;
  c.tile_w = spec.tile_w;
  c.validate();
  return c;
}

// Query rows whose every group reuses one and the same reference token: Qhat_i = Qhat_r, so (with the same keys)
// O_i = O_r exactly. -1 for the other rows.
std::vector<int32_t> copied_rows(const FloatReuse& q, int64_t n) {
  std::vector<int32_t> ref(static_cast<size_t>(n), -1);
  for (int64_t i = 0; i < n; ++i) {
    const PairDecision& first = q.at(static_cast<int32_t>(i), 0);
    bool same = first.kind == PairKind::Reuse;
    for (int g = 1; g < q.groups && same; ++g) {
      const PairDecision& p = q.at(static_cast<int32_t>(i), g);
      same = p.kind == PairKind::Reuse && p.ref == first.ref;
    }
    if (same) ref[static_cast<size_t>(i)] = first.ref;
  }
  return ref;
}

// Detector work: one subtract-compare per channel and allowed reference of every token.
int64_t detector_comparisons(const ReuseConfig& c) {
  int64_t refs = 0;
  for (int g = 0; g < c.groups(); ++g) refs += static_cast<int64_t>(c.allowed_axes(g).size());
  return c.grid.tokens() * refs * c.group_w;
}

// ---------------------------------------------------------------- reuse
class ReuseMethod : public Method {
 public:
  ReuseMethod(const AttentionInputs& in, const ReuseMethodSpec& spec) : in_(in), spec_(spec) {
    rope_cfg_ = q_reuse_config(in, spec);
    cfg_ = rope_cfg_;
    if (spec.all_axes) cfg_.band = parse_band_split("none");  // no group is barred from its RoPE axis
    rms_q_ = group_rms(in.q, spec.group_w);
    if (spec.reuse_keys) rms_k_ = group_rms(in.k, spec.group_w);
  }
  std::string name() const override { return spec_.name; }
  std::string family() const override { return "reuse"; }
  std::string knob() const override { return "tau/rms"; }
  double knob_min() const override { return 0.0; }
  double knob_max() const override { return 4.0; }
  double knob_tolerance() const override { return spec_.reuse_p ? 3e-3 : Method::knob_tolerance(); }
  bool savings_rise_with_knob() const override { return true; }
  std::vector<double> sweep(int points) const override {
    // Denser at small thresholds, where quality changes fastest.
    std::vector<double> v;
    const int n = std::max(2, points);
    for (int i = 0; i < n; ++i) {
      const double u = static_cast<double>(i) / (n - 1);
      v.push_back(knob_max() * u * u);
    }
    return v;
  }

  Execution execute(double knob) override {
    knob_ = knob;
    ReuseConfig cq = cfg_;
    cq.tau_float.clear();
    for (float r : rms_q_) cq.tau_float.push_back(static_cast<float>(knob) * r);
    q_ = run_reuse(cq, in_.q);
    const int64_t N = in_.grid.tokens(), d = in_.head_dim, G = cfg_.groups();
    Execution e;
    e.dense = dense_macs(in_);
    if (spec_.reuse_keys) {
      ReuseConfig ck = cfg_;
      ck.tau_float.clear();
      for (float r : rms_k_) ck.tau_float.push_back(static_cast<float>(knob) * r);
      k_ = run_reuse(ck, in_.k);
      e.qk = 0;
      for (int g = 0; g < G; ++g) {
        const int64_t cq_g = N - q_.counters.reused_per_group[static_cast<size_t>(g)];
        const int64_t ck_g = N - k_.counters.reused_per_group[static_cast<size_t>(g)];
        e.qk += cq_g * ck_g * cfg_.group_w;
      }
    } else {
      k_ = FloatReuse{};
      e.qk = q_.counters.macs_issued;  // compute pairs * Gw * M, M = N_k
    }
    const std::vector<int32_t> copied = copied_rows(q_, N);
    identical_rows_ = N - std::count(copied.begin(), copied.end(), -1);
    e.pv = (N - identical_rows_) * N * d;
    e.overhead = detector_comparisons(cfg_) * (spec_.reuse_keys ? 2 : 1);
    if (spec_.reuse_p) execute_pv(knob, e);
    e.overhead_kind = "detector comparisons";
    return e;
  }

  AttentionQuality evaluate(const AttentionEvaluator& ev) const override {
    if (spec_.reuse_p)
      return ev.with_probabilities(q_.a_eff, [this](int32_t tok) -> const float* {
        const int32_t r = p_kept_index_[static_cast<size_t>(tok)];
        return r < 0 ? nullptr : p_hat_.row(r);
      });
    return ev.with_inputs(q_.a_eff, spec_.reuse_keys ? &k_.a_eff : nullptr);
  }

  nlohmann::json detail() const override {
    const int64_t N = in_.grid.tokens();
    const int G = cfg_.groups();
    nlohmann::json groups = nlohmann::json::array();
    for (int g = 0; g < G; ++g) {
      std::string allowed;
      for (Axis a : cfg_.allowed_axes(g)) allowed += axis_name(a);
      groups.push_back({{"group", g},
                        {"channels", std::to_string(g * cfg_.group_w) + "-" + std::to_string((g + 1) * cfg_.group_w - 1)},
                        {"rope_axes", mask_name(rope_cfg_.rope_mask(g))},
                        {"allowed_axes", allowed.empty() ? "-" : allowed},
                        {"tau", knob_ * rms_q_[static_cast<size_t>(g)]},
                        {"reuse_ratio", q_.counters.group_ratio(g, N)}});
    }
    // Per group and axis: recount from the decisions (the counters sum over groups).
    std::vector<std::array<int64_t, kNumAxes>> by_axis(static_cast<size_t>(G), std::array<int64_t, kNumAxes>{});
    for (int64_t i = 0; i < N; ++i)
      for (int g = 0; g < G; ++g) {
        const PairDecision& p = q_.at(static_cast<int32_t>(i), g);
        if (p.kind == PairKind::Reuse) ++by_axis[static_cast<size_t>(g)][static_cast<size_t>(p.axis)];
      }
    for (int g = 0; g < G; ++g)
      groups[static_cast<size_t>(g)]["by_axis"] = {
          {"t", static_cast<double>(by_axis[static_cast<size_t>(g)][0]) / static_cast<double>(N)},
          {"h", static_cast<double>(by_axis[static_cast<size_t>(g)][1]) / static_cast<double>(N)},
          {"w", static_cast<double>(by_axis[static_cast<size_t>(g)][2]) / static_cast<double>(N)}};
    const auto& c = q_.counters;
    nlohmann::json j = {{"group_w", cfg_.group_w},
                        {"policy", policy_name(cfg_.policy)},
                        {"all_axes", spec_.all_axes},
                        {"distance", distance_name(cfg_.distance)},
                        {"mode", mode_name(cfg_.mode)},
                        {"reuse_ratio", c.reuse_ratio()},
                        {"by_axis",
                         {{"t", static_cast<double>(c.reused_per_axis[0]) / static_cast<double>(c.pairs)},
                          {"h", static_cast<double>(c.reused_per_axis[1]) / static_cast<double>(c.pairs)},
                          {"w", static_cast<double>(c.reused_per_axis[2]) / static_cast<double>(c.pairs)}}},
                        {"tokens_fully_reused", c.tokens_fully_reused},
                        {"rows_identical", identical_rows_},
                        {"groups", groups}};
    if (spec_.reuse_keys) j["key_reuse_ratio"] = k_.counters.reuse_ratio();
    if (spec_.reuse_p) j["p_reuse_ratio"] = p_counters_.reuse_ratio();
    return j;
  }

 private:
  // Rows of P = softmax(Qhat K^T / sqrt d) of `tokens`, zero-padded to `cols`, handed to fn in that order.
  void probabilities_in_order(const AttentionInputs& hat, const std::vector<int32_t>& tokens, int64_t cols,
                              const std::function<void(int32_t, const float*)>& fn) const {
    const int64_t N = hat.k.rows;
    std::vector<float> padded(static_cast<size_t>(cols), 0.0f);
    attention_probabilities(hat, tokens, spec_.threads, [&](size_t i, const float* row) {
      std::copy(row, row + N, padded.data());
      fn(tokens[i], padded.data());
    });
  }

  // Closed-loop reuse on P's key groups, P streamed in scan order (only the reference window's rows are held):
  // a first pass for the groups' RMS (the thresholds' unit, summed in token order as group_rms does), a second
  // for the decisions. P V MACs counted per computed (query, key group) pair over the group's real keys.
  void execute_pv(double knob, Execution& e) {
    const int64_t N = in_.grid.tokens(), d = in_.head_dim, gw = spec_.group_w;
    const int64_t Np = (N + gw - 1) / gw * gw, G = Np / gw;
    AttentionInputs hat = in_;
    hat.q = q_.a_eff;
    ReuseConfig cp;
    cp.grid = in_.grid;
    cp.channels = static_cast<int>(Np);
    cp.out_cols = static_cast<int>(d);  // B = V
    cp.group_w = static_cast<int>(gw);
    cp.band = parse_band_split("none");  // P has no RoPE: every axis allowed
    cp.policy = spec_.policy;
    cp.distance = spec_.distance;
    cp.tile_h = spec_.tile_h;
    cp.tile_w = spec_.tile_w;
    cp.validate();

    std::vector<int32_t> order(static_cast<size_t>(N));
    for (int64_t i = 0; i < N; ++i) order[static_cast<size_t>(i)] = static_cast<int32_t>(i);
    std::vector<double> sum(static_cast<size_t>(G), 0.0);
    probabilities_in_order(hat, order, Np, [&](int32_t, const float* row) {
      for (int64_t g = 0; g < G; ++g)
        for (int64_t c = g * gw; c < (g + 1) * gw; ++c) sum[static_cast<size_t>(g)] += static_cast<double>(row[c]) * row[c];
    });
    for (double s : sum)
      cp.tau_float.push_back(static_cast<float>(knob) *
                             static_cast<float>(std::sqrt(s / (static_cast<double>(N) * static_cast<double>(gw)))));

    StreamedReuse st(cp);
    for (int64_t pos = 0; pos < N; ++pos) order[static_cast<size_t>(pos)] = st.scan().token_at(pos);
    p_kept_index_.assign(static_cast<size_t>(N), -1);
    const bool all = spec_.kept_rows.empty();
    const int64_t kept = all ? N : static_cast<int64_t>(spec_.kept_rows.size());
    for (int64_t r = 0; r < kept; ++r) {
      const int64_t tok = all ? r : spec_.kept_rows[static_cast<size_t>(r)];
      if (tok < 0 || tok >= N) throw InternalError("reuse on P V: kept row " + std::to_string(tok) + " is not a token");
      p_kept_index_[static_cast<size_t>(tok)] = static_cast<int32_t>(r);
    }
    p_hat_ = FloatMatrix(kept, Np);
    probabilities_in_order(hat, order, Np, [&](int32_t tok, const float* row) {
      const float* ahat = st.push(row);
      const int32_t r = p_kept_index_[static_cast<size_t>(tok)];
      if (r >= 0) std::copy(ahat, ahat + Np, p_hat_.row(r));
    });
    p_counters_ = st.counters();
    e.pv = 0;
    int64_t refs = 0;
    for (int g = 0; g < cp.groups(); ++g) {
      const int64_t keys = std::min<int64_t>(gw, N - g * gw);
      e.pv += (N - p_counters_.reused_per_group[static_cast<size_t>(g)]) * keys * d;
      refs += static_cast<int64_t>(cp.allowed_axes(g).size());
    }
    e.overhead += N * refs * gw;
  }

  const AttentionInputs& in_;
  ReuseMethodSpec spec_;
  ReuseConfig cfg_;
  ReuseConfig rope_cfg_;  // cfg_ with Q's RoPE band, to name each group's RoPE axes
  std::vector<float> rms_q_, rms_k_;
  FloatReuse q_, k_;
  ReuseCounters p_counters_;             // reuse on P (reuse_p)
  FloatMatrix p_hat_;                    // Phat rows of the kept tokens
  std::vector<int32_t> p_kept_index_;    // token -> row of p_hat_, or -1
  double knob_ = 0.0;
  int64_t identical_rows_ = 0;
};

// --------------------------------------------------------- block-sparse
class MaskMethod : public Method {
 public:
  explicit MaskMethod(const AttentionInputs& in) : in_(in) {}
  std::string family() const override { return "block-sparse"; }
  AttentionQuality evaluate(const AttentionEvaluator& ev) const override { return ev.with_mask(*layout_, mask_); }
  Execution execute(double knob) override {
    knob_ = knob;
    mask_ = make_mask(knob);
    Execution e;
    e.dense = dense_macs(in_);
    e.qk = e.pv = mask_macs(*layout_, mask_, in_.head_dim);
    e.overhead = overhead();
    e.overhead_kind = "mask estimation MACs";
    return e;
  }
  nlohmann::json detail() const override {
    nlohmann::json j = {{"block", layout_->shape().name()},
                        {"blocks", layout_->count()},
                        {"tiles_kept", mask_.kept()},
                        {"tiles", static_cast<int64_t>(mask_.nq) * mask_.nk}};
    extra(j);
    return j;
  }

 protected:
  virtual BlockMask make_mask(double knob) = 0;
  virtual int64_t overhead() const { return 0; }
  virtual void extra(nlohmann::json&) const {}
  const AttentionInputs& in_;
  const BlockLayout* layout_ = nullptr;
  BlockMask mask_;
  double knob_ = 0.0;
};

class SpadeMethod : public MaskMethod {
 public:
  SpadeMethod(const AttentionInputs& in, const PeerParams& p) : MaskMethod(in), p_(p) {
    plan_ = spade_plan(in.q, in.k, in.grid, candidate_shapes_64());
    layout_ = &plan_.layout;
    const double per = (1.0 - plan_.sim) * (1.0 - p.progress);
    max_factor_ = per > 0.0 ? 1.0 / per : 1.0;  // k reaches Nblocks
  }
  std::string name() const override { return "spade-style"; }
  std::string knob() const override { return "factor"; }
  double knob_min() const override { return 0.0; }
  double knob_max() const override { return max_factor_; }
  bool savings_rise_with_knob() const override { return false; }

 protected:
  BlockMask make_mask(double knob) override { return spade_mask(plan_, knob, p_.progress, p_.spade_shortcut, &shortcut_); }
  int64_t overhead() const override {
    const int64_t nb = plan_.layout.count();
    return shortcut_ ? 0 : 2 * nb * nb * in_.head_dim;
  }
  void extra(nlohmann::json& j) const override {
    j["head_similarity"] = plan_.sim;
    j["shortcut"] = shortcut_;
    j["topk"] = shortcut_ ? 0 : spade_topk(plan_.sim, p_.progress, knob_, plan_.layout.count());
    j["progress"] = p_.progress;
  }

 private:
  PeerParams p_;
  SpadePlan plan_;
  double max_factor_ = 1.0;
  bool shortcut_ = false;
};

class SpargeMethod : public MaskMethod {
 public:
  SpargeMethod(const AttentionInputs& in, const PeerParams& p) : MaskMethod(in), p_(p) {
    plan_ = sparge_plan(in.q, in.k, in.grid, p.block, p.sparge_sim);
    layout_ = &plan_.layout;
  }
  std::string name() const override { return "spargeattn-style"; }
  std::string knob() const override { return "cdf"; }
  double knob_min() const override { return 0.0; }
  double knob_max() const override { return 1.0; }
  bool savings_rise_with_knob() const override { return false; }

 protected:
  BlockMask make_mask(double knob) override { return sparge_mask(plan_, knob); }
  int64_t overhead() const override {
    const int64_t nb = plan_.layout.count();
    return nb * nb * in_.head_dim;
  }
  void extra(nlohmann::json& j) const override {
    j["query_blocks_whole"] = std::count(plan_.q_whole.begin(), plan_.q_whole.end(), 1);
    j["key_blocks_whole"] = std::count(plan_.k_whole.begin(), plan_.k_whole.end(), 1);
    j["sim_threshold"] = p_.sparge_sim;
  }

 private:
  PeerParams p_;
  SpargePlan plan_;
};

class GreedyMethod : public MaskMethod {
 public:
  GreedyMethod(const AttentionInputs& in, std::string name, GreedyPlan plan, int64_t overhead_macs)
      : MaskMethod(in), name_(std::move(name)), plan_(std::move(plan)), overhead_(overhead_macs) {
    layout_ = &plan_.layout;
  }
  std::string name() const override { return name_; }
  std::string knob() const override { return "keep"; }
  double knob_min() const override { return 0.0; }
  double knob_max() const override { return 1.0; }
  bool savings_rise_with_knob() const override { return false; }

 protected:
  BlockMask make_mask(double knob) override { return greedy_mask(plan_, knob); }
  int64_t overhead() const override { return overhead_; }

 private:
  std::string name_;
  GreedyPlan plan_;
  int64_t overhead_;
};

class SlidingTileMethod : public MaskMethod {
 public:
  SlidingTileMethod(const AttentionInputs& in, const PeerParams& p) : MaskMethod(in), layout_own_(in.grid, p.block) {
    layout_ = &layout_own_;
  }
  std::string name() const override { return "sliding-tile-style"; }
  std::string knob() const override { return "window"; }
  double knob_min() const override { return 0.0; }
  double knob_max() const override { return 1.0; }
  bool savings_rise_with_knob() const override { return false; }
  bool continuous() const override { return false; }
  std::vector<double> sweep(int points) const override {
    // Every distinct window that a size in [0, 1] produces, at most `points` of them.
    std::vector<double> all;
    std::set<std::array<int, 3>> seen;
    for (int i = 0; i <= 1000; ++i) {
      const double s = i / 1000.0;
      if (seen.insert(sliding_tile_radius(layout_own_, s)).second) all.push_back(s);
    }
    if (static_cast<int>(all.size()) <= points) return all;
    std::vector<double> v;
    for (int i = 0; i < points; ++i) v.push_back(all[static_cast<size_t>(i * (static_cast<int>(all.size()) - 1) / (points - 1))]);
    return v;
  }

 protected:
  BlockMask make_mask(double knob) override { return sliding_tile_mask(layout_own_, sliding_tile_radius(layout_own_, knob)); }
  void extra(nlohmann::json& j) const override {
    const auto r = sliding_tile_radius(layout_own_, knob_);
    j["radius_tiles"] = {r[0], r[1], r[2]};
  }

 private:
  BlockLayout layout_own_;
};

// ------------------------------------------------- block mask + reuse
class BlockReuseMethod : public Method {
 public:
  BlockReuseMethod(const AttentionInputs& in, GreedyPlan plan, const ReuseMethodSpec& spec, double tau_over_rms)
      : in_(in), plan_(std::move(plan)), cfg_(q_reuse_config(in, spec)), tau_over_rms_(tau_over_rms) {
    if (!(tau_over_rms >= 0.0))
      throw ConfigError("block-reuse-tau", std::to_string(tau_over_rms), "must be >= 0 (tau/RMS of a Q group)");
    for (float r : group_rms(in.q, spec.group_w)) cfg_.tau_float.push_back(static_cast<float>(tau_over_rms) * r);
    q_ = run_reuse(cfg_, in.q);  // the decisions do not depend on the mask
    copied_ = copied_rows(q_, in.grid.tokens());
  }
  std::string name() const override { return "oracle-block-reuse"; }
  std::string family() const override { return "combined"; }
  std::string knob() const override { return "keep"; }
  double knob_min() const override { return 0.0; }
  double knob_max() const override { return 1.0; }
  bool savings_rise_with_knob() const override { return false; }

  Execution execute(double keep) override {
    mask_ = greedy_mask(plan_, keep);
    const BlockLayout& L = plan_.layout;
    const int nb = L.count();
    const int64_t N = in_.grid.tokens(), d = in_.head_dim, gw = cfg_.group_w;
    std::vector<int64_t> kept_keys(static_cast<size_t>(nb), 0);
    for (int a = 0; a < nb; ++a)
      for (int b = 0; b < nb; ++b)
        if (mask_.at(a, b)) kept_keys[static_cast<size_t>(a)] += L.size(b);
    // Keys kept for query block a but not for a2, cached per pair of blocks (few pairs: references are neighbours).
    std::vector<int64_t> missing(static_cast<size_t>(nb) * static_cast<size_t>(nb), -1);
    auto missing_keys = [&](int a, int a2) {
      int64_t& m = missing[static_cast<size_t>(a) * static_cast<size_t>(nb) + static_cast<size_t>(a2)];
      if (m < 0) {
        m = 0;
        for (int b = 0; b < nb; ++b)
          if (mask_.at(a, b) && !mask_.at(a2, b)) m += L.size(b);
      }
      return m;
    };
    Execution e;
    e.dense = dense_macs(in_);
    qk_skipped_in_tiles_ = 0;
    copied_rows_ = 0;
    for (int64_t i = 0; i < N; ++i) {
      const int a = L.block_of(static_cast<int32_t>(i));
      const int64_t full = gw * kept_keys[static_cast<size_t>(a)];
      for (int g = 0; g < q_.groups; ++g) {
        const PairDecision& p = q_.at(static_cast<int32_t>(i), g);
        const int64_t cost = p.kind == PairKind::Reuse ? gw * missing_keys(a, L.block_of(p.ref)) : full;
        e.qk += cost;
        qk_skipped_in_tiles_ += full - cost;
      }
      const int32_t r = copied_[static_cast<size_t>(i)];
      const bool copy = r >= 0 && missing_keys(a, L.block_of(r)) == 0 && missing_keys(L.block_of(r), a) == 0;
      copied_rows_ += copy;
      e.pv += copy ? 0 : kept_keys[static_cast<size_t>(a)] * d;
    }
    e.overhead = detector_comparisons(cfg_);
    e.overhead_kind = "detector comparisons";
    return e;
  }
  AttentionQuality evaluate(const AttentionEvaluator& ev) const override {
    return ev.with_mask(plan_.layout, mask_, &q_.a_eff);
  }
  nlohmann::json detail() const override {
    return {{"block", plan_.layout.shape().name()},
            {"blocks", plan_.layout.count()},
            {"tiles_kept", mask_.kept()},
            {"tiles", static_cast<int64_t>(mask_.nq) * mask_.nk},
            {"tau_over_rms", tau_over_rms_},
            {"policy", policy_name(cfg_.policy)},
            {"distance", distance_name(cfg_.distance)},
            {"reuse_ratio", q_.counters.reuse_ratio()},
            {"qk_macs_skipped_in_kept_tiles", qk_skipped_in_tiles_},
            {"rows_copied", copied_rows_}};
  }

 private:
  const AttentionInputs& in_;
  GreedyPlan plan_;
  ReuseConfig cfg_;
  double tau_over_rms_;
  FloatReuse q_;
  std::vector<int32_t> copied_;
  BlockMask mask_;
  int64_t qk_skipped_in_tiles_ = 0, copied_rows_ = 0;
};

// The oracle's plan: the exact tile mass (shared through PeerParams when the step computed it once).
GreedyPlan oracle_plan(const AttentionInputs& in, const PeerParams& p) {
  BlockLayout layout(in.grid, p.block);
  const std::vector<double> mass = p.oracle_mass ? *p.oracle_mass : exact_block_attention_mass(in, layout, p.threads);
  if (mass.size() != static_cast<size_t>(layout.count()) * static_cast<size_t>(layout.count()))
    throw InternalError("oracle block mask: the tile mass does not match the block layout");
  return scaling_plan(layout, mass);
}

}  // namespace

std::unique_ptr<Method> make_reuse_method(const AttentionInputs& in, const ReuseMethodSpec& spec) {
  return std::make_unique<ReuseMethod>(in, spec);
}
std::unique_ptr<Method> make_dense_method(const AttentionInputs& in) { return std::make_unique<DenseMethod>(in); }
std::unique_ptr<Method> make_spade_method(const AttentionInputs& in, const PeerParams& p) {
  return std::make_unique<SpadeMethod>(in, p);
}
std::unique_ptr<Method> make_sparge_method(const AttentionInputs& in, const PeerParams& p) {
  return std::make_unique<SpargeMethod>(in, p);
}
std::unique_ptr<Method> make_veda_method(const AttentionInputs& in, const PeerParams& p) {
  (void)p;
  GreedyPlan plan = veda_plan(in.q, in.k, in.grid, candidate_shapes_64());
  const int64_t nb = plan.layout.count();
  return std::make_unique<GreedyMethod>(in, "veda-style", std::move(plan), 3 * nb * nb * in.head_dim);
}
std::unique_ptr<Method> make_scaling_method(const AttentionInputs& in, const PeerParams& p) {
  if (!p.calibration) throw Error("ScalingAttention-style needs calibration inputs");
  BlockLayout layout(in.grid, p.block);
  const std::vector<double> mass =
      block_attention_mass(*p.calibration, layout, p.calibration_rows_per_block, p.seed, p.threads);
  return std::make_unique<GreedyMethod>(in, "scalingattention-style", scaling_plan(layout, mass), 0);
}
std::unique_ptr<Method> make_oracle_block_method(const AttentionInputs& in, const PeerParams& p) {
  return std::make_unique<GreedyMethod>(in, "oracle-block", oracle_plan(in, p), 0);
}
std::unique_ptr<Method> make_oracle_block_reuse_method(const AttentionInputs& in, const PeerParams& p,
                                                       const ReuseMethodSpec& reuse, double tau_over_rms) {
  return std::make_unique<BlockReuseMethod>(in, oracle_plan(in, p), reuse, tau_over_rms);
}
std::unique_ptr<Method> make_sliding_tile_method(const AttentionInputs& in, const PeerParams& p) {
  return std::make_unique<SlidingTileMethod>(in, p);
}

KnobSearch find_knob(Method& m, double target, bool qk_basis, int sweep_points) {
  auto saving = [qk_basis](const Execution& e) { return qk_basis ? e.qk_savings() : e.savings(); };
  KnobSearch best;
  double best_err = 1e30;
  auto consider = [&](double knob) {
    const Execution e = m.execute(knob);
    const double err = std::fabs(saving(e) - target);
    if (err < best_err) {
      best_err = err;
      best = {knob, e, saving(e)};
    }
    return saving(e);
  };
  if (m.continuous()) {
    double lo = m.knob_min(), hi = m.knob_max();
    const bool rise = m.savings_rise_with_knob();
    // A target beyond the method's reach needs no search.
    if (consider(rise ? hi : lo) < target - 0.01) {
      m.execute(best.knob);
      return best;
    }
    for (int it = 0; it < 40 && best_err > m.knob_tolerance(); ++it) {
      const double mid = 0.5 * (lo + hi);
      const double s = consider(mid);
      if ((s < target) == rise)
        lo = mid;
      else
        hi = mid;
    }
    consider(m.knob_min());
    consider(m.knob_max());
  } else {
    for (double k : m.sweep(sweep_points)) consider(k);
  }
  m.execute(best.knob);
  return best;
}

}  // namespace kaleido::study
