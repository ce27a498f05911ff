#include "golden/reuse.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "common/error.hpp"

namespace kaleido {

// Named (not anonymous): StreamedReuse::Impl holds an Engine.
namespace reuse_engine {

// Difference type and threshold per element type: exact integers, or floats.
template <class T>
struct Traits;
template <>
struct Traits<int32_t> {
  using Diff = int64_t;
  static Diff abs_diff(int32_t x, int32_t y) { return std::llabs(static_cast<int64_t>(x) - y); }
  static Diff tau(const ReuseConfig& c, int g) { return c.tau_of(g); }
  static void check_input(const ReuseConfig& c, const int32_t* a, size_t n) {
    if (c.distance != Distance::Max)
      throw ConfigError("distance", distance_name(c.distance),
                        "the integer path models the RTL detector, which computes max |x - y| over a group; l1 and "
                        "l2 are for the float path (the study)");
    const int32_t lo = -(1 << (c.data_w - 1)), hi = (1 << (c.data_w - 1)) - 1;
    for (const int32_t* v = a; v != a + n; ++v)
      if (*v < lo || *v > hi)
        throw ConfigError("A", std::to_string(*v), "does not fit DATA_W = " + std::to_string(c.data_w) + " signed bits");
  }
};
template <>
struct Traits<float> {
  using Diff = float;
  static Diff abs_diff(float x, float y) { return std::fabs(x - y); }
  static Diff tau(const ReuseConfig& c, int g) { return c.tau_float_of(g); }
  static void check_input(const ReuseConfig&, const float* a, size_t n) {
    for (const float* v = a; v != a + n; ++v)
      if (!std::isfinite(*v)) throw ConfigError("A", std::to_string(*v), "inputs must be finite");
  }
};

template <class T>
class Engine {
  using Diff = typename Traits<T>::Diff;

 public:
  // The whole of A at once: decisions and Ahat of every token.
  Engine(const ReuseConfig& cfg, const Matrix<T>& a) : cfg_(cfg), a_(&a), scan_(cfg.grid, cfg.tile_h, cfg.tile_w) {
    cfg_.validate();
    if (a.rows != cfg_.grid.tokens() || a.cols != cfg_.channels)
      throw ConfigError("A", std::to_string(a.rows) + "x" + std::to_string(a.cols),
                        "must be N x K = " + std::to_string(cfg_.grid.tokens()) + "x" + std::to_string(cfg_.channels));
    Traits<T>::check_input(cfg_, a.data.data(), a.data.size());
    start(a.rows);
    res_.a_eff = a;
  }

  // A streamed in scan order (push): only the window's rows, decisions and Ahat are kept, in a ring of
  // window_depth + 1 slots (a reference is at most window_depth positions back).
  explicit Engine(const ReuseConfig& cfg) : cfg_(cfg), scan_(cfg.grid, cfg.tile_h, cfg.tile_w) {
    cfg_.validate();
    const int64_t n = cfg_.grid.tokens();
    ring_ = std::min<int64_t>(n, window_depth() + 1);
    start(ring_);
    res_.a_eff = Matrix<T>(ring_, cfg_.channels);
    in_ring_ = Matrix<T>(ring_, cfg_.channels);
  }

  ReuseResult<T> run() {
    while (pushed_ < scan_.size()) decide_next();
    return finish();
  }

  // Streamed: decides the next token in scan order from its row of A; returns its slot's Ahat row.
  const T* push(const T* row) {
    if (pushed_ >= scan_.size()) throw InternalError("reuse: every token was already pushed");
    Traits<T>::check_input(cfg_, row, static_cast<size_t>(cfg_.channels));
    const int32_t tok = scan_.token_at(pushed_);
    std::copy(row, row + cfg_.channels, in_ring_.row(slot(tok)));
    std::copy(row, row + cfg_.channels, res_.a_eff.row(slot(tok)));
    decide_next();
    return res_.a_eff.row(slot(tok));
  }
  const PairDecision* decisions_of(int32_t tok) { return &pair(tok, 0); }

  ReuseResult<T> finish() { return std::move(res_); }
  const ReuseResult<T>& result() const { return res_; }
  const ScanOrder& scan() const { return scan_; }
  int64_t pushed() const { return pushed_; }

 private:
  int64_t window_depth() const {
    return cfg_.window_depth > 0 ? cfg_.window_depth : scan_.required_window_depth();
  }

  void start(int64_t rows) {
    const int G = cfg_.groups();
    res_.groups = G;
    res_.decisions.assign(static_cast<size_t>(rows) * static_cast<size_t>(G), PairDecision{});
    res_.required_window_depth = scan_.required_window_depth();
    res_.window_depth = window_depth();
    res_.counters.reused_per_group.assign(static_cast<size_t>(G), 0);
    for (int g = 0; g < G; ++g) allowed_.push_back(cfg_.allowed_axes(g));
  }

