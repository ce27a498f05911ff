#include "workload/qkv.hpp"

#include <cmath>

#include "common/error.hpp"
#include "golden/random.hpp"
#include "workload/npy.hpp"

namespace kaleido::workload {

void ProjectionSpec::validate() const {
  if (!(qk_align >= 0.0 && qk_align <= 1.0)) throw ConfigError("qk-align", std::to_string(qk_align), "must be in [0, 1]");
  if (!(qk_gain > 0.0 && qk_gain <= 100.0)) throw ConfigError("qk-gain", std::to_string(qk_gain), "must be in (0, 100]");
  if (!(pos_bias >= 0.0 && pos_bias <= 100.0)) throw ConfigError("pos-bias", std::to_string(pos_bias), "must be in [0, 100]");
}

Rope3d model_rope(const ModelShape& m) { return Rope3d{m.rope_band, m.rope_theta}; }

namespace {

FloatMatrix gaussian(int64_t rows, int64_t cols, double stddev, uint64_t seed) {
  FloatMatrix w(rows, cols);
  Rng rng(seed);
  for (auto& x : w.data) x = static_cast<float>(stddev * rng.normal());
  return w;
}

FloatMatrix project(const FloatMatrix& f, const FloatMatrix& w) {
  FloatMatrix out(f.rows, w.cols);
  for (int64_t i = 0; i < f.rows; ++i) {
    float* o = out.row(i);
    const float* x = f.row(i);
    for (int64_t c = 0; c < f.cols; ++c) {
      const float xc = x[c];
      const float* wr = w.row(c);
      for (int64_t m = 0; m < w.cols; ++m) o[m] += xc * wr[m];
    }
  }
  return out;
}

void rms_normalise(FloatMatrix& x) {
  for (int64_t i = 0; i < x.rows; ++i) {
    float* r = x.row(i);
    double s = 0.0;
    for (int64_t c = 0; c < x.cols; ++c) s += static_cast<double>(r[c]) * r[c];
    const double inv = 1.0 / std::sqrt(s / static_cast<double>(x.cols) + 1e-6);
    for (int64_t c = 0; c < x.cols; ++c) r[c] = static_cast<float>(r[c] * inv);
  }
}

}  // namespace

AttentionInputs project_head(const Tokens& tokens, const ModelShape& m, const ProjectionSpec& spec) {
  spec.validate();
  AttentionInputs in;
  in.grid = tokens.grid;
  in.head_dim = m.head_dim;
  in.rope = model_rope(m);
  const int64_t F = tokens.f.cols, d = m.head_dim;
  const double sd = 1.0 / std::sqrt(static_cast<double>(F));
  const FloatMatrix wq = gaussian(F, d, sd, spec.seed * 1000003u + 1u);
  const FloatMatrix wk_free = gaussian(F, d, sd, spec.seed * 1000003u + 2u);
  const FloatMatrix wv = gaussian(F, d, sd, spec.seed * 1000003u + 3u);
  FloatMatrix wk(F, d);
  const double a = spec.qk_align, b = std::sqrt(1.0 - a * a);
  for (size_t i = 0; i < wk.data.size(); ++i) wk.data[i] = static_cast<float>(a * wq.data[i] + b * wk_free.data[i]);
  in.q = project(tokens.f, wq);
  in.k = project(tokens.f, wk);
  in.v = project(tokens.f, wv);
  if (spec.pos_bias > 0.0) {
    const FloatMatrix u = gaussian(1, d, spec.pos_bias, spec.seed * 1000003u + 4u);
    for (int64_t i = 0; i < in.q.rows; ++i)
      for (int64_t c = 0; c < d; ++c) {
        in.q.at(i, c) += u.data[static_cast<size_t>(c)];
        in.k.at(i, c) += u.data[static_cast<size_t>(c)];
      }
  }
  if (spec.qk_norm) {
    rms_normalise(in.q);
    rms_normalise(in.k);
  }
  if (spec.qk_gain != 1.0) {
    for (auto& x : in.q.data) x = static_cast<float>(x * spec.qk_gain);
    for (auto& x : in.k.data) x = static_cast<float>(x * spec.qk_gain);
  }
  apply_rope(in.q, in.grid, in.rope);
  apply_rope(in.k, in.grid, in.rope);
  in.source = "proxy: seeded projections (seed " + std::to_string(spec.seed) + ", q-k alignment " +
              std::to_string(spec.qk_align).substr(0, 4) + ", positional bias " +
              std::to_string(spec.pos_bias).substr(0, 4) + ", q/k gain " +
              std::to_string(spec.qk_gain).substr(0, 4) + (spec.qk_norm ? ", RMS-normalised q, k" : "") + ") with " +
              m.title + " 3D RoPE";
  return in;
}

namespace {

FloatMatrix head_from(const std::string& path, const Grid& grid, int d, int head) {
  const NpyArray a = read_npy(path);
  int64_t heads = 1, n = 0, dd = 0;
  if (a.shape.size() == 2) {
    n = a.shape[0];
    dd = a.shape[1];
  } else if (a.shape.size() == 3) {
    heads = a.shape[0];
    n = a.shape[1];
    dd = a.shape[2];
  } else {
    throw FileError(path, "expected shape (N, d) or (heads, N, d), found " + std::to_string(a.shape.size()) + " dimensions");
  }
  if (n != grid.tokens() || dd != d)
    throw FileError(path, "shape has N = " + std::to_string(n) + ", d = " + std::to_string(dd) + "; the grid needs N = " +
                              std::to_string(grid.tokens()) + " and the model d = " + std::to_string(d));
  if (head < 0 || head >= heads)
    throw ConfigError("head", std::to_string(head), "must be 0 to " + std::to_string(heads - 1) + " for " + path);
  FloatMatrix m(n, d);
  std::copy(a.data.begin() + head * n * d, a.data.begin() + (head + 1) * n * d, m.data.begin());
  for (float x : m.data)
    if (!std::isfinite(x)) throw FileError(path, "holds a non-finite value");
  return m;
}

}  // namespace

AttentionInputs load_npy_head(const std::string& q_path, const std::string& k_path, const std::string& v_path,
                              const Grid& grid, const ModelShape& m, int head, bool rope_applied) {
  AttentionInputs in;
  in.grid = grid;
  in.head_dim = m.head_dim;
  in.rope = model_rope(m);
  in.q = head_from(q_path, grid, m.head_dim, head);
  in.k = head_from(k_path, grid, m.head_dim, head);
  in.v = head_from(v_path, grid, m.head_dim, head);
  if (!rope_applied) {
    apply_rope(in.q, grid, in.rope);
    apply_rope(in.k, grid, in.rope);
  }
  in.source = "real activations from " + q_path + ", " + k_path + ", " + v_path + " (head " + std::to_string(head) +
              (rope_applied ? ", RoPE already applied)" : ", RoPE applied here)");
  return in;
}

}  // namespace kaleido::workload
