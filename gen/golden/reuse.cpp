#include "golden/reuse.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "common/error.hpp"

namespace kaleido {

namespace {

// Difference type and threshold per element type: exact integers, or floats.
template <class T>
struct Traits;
template <>
struct Traits<int32_t> {
  using Diff = int64_t;
  static Diff abs_diff(int32_t x, int32_t y) { return std::llabs(static_cast<int64_t>(x) - y); }
  static Diff tau(const ReuseConfig& c, int g) { return c.tau_of(g); }
  static void check_input(const ReuseConfig& c, const IntMatrix& a) {
    if (c.distance != Distance::Max)
      throw ConfigError("distance", distance_name(c.distance),
                        "the integer path models the RTL detector, which computes max |x - y| over a group; l1 and "
                        "l2 are for the float path (the study)");
    const int32_t lo = -(1 << (c.data_w - 1)), hi = (1 << (c.data_w - 1)) - 1;
    for (int32_t v : a.data)
      if (v < lo || v > hi)
        throw ConfigError("A", std::to_string(v), "does not fit DATA_W = " + std::to_string(c.data_w) + " signed bits");
  }
};
template <>
struct Traits<float> {
  using Diff = float;
  static Diff abs_diff(float x, float y) { return std::fabs(x - y); }
  static Diff tau(const ReuseConfig& c, int g) { return c.tau_float_of(g); }
  static void check_input(const ReuseConfig&, const FloatMatrix& a) {
    for (float v : a.data)
      if (!std::isfinite(v)) throw ConfigError("A", std::to_string(v), "inputs must be finite");
  }
};

template <class T>
class Engine {
  using Diff = typename Traits<T>::Diff;

 public:
  Engine(const ReuseConfig& cfg, const Matrix<T>& a) : cfg_(cfg), a_(a), scan_(cfg.grid, cfg.tile_h, cfg.tile_w) {}

  ReuseResult<T> run() {
    cfg_.validate();
    if (a_.rows != cfg_.grid.tokens() || a_.cols != cfg_.channels)
      throw ConfigError("A", std::to_string(a_.rows) + "x" + std::to_string(a_.cols),
                        "must be N x K = " + std::to_string(cfg_.grid.tokens()) + "x" + std::to_string(cfg_.channels));
    Traits<T>::check_input(cfg_, a_);

    const int G = cfg_.groups();
    res_.groups = G;
    res_.a_eff = a_;
    res_.decisions.assign(static_cast<size_t>(a_.rows) * static_cast<size_t>(G), PairDecision{});
    res_.required_window_depth = scan_.required_window_depth();
    res_.window_depth = cfg_.window_depth > 0 ? cfg_.window_depth : res_.required_window_depth;
    res_.counters.reused_per_group.assign(static_cast<size_t>(G), 0);
    for (int g = 0; g < G; ++g) allowed_.push_back(cfg_.allowed_axes(g));

    for (int64_t pos = 0; pos < scan_.size(); ++pos) {
      const int32_t tok = scan_.token_at(pos);
      if (cfg_.mode == Mode::TokenReuse)
        decide_token(tok, pos);
      else
        for (int g = 0; g < G; ++g) decide_pair(tok, pos, g);
    }
    count();
    return std::move(res_);
  }

 private:
  // The reference of `tok` along `axis` if the window holds it, else -1.
  int32_t available_ref(int32_t tok, int64_t pos, Axis axis, bool count_drop) {
    const int32_t r = scan_.reference(tok, axis);
    if (r < 0) return -1;
    if (pos - scan_.pos_of(r) > res_.window_depth) {
      if (count_drop) ++res_.counters.refs_beyond_window;
      return -1;
    }
    return r;
  }

  // The distance of (tok, g) from ref, on the scale of limit(g) (config.hpp, Distance). Doubles hold the
  // detector's max exactly (integer differences of at most DATA_W+1 bits, or floats), so max decides and ranks
  // references bit-identically to comparing the differences themselves.
  double difference(int32_t tok, int32_t ref, int g) const {
    const int c0 = g * cfg_.group_w;
    const T* x = a_.row(tok) + c0;
    // Closed loop: against the reference's effective inputs. Open loop: raw.
    const T* y = (cfg_.closed_loop ? res_.a_eff.row(ref) : a_.row(ref)) + c0;
    if (cfg_.distance == Distance::Max) {
      Diff d{};
      for (int c = 0; c < cfg_.group_w; ++c) d = std::max(d, Traits<T>::abs_diff(x[c], y[c]));
      return static_cast<double>(d);
    }
    double sum = 0.0;
    for (int c = 0; c < cfg_.group_w; ++c) {
      const double e = static_cast<double>(x[c]) - static_cast<double>(y[c]);
      sum += cfg_.distance == Distance::L1 ? std::fabs(e) : e * e;
    }
    return sum;
  }