  void decide_next() {
    const int64_t pos = pushed_++;
    const int32_t tok = scan_.token_at(pos);
    if (cfg_.mode == Mode::TokenReuse)
      decide_token(tok, pos);
    else
      for (int g = 0; g < res_.groups; ++g) decide_pair(tok, pos, g);
    count(tok);
  }

  // Where a token's row, decisions and Ahat live: the token itself, or its scan position's ring slot.
  int64_t slot(int32_t tok) const { return ring_ ? scan_.pos_of(tok) % ring_ : tok; }
  const T* input_row(int32_t tok) const { return a_ ? a_->row(tok) : in_ring_.row(slot(tok)); }
  T* eff_row(int32_t tok) { return res_.a_eff.row(slot(tok)); }
  const T* eff_row(int32_t tok) const { return res_.a_eff.row(slot(tok)); }

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
    const T* x = input_row(tok) + c0;
    // Closed loop: against the reference's effective inputs. Open loop: raw.
    const T* y = (cfg_.closed_loop ? eff_row(ref) : input_row(ref)) + c0;
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
    std::copy(eff_row(ref) + c0, eff_row(ref) + c0 + cfg_.group_w, eff_row(tok) + c0);
  }

  void set_compute(int32_t tok, int g) {
    PairDecision& p = pair(tok, g);
    p.kind = PairKind::Compute;
    p.ref = -1;
    p.root = tok;
  }

  PairDecision& pair(int32_t tok, int g) {
    return res_.decisions[static_cast<size_t>(slot(tok)) * static_cast<size_t>(res_.groups) + static_cast<size_t>(g)];
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

  void count(int32_t tok) {
    ReuseCounters& c = res_.counters;
    int reused = 0;
    for (int g = 0; g < res_.groups; ++g) {
      const PairDecision& p = pair(tok, g);
      ++c.pairs;
      if (p.kind == PairKind::Reuse) {
        ++reused;
        ++c.reused_pairs;
        ++c.reused_per_group[static_cast<size_t>(g)];
        ++c.reused_per_axis[static_cast<size_t>(p.axis)];
      }
    }
    if (reused == res_.groups) ++c.tokens_fully_reused;
    const int64_t macs_per_pair = static_cast<int64_t>(cfg_.group_w) * cfg_.out_cols;
    c.macs_issued += (res_.groups - reused) * macs_per_pair;
    c.macs_skipped += reused * macs_per_pair;
  }

  ReuseConfig cfg_;
  const Matrix<T>* a_ = nullptr;  // the whole of A, or null when streamed
  Matrix<T> in_ring_;             // streamed: the window's rows of A
  int64_t ring_ = 0;              // streamed: ring slots (0: whole)
  int64_t pushed_ = 0;            // scan positions decided
  ScanOrder scan_;
  ReuseResult<T> res_;
  std::vector<std::vector<Axis>> allowed_;
};

}  // namespace reuse_engine

using reuse_engine::Engine;

IntReuse run_reuse(const ReuseConfig& cfg, const IntMatrix& a) { return Engine<int32_t>(cfg, a).run(); }
FloatReuse run_reuse(const ReuseConfig& cfg, const FloatMatrix& a) { return Engine<float>(cfg, a).run(); }

struct StreamedReuse::Impl {
  explicit Impl(const ReuseConfig& cfg) : engine(cfg) {}
  Engine<float> engine;
};

StreamedReuse::StreamedReuse(const ReuseConfig& cfg) : impl_(std::make_unique<Impl>(cfg)) {}
StreamedReuse::~StreamedReuse() = default;
int64_t StreamedReuse::size() const { return impl_->engine.scan().size(); }
int64_t StreamedReuse::pushed() const { return impl_->engine.pushed(); }
const ScanOrder& StreamedReuse::scan() const { return impl_->engine.scan(); }
int32_t StreamedReuse::next_token() const {
  return pushed() < size() ? scan().token_at(pushed()) : -1;
}
const float* StreamedReuse::push(const float* row) { return impl_->engine.push(row); }
const PairDecision* StreamedReuse::decisions_of_last() {
  if (pushed() == 0) throw InternalError("reuse: no token pushed yet");
  return impl_->engine.decisions_of(scan().token_at(pushed() - 1));
}
int StreamedReuse::groups() const { return impl_->engine.result().groups; }
int64_t StreamedReuse::ring_rows() const { return impl_->engine.result().a_eff.rows; }
ReuseCounters StreamedReuse::counters() const {
  if (pushed() != size())
    throw InternalError("reuse: counters read after " + std::to_string(pushed()) + " of " + std::to_string(size()) +
                        " tokens");
  return impl_->engine.result().counters;
}

int64_t group_difference(const IntMatrix& a, const IntMatrix& a_eff, int32_t token, int32_t ref, int g, int group_w) {
  int64_t d = 0;
  for (int c = g * group_w; c < (g + 1) * group_w; ++c)
    d = std::max<int64_t>(d, std::llabs(static_cast<int64_t>(a.at(token, c)) - a_eff.at(ref, c)));
  return d;
}

}  // namespace kaleido