  // The largest passing distance of group g: tau (max), Gw tau (l1: mean |x - y| <= tau), Gw tau^2 (l2: RMS
  // difference <= tau).
  double limit(int g) const {
    const double tau = static_cast<double>(Traits<T>::tau(cfg_, g));
    switch (cfg_.distance) {
      case Distance::Max: return tau;
      case Distance::L1: return cfg_.group_w * tau;
      case Distance::L2: return cfg_.group_w * tau * tau;
    }
    return tau;
  }

  void set_reuse(int32_t tok, int g, Axis axis, int32_t ref) {
    PairDecision& p = pair(tok, g);
    p.kind = PairKind::Reuse;
    p.axis = axis;
    p.ref = ref;
    p.root = pair(ref, g).root;
    const int c0 = g * cfg_.group_w;
    std::copy(res_.a_eff.row(ref) + c0, res_.a_eff.row(ref) + c0 + cfg_.group_w, res_.a_eff.row(tok) + c0);
  }

  void set_compute(int32_t tok, int g) {
    PairDecision& p = pair(tok, g);
    p.kind = PairKind::Compute;
    p.ref = -1;
    p.root = tok;
  }

  PairDecision& pair(int32_t tok, int g) {
    return res_.decisions[static_cast<size_t>(tok) * static_cast<size_t>(res_.groups) + static_cast<size_t>(g)];
  }

  void decide_pair(int32_t tok, int64_t pos, int g) {
    set_compute(tok, g);
    if (cfg_.mode == Mode::Dense) return;
    const bool enabled = cfg_.group_enabled(g);
    bool found = false;
    double best = 0.0;
    Axis best_axis = Axis::T;
    int32_t best_ref = -1;
    const std::vector<Axis>& axes = allowed_[static_cast<size_t>(g)];
    int32_t refs[kNumAxes];
    for (size_t k = 0; k < axes.size(); ++k) refs[k] = available_ref(tok, pos, axes[k], enabled);
    if (!enabled) return;
    const double tau = limit(g);
    for (size_t k = 0; k < axes.size(); ++k) {
      const Axis axis = axes[k];
      const int32_t r = refs[k];
      if (r < 0) continue;
      const double d = difference(tok, r, g);
      if (d > tau) continue;
      if (!found || d < best) {
        found = true;
        best = d;
        best_axis = axis;
        best_ref = r;
      }
      if (cfg_.policy != Policy::Adaptive) break;  // first passing reference wins
    }
    if (found) set_reuse(tok, g, best_axis, best_ref);
  }

  // Token-level baseline: reuse the whole token from the first reference (in
  // fixed_axes order) for which every group passes its threshold.
  void decide_token(int32_t tok, int64_t pos) {
    const int G = res_.groups;
    for (int g = 0; g < G; ++g) set_compute(tok, g);
    for (Axis axis : cfg_.fixed_axes) {
      const int32_t r = available_ref(tok, pos, axis, true);
      if (r < 0) continue;
      bool all = true;
      for (int g = 0; g < G && all; ++g)
        all = cfg_.group_enabled(g) && difference(tok, r, g) <= limit(g);
      if (all) {
        for (int g = 0; g < G; ++g) set_reuse(tok, g, axis, r);
        return;
      }
    }
  }

  void count() {
    ReuseCounters& c = res_.counters;
    const int G = res_.groups;
    const int64_t macs_per_pair = static_cast<int64_t>(cfg_.group_w) * cfg_.out_cols;
    for (int64_t tok = 0; tok < a_.rows; ++tok) {
      int reused = 0;
      for (int g = 0; g < G; ++g) {
        const PairDecision& p = res_.decisions[static_cast<size_t>(tok * G + g)];
        ++c.pairs;
        if (p.kind == PairKind::Reuse) {
          ++reused;
          ++c.reused_pairs;
          ++c.reused_per_group[static_cast<size_t>(g)];
          ++c.reused_per_axis[static_cast<size_t>(p.axis)];
        }
      }
      if (reused == G) ++c.tokens_fully_reused;
    }
    c.macs_issued = (c.pairs - c.reused_pairs) * macs_per_pair;
    c.macs_skipped = c.reused_pairs * macs_per_pair;
  }

  const ReuseConfig& cfg_;
  const Matrix<T>& a_;
  ScanOrder scan_;
  ReuseResult<T> res_;
  std::vector<std::vector<Axis>> allowed_;
};

}  // namespace

IntReuse run_reuse(const ReuseConfig& cfg, const IntMatrix& a) { return Engine<int32_t>(cfg, a).run(); }
FloatReuse run_reuse(const ReuseConfig& cfg, const FloatMatrix& a) { return Engine<float>(cfg, a).run(); }

int64_t group_difference(const IntMatrix& a, const IntMatrix& a_eff, int32_t token, int32_t ref, int g, int group_w) {
  int64_t d = 0;
  for (int c = g * group_w; c < (g + 1) * group_w; ++c)
    d = std::max<int64_t>(d, std::llabs(static_cast<int64_t>(a.at(token, c)) - a_eff.at(ref, c)));
  return d;
}

}  // namespace kaleido
