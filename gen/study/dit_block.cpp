#include "study/dit_block.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "common/error.hpp"
#include "common/format.hpp"
#include "golden/random.hpp"
#include "study/hot.hpp"
#include "study/methods.hpp"
#include "workload/npy.hpp"
#include "workload/qkv.hpp"

namespace kaleido::study {

DitShape DitShape::of(const ModelShape& m) {
  DitShape s;
  s.hidden = m.hidden;
  s.heads = m.heads;
  s.head_dim = m.head_dim;
  s.ffn = m.ffn;
  s.rope = model_rope(m);
  return s;
}

void DitShape::validate() const {
  if (hidden < 1 || heads < 1 || head_dim < 1 || ffn < 1)
    throw ConfigError("block shape", std::to_string(hidden), "hidden, heads, head dim and FFN must be positive");
  if (hidden != heads * head_dim)
    throw ConfigError("block shape", std::to_string(hidden),
                      "hidden must be heads x head dim = " + std::to_string(heads * head_dim));
  rope.validate();
  if (rope.head_dim() != head_dim)
    throw ConfigError("block shape", std::to_string(head_dim), "RoPE bands must add up to the head dim");
}

const char* dit_gemm_name(DitGemm g) {
  static const char* const n[] = {"qkv", "qk", "pv", "out_proj", "ffn_up", "ffn_down"};
  return n[static_cast<int>(g)];
}

const char* dit_gemm_operands(DitGemm g) {
  static const char* const n[] = {"A = LayerNorm(X0), B = [W_q W_k W_v]",
                                  "A = q of a head (RoPE), B = k^T",
                                  "A = P of a head (groups: runs of keys), B = V",
                                  "A = attention output O, B = W_o",
                                  "A = LayerNorm(X1), B = W_1",
                                  "A = GELU hidden H, B = W_2"};
  return n[static_cast<int>(g)];
}

bool dit_gemm_per_head(DitGemm g) { return g == DitGemm::Qk || g == DitGemm::Pv; }

bool dit_gemm_input_loadable(DitGemm g) {
  return g == DitGemm::OutProj || g == DitGemm::FfnUp || g == DitGemm::FfnDown;
}

namespace {

FloatMatrix gaussian(int64_t rows, int64_t cols, double stddev, uint64_t seed) {
  FloatMatrix w(rows, cols);
  Rng rng(seed);
  for (auto& x : w.data) x = static_cast<float>(stddev * rng.normal());
  return w;
}

double inv_sqrt(int64_t n) { return 1.0 / std::sqrt(static_cast<double>(n)); }

// Columns j0..j1 of rows r0..r1 of C = A . B; B's panel of kCols columns stays in cache across the rows.
KALEIDO_HOT void matmul_block(const FloatMatrix& a, const FloatMatrix& b, FloatMatrix& c, int64_t r0, int64_t r1) {
  constexpr int64_t kCols = 128;
  const int64_t K = a.cols, M = b.cols;
  for (int64_t j0 = 0; j0 < M; j0 += kCols) {
    const int64_t n = std::min(M, j0 + kCols) - j0;
    for (int64_t i = r0; i < r1; ++i) {
      float* __restrict ci = c.row(i) + j0;
      const float* ai = a.row(i);
      for (int64_t k = 0; k < K; ++k) {
        const float x = ai[k];
        if (x == 0.0f) continue;
        const float* __restrict bk = b.row(k) + j0;
        for (int64_t j = 0; j < n; ++j) ci[j] += x * bk[j];
      }
    }
  }
}

// The columns `cols` of b (all of b's rows).
FloatMatrix columns(const FloatMatrix& b, const std::vector<int32_t>& cols) {
  FloatMatrix out(b.rows, static_cast<int64_t>(cols.size()));
  for (int64_t k = 0; k < b.rows; ++k)
    for (size_t j = 0; j < cols.size(); ++j) out.at(k, static_cast<int64_t>(j)) = b.at(k, cols[j]);
  return out;
}

// Rows `rows` of A times bc (all of bc's columns), in double.
FloatMatrix rows_times(const FloatMatrix& a, const std::vector<int32_t>& rows, const FloatMatrix& bc) {
  FloatMatrix out(static_cast<int64_t>(rows.size()), bc.cols);
  std::vector<double> acc(static_cast<size_t>(bc.cols));
  for (size_t r = 0; r < rows.size(); ++r) {
    std::fill(acc.begin(), acc.end(), 0.0);
    const float* ar = a.row(rows[r]);
    for (int64_t k = 0; k < a.cols; ++k) {
      const double x = ar[k];
      if (x == 0.0) continue;
      const float* bk = bc.row(k);
      for (int64_t j = 0; j < bc.cols; ++j) acc[static_cast<size_t>(j)] += x * bk[j];
    }
    for (int64_t j = 0; j < bc.cols; ++j)
      out.at(static_cast<int64_t>(r), j) = static_cast<float>(acc[static_cast<size_t>(j)]);
  }
  return out;
}

QualitySums sums_of(const FloatMatrix& approx, const FloatMatrix& exact) {
  QualitySums s;
  for (size_t i = 0; i < exact.data.size(); ++i) s.add(approx.data[i], exact.data[i]);
  return s;
}

void layer_norm(FloatMatrix& x) {
  for (int64_t i = 0; i < x.rows; ++i) {
    float* r = x.row(i);
    double mean = 0.0, var = 0.0;
    for (int64_t c = 0; c < x.cols; ++c) mean += r[c];
    mean /= static_cast<double>(x.cols);
    for (int64_t c = 0; c < x.cols; ++c) var += (r[c] - mean) * (r[c] - mean);
    const double inv = 1.0 / std::sqrt(var / static_cast<double>(x.cols) + 1e-6);
    for (int64_t c = 0; c < x.cols; ++c) r[c] = static_cast<float>((r[c] - mean) * inv);
  }
}

float gelu_tanh(float x) {
  const double v = x;
  return static_cast<float>(0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))));
}

// Columns [h d, (h+1) d) of x.
FloatMatrix head_of(const FloatMatrix& x, int h, int d) {
  FloatMatrix out(x.rows, d);
  for (int64_t i = 0; i < x.rows; ++i) std::copy(x.row(i) + h * d, x.row(i) + (h + 1) * d, out.row(i));
  return out;
}

int64_t padded(int64_t n, int gw) { return (n + gw - 1) / gw * gw; }

// k_h^T padded with zero columns to a multiple of gw: (d x Np).
FloatMatrix keys_transposed(const FloatMatrix& k, int h, int d, int gw) {
  FloatMatrix kt(d, padded(k.rows, gw));
  for (int64_t j = 0; j < k.rows; ++j)
    for (int c = 0; c < d; ++c) kt.at(c, j) = k.at(j, static_cast<int64_t>(h) * d + c);
  return kt;
}

// V_h with zero rows up to a multiple of gw: (Np x d).
FloatMatrix values_padded(const FloatMatrix& v, int h, int d, int gw) {
  FloatMatrix vp(padded(v.rows, gw), d);
  for (int64_t j = 0; j < v.rows; ++j) std::copy(v.row(j) + h * d, v.row(j) + (h + 1) * d, vp.row(j));
  return vp;
}

// Work of a reuse decision: REUSE pairs times their real channels (the padding of P carries none) times m.
void count_work(const FloatReuse& r, int group_w, int64_t k_real, int64_t m, GemmWork& w) {
  w.pairs += r.counters.pairs;
  w.reused += r.counters.reused_pairs;
  for (size_t g = 0; g < r.counters.reused_per_group.size(); ++g) {
    const int64_t ch = std::min<int64_t>(group_w, k_real - static_cast<int64_t>(g) * group_w);
    w.skipped += r.counters.reused_per_group[g] * std::max<int64_t>(0, ch) * m;
  }
}

// Row softmax of the first n columns of p scaled by `scale`; the padding columns become 0.
void softmax_rows(FloatMatrix& p, int64_t n, double scale, int threads) {
  parallel_for(p.rows, threads, 64, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) {
      float* row = p.row(i);
      const float mx = *std::max_element(row, row + n);
      double z = 0.0;
      for (int64_t j = 0; j < n; ++j) z += (row[j] = static_cast<float>(std::exp((row[j] - mx) * scale)));
      const float inv = static_cast<float>(1.0 / z);
      for (int64_t j = 0; j < n; ++j) row[j] *= inv;
      std::fill(row + n, row + p.cols, 0.0f);
    }
  });
}

void merge_work(GemmWork& total, const GemmWork& w) {
  total.rows = w.rows;
  total.k = w.k;
  total.m = w.m;
  total.macs += w.macs;
  total.skipped += w.skipped;
  total.pairs += w.pairs;
  total.reused += w.reused;
  total.quality.merge(w.quality);
}

}  // namespace

FloatMatrix matmul(const FloatMatrix& a, const FloatMatrix& b, int threads) {
  if (a.cols != b.rows)
    throw Error("matmul: A has " + std::to_string(a.cols) + " columns, B " + std::to_string(b.rows) + " rows");
  FloatMatrix c(a.rows, b.cols);
  parallel_for(a.rows, threads, 16, [&](int64_t r0, int64_t r1) { matmul_block(a, b, c, r0, r1); });
  return c;
}

Quality sampled_gemm_quality(const FloatMatrix& a, const FloatMatrix& a_hat, const FloatMatrix& b,
                             const std::vector<int32_t>& rows, const std::vector<int32_t>& cols) {
  const FloatMatrix bc = columns(b, cols);
  return sums_of(rows_times(a_hat, rows, bc), rows_times(a, rows, bc)).finish();
}

DitWeights make_dit_weights(const DitShape& s, int64_t features, const DitProxySpec& p) {
  s.validate();
  ProjectionSpec{p.seed, p.qk_align, p.pos_bias, p.qk_gain, true}.validate();
  const uint64_t base = p.seed * 1000003u + 100u;
  const int64_t D = s.hidden, F = s.ffn;
  DitWeights w;
  w.embed = gaussian(features, D, inv_sqrt(features), base + 1);
  const FloatMatrix wq = gaussian(D, D, inv_sqrt(D), base + 2);
  const FloatMatrix wfree = gaussian(D, D, inv_sqrt(D), base + 3);
  const FloatMatrix wv = gaussian(D, D, inv_sqrt(D), base + 4);
  const double a = p.qk_align, b = std::sqrt(1.0 - a * a);
  w.qkv = FloatMatrix(D, 3 * D);
  for (int64_t r = 0; r < D; ++r)
    for (int64_t c = 0; c < D; ++c) {
      w.qkv.at(r, c) = wq.at(r, c);
      w.qkv.at(r, D + c) = static_cast<float>(a * wq.at(r, c) + b * wfree.at(r, c));
      w.qkv.at(r, 2 * D + c) = wv.at(r, c);
    }
  w.bias_u = gaussian(1, D, p.pos_bias, base + 5);
  w.out = gaussian(D, D, inv_sqrt(D), base + 6);
  w.up = gaussian(D, F, inv_sqrt(D), base + 7);
  w.down = gaussian(F, D, inv_sqrt(F), base + 8);
  w.qk_gain = p.qk_gain;
  return w;
}

FloatMatrix dit_hidden_states(const Tokens& tokens, const DitWeights& w, int threads) {
  return matmul(tokens.f, w.embed, threads);
}

DitKnobs uniform_knobs(const DitShape& s, double knob) {
  DitKnobs k;
  for (int g = 0; g < kDitGemms; ++g)
    k[static_cast<size_t>(g)].assign(dit_gemm_per_head(static_cast<DitGemm>(g)) ? static_cast<size_t>(s.heads) : 1u,
                                     knob);
  return k;
}

double DitBlockRun::savings() const {
  double macs = 0.0, skipped = 0.0;
  for (const GemmWork& g : gemms) {
    macs += static_cast<double>(g.macs);
    skipped += static_cast<double>(g.skipped);
  }
  return macs > 0.0 ? skipped / macs : 0.0;
}

DitSample make_dit_sample(const DitShape& s, int64_t tokens, int rows, int cols, uint64_t seed) {
  DitSample d;
  d.rows = sample_rows(tokens, rows, seed);
  d.qkv_cols = sample_rows(3 * static_cast<int64_t>(s.hidden), cols, seed + 1);
  d.keys = sample_rows(tokens, cols, seed + 2);
  d.hidden_cols = sample_rows(s.hidden, cols, seed + 3);
  d.ffn_cols = sample_rows(s.ffn, cols, seed + 4);
  return d;
}

std::string DitSample::describe(const DitShape& s, int64_t tokens) const {
  return std::to_string(rows.size()) + " of " + std::to_string(tokens) + " tokens (rows) x " +
         std::to_string(hidden_cols.size()) + " of " + std::to_string(s.hidden) +
         " columns (out_proj, ffn_down, block), " + std::to_string(qkv_cols.size()) + " of " +
         std::to_string(3 * s.hidden) + " (qkv), " + std::to_string(ffn_cols.size()) + " of " + std::to_string(s.ffn) +
         " (ffn_up), " + std::to_string(keys.size()) + " of " + std::to_string(tokens) +
         " keys (qk, every head), all " + std::to_string(s.head_dim) + " (pv, every head)";
}

// ------------------------------------------------------------------ the block

struct DitBlock::Operand {
  DitGemm gemm = DitGemm::Qkv;
  int head = 0;
  FloatMatrix own;  // A when built for this operand (a head's q or P)
  const FloatMatrix* a = nullptr;
  int64_t k_real = 0, m = 0;
  FloatMatrix b_cols;  // the sampled columns of B
  FloatMatrix exact;   // A[rows] . b_cols
  ReuseConfig cfg;
};

struct DitBlock::Forward {
  FloatMatrix xn, q, k, v, o, x1n, h, y;  // y: sampled rows x hidden_cols
  std::array<GemmWork, kDitGemms> work;
};

namespace {

ReuseConfig gemm_config(const Grid& grid, int64_t k, int64_t m, const DitReuse& r, const Rope3d* rope) {
  ReuseConfig c;
  c.grid = grid;
  c.channels = static_cast<int>(k);
  c.out_cols = static_cast<int>(std::min<int64_t>(m, std::numeric_limits<int>::max()));
  c.group_w = r.group_w;
  c.band = rope ? BandSplit{"rope", {rope->band[0], rope->band[1], rope->band[2]}} : parse_band_split("none");
  c.policy = r.policy;
  c.tile_h = r.tile_h;
  c.tile_w = r.tile_w;
  c.validate();
  return c;
}

}  // namespace

DitBlock::DitBlock(const DitShape& s, const Grid& grid, FloatMatrix x0, DitWeights w, const DitReuse& r,
                   DitSample sample, int threads, DitRealInputs real)
    : s_(s),
      grid_(grid),
      x0_(std::move(x0)),
      real_(std::move(real)),
      w_(std::move(w)),
      r_(r),
      sample_(std::move(sample)),
      threads_(threads) {
  s_.validate();
  if (x0_.rows != grid.tokens() || x0_.cols != s.hidden)
    throw Error("DiT block: X0 is " + std::to_string(x0_.rows) + " x " + std::to_string(x0_.cols) + ", expected " +
                std::to_string(grid.tokens()) + " x " + std::to_string(s.hidden));
  for (const auto& [g, a] : real_) {
    const int64_t k = g == DitGemm::FfnDown ? s.ffn : s.hidden;
    if (!dit_gemm_input_loadable(g) || a.rows != grid.tokens() || a.cols != k)
      throw Error(std::string("DiT block: a real input of ") + dit_gemm_name(g) + " of " + std::to_string(a.rows) +
                  " x " + std::to_string(a.cols));
  }
  for (int d : {s.hidden, s.head_dim, s.ffn})
    if (r.group_w < 1 || d % r.group_w)
      throw ConfigError("group-w", std::to_string(r.group_w),
                        "must divide the hidden size, head dim and FFN size (" + std::to_string(s.hidden) + ", " +
                            std::to_string(s.head_dim) + ", " + std::to_string(s.ffn) + ")");
  if (grid.tokens() > kMaxDitBlockTokens)
    throw ConfigError("block", std::to_string(grid.tokens()) + " tokens",
                      "the DiT block holds P of one head (N x N floats) and every activation of the block: at most " +
                          std::to_string(kMaxDitBlockTokens) + " tokens (use a smaller --resolution or --frames)");
  Forward f = forward(nullptr, &rms_);
  xn_ = std::move(f.xn);
  q_ = std::move(f.q);
  k_ = std::move(f.k);
  v_ = std::move(f.v);
  o_ = std::move(f.o);
  x1n_ = std::move(f.x1n);
  h_ = std::move(f.h);
  y_exact_ = std::move(f.y);
  x0_sample_ = FloatMatrix(static_cast<int64_t>(sample_.rows.size()), static_cast<int64_t>(sample_.hidden_cols.size()));
  for (size_t i = 0; i < sample_.rows.size(); ++i)
    for (size_t j = 0; j < sample_.hidden_cols.size(); ++j)
      x0_sample_.at(static_cast<int64_t>(i), static_cast<int64_t>(j)) = x0_.at(sample_.rows[i], sample_.hidden_cols[j]);
}

int64_t DitBlock::macs(DitGemm g) const {
  const int64_t N = tokens(), D = s_.hidden, F = s_.ffn;
  switch (g) {
    case DitGemm::Qkv:
      return N * D * 3 * D;
    case DitGemm::Qk:
    case DitGemm::Pv:
      return N * N * D;  // heads x N x d x N
    case DitGemm::OutProj:
      return N * D * D;
    case DitGemm::FfnUp:
    case DitGemm::FfnDown:
      return N * D * F;
  }
  return 0;
}

int64_t DitBlock::total_macs() const {
  int64_t t = 0;
  for (int g = 0; g < kDitGemms; ++g) t += macs(static_cast<DitGemm>(g));
  return t;
}

// The block on all tokens; with knobs, every GEMM's A is replaced by its closed-loop effective input Ahat
// (thresholds knob x RMS of the exact A's groups). Without, the exact block, whose inputs' RMS go to rms_out.
DitBlock::Forward DitBlock::forward(const DitKnobs* knobs, RmsTable* rms_out) const {
  Forward f;
  const int64_t N = tokens(), D = s_.hidden, d = s_.head_dim;
  const int gw = r_.group_w;
  if (!knobs)
    for (int g = 0; g < kDitGemms; ++g)
      (*rms_out)[static_cast<size_t>(g)].assign(
          dit_gemm_per_head(static_cast<DitGemm>(g)) ? static_cast<size_t>(s_.heads) : 1u, {});
  // A (exact input of GEMM g) -> the input the GEMM multiplies: Ahat with knobs, A itself otherwise.
  FloatMatrix store;
  auto input = [&](DitGemm g, int head, const FloatMatrix& a, int64_t k_real, int64_t m,
                   const Rope3d* rope) -> const FloatMatrix& {
    const size_t gi = static_cast<size_t>(g);
    GemmWork& w = f.work[gi];
    w.rows = N;
    w.k = k_real;
    w.m = m;
    w.macs = macs(g);
    if (!knobs) {
      (*rms_out)[gi][static_cast<size_t>(head)] = group_rms(a, gw);
      w.pairs += N * (a.cols / gw);
      return a;
    }
    ReuseConfig cfg = gemm_config(grid_, a.cols, m, r_, rope);
    const double knob = (*knobs)[gi][static_cast<size_t>(head)];
    for (float x : rms_[gi][static_cast<size_t>(head)]) cfg.tau_float.push_back(static_cast<float>(knob * x));
    FloatReuse r = run_reuse(cfg, a);
    count_work(r, gw, k_real, m, w);
    store = std::move(r.a_eff);
    return store;
  };

  f.xn = x0_;
  layer_norm(f.xn);
  const FloatMatrix raw = matmul(input(DitGemm::Qkv, 0, f.xn, D, 3 * D, nullptr), w_.qkv, threads_);
  f.q = FloatMatrix(N, D);
  f.k = FloatMatrix(N, D);
  f.v = FloatMatrix(N, D);
  for (int64_t i = 0; i < N; ++i) {
    const int32_t t = static_cast<int32_t>(i / (grid_.h * grid_.w)), hh = static_cast<int32_t>((i / grid_.w) % grid_.h),
                  ww = static_cast<int32_t>(i % grid_.w);
    for (int part = 0; part < 2; ++part) {
      float* dst = (part == 0 ? f.q : f.k).row(i);
      for (int64_t c = 0; c < D; ++c) dst[c] = raw.at(i, part * D + c) + w_.bias_u.data[static_cast<size_t>(c)];
      for (int h = 0; h < s_.heads; ++h) {
        float* x = dst + static_cast<int64_t>(h) * d;
        double ss = 0.0;
        for (int c = 0; c < d; ++c) ss += static_cast<double>(x[c]) * x[c];
        const double scale = w_.qk_gain / std::sqrt(ss / static_cast<double>(d) + 1e-6);
        for (int c = 0; c < d; ++c) x[c] = static_cast<float>(x[c] * scale);
        rope_rotate(x, s_.rope, t, hh, ww);
      }
    }
    std::copy(raw.row(i) + 2 * D, raw.row(i) + 3 * D, f.v.row(i));
  }

  f.o = FloatMatrix(N, D);
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(d));
  for (int h = 0; h < s_.heads; ++h) {
    const FloatMatrix qh = head_of(f.q, h, static_cast<int>(d));
    FloatMatrix p =
        matmul(input(DitGemm::Qk, h, qh, d, N, &s_.rope), keys_transposed(f.k, h, static_cast<int>(d), gw), threads_);
    softmax_rows(p, N, inv_sqrt_d, threads_);
    const FloatMatrix oh =
        matmul(input(DitGemm::Pv, h, p, N, d, nullptr), values_padded(f.v, h, static_cast<int>(d), gw), threads_);
    for (int64_t i = 0; i < N; ++i) std::copy(oh.row(i), oh.row(i) + d, f.o.row(i) + static_cast<int64_t>(h) * d);
  }
  // A loaded input replaces the block's own value (the chain restarts there).
  const auto use_real = [&](DitGemm g, FloatMatrix& a) {
    const auto it = real_.find(g);
    if (it != real_.end()) a = it->second;
  };
  use_real(DitGemm::OutProj, f.o);

  FloatMatrix x1 = matmul(input(DitGemm::OutProj, 0, f.o, D, D, nullptr), w_.out, threads_);
  for (size_t i = 0; i < x1.data.size(); ++i) x1.data[i] += x0_.data[i];
  f.x1n = x1;
  layer_norm(f.x1n);
  use_real(DitGemm::FfnUp, f.x1n);
  f.h = matmul(input(DitGemm::FfnUp, 0, f.x1n, D, s_.ffn, nullptr), w_.up, threads_);
  for (float& x : f.h.data) x = gelu_tanh(x);
  use_real(DitGemm::FfnDown, f.h);
  f.y = rows_times(input(DitGemm::FfnDown, 0, f.h, s_.ffn, D, nullptr), sample_.rows,
                   columns(w_.down, sample_.hidden_cols));
  for (size_t i = 0; i < sample_.rows.size(); ++i)
    for (size_t j = 0; j < sample_.hidden_cols.size(); ++j)
      f.y.at(static_cast<int64_t>(i), static_cast<int64_t>(j)) += x1.at(sample_.rows[i], sample_.hidden_cols[j]);
  return f;
}

DitBlock::Operand DitBlock::operand(DitGemm g, int head) const {
  const int64_t N = tokens(), D = s_.hidden, d = s_.head_dim;
  const int gw = r_.group_w;
  if (!dit_gemm_per_head(g)) head = 0;
  if (head < 0 || head >= s_.heads)
    throw Error("DiT block: head " + std::to_string(head) + " of " + std::to_string(s_.heads));
  Operand op;
  op.gemm = g;
  op.head = head;
  const Rope3d* rope = nullptr;
  switch (g) {
    case DitGemm::Qkv:
      op.a = &xn_;
      op.k_real = D;
      op.m = 3 * D;
      op.b_cols = columns(w_.qkv, sample_.qkv_cols);
      break;
    case DitGemm::Qk: {
      op.own = head_of(q_, head, static_cast<int>(d));
      op.k_real = d;
      op.m = N;
      op.b_cols = FloatMatrix(d, static_cast<int64_t>(sample_.keys.size()));
      for (int64_t c = 0; c < d; ++c)
        for (size_t j = 0; j < sample_.keys.size(); ++j)
          op.b_cols.at(c, static_cast<int64_t>(j)) = k_.at(sample_.keys[j], static_cast<int64_t>(head) * d + c);
      rope = &s_.rope;
      break;
    }
    case DitGemm::Pv: {
      op.own =
          matmul(head_of(q_, head, static_cast<int>(d)), keys_transposed(k_, head, static_cast<int>(d), gw), threads_);
      const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(d));
      softmax_rows(op.own, N, inv_sqrt_d, threads_);
      op.k_real = N;
      op.m = d;
      op.b_cols = values_padded(v_, head, static_cast<int>(d), gw);
      break;
    }
    case DitGemm::OutProj:
      op.a = &o_;
      op.k_real = D;
      op.m = D;
      op.b_cols = columns(w_.out, sample_.hidden_cols);
      break;
    case DitGemm::FfnUp:
      op.a = &x1n_;
      op.k_real = D;
      op.m = s_.ffn;
      op.b_cols = columns(w_.up, sample_.ffn_cols);
      break;
    case DitGemm::FfnDown:
      op.a = &h_;
      op.k_real = s_.ffn;
      op.m = D;
      op.b_cols = columns(w_.down, sample_.hidden_cols);
      break;
  }
  if (!op.a) op.a = &op.own;
  op.cfg = gemm_config(grid_, op.a->cols, op.m, r_, rope);
  op.exact = rows_times(*op.a, sample_.rows, op.b_cols);
  return op;
}

GemmWork DitBlock::evaluate(const Operand& op, double knob) const {
  ReuseConfig cfg = op.cfg;
  for (float x : rms_[static_cast<size_t>(op.gemm)][static_cast<size_t>(op.head)])
    cfg.tau_float.push_back(static_cast<float>(knob * x));
  const FloatReuse r = run_reuse(cfg, *op.a);
  GemmWork w;
  w.rows = tokens();
  w.k = op.k_real;
  w.m = op.m;
  w.macs = tokens() * op.k_real * op.m;
  count_work(r, r_.group_w, op.k_real, op.m, w);
  w.quality = sums_of(rows_times(r.a_eff, sample_.rows, op.b_cols), op.exact);
  return w;
}

GemmWork DitBlock::isolated(DitGemm g, int head, double knob) const { return evaluate(operand(g, head), knob); }

GemmWork DitBlock::isolated_all(DitGemm g, const std::vector<double>& knobs) const {
  GemmWork total;
  const int heads = dit_gemm_per_head(g) ? s_.heads : 1;
  if (static_cast<int>(knobs.size()) != heads)
    throw Error(std::string("DiT block: ") + dit_gemm_name(g) + " needs " + std::to_string(heads) + " knobs");
  for (int h = 0; h < heads; ++h) merge_work(total, isolated(g, h, knobs[static_cast<size_t>(h)]));
  return total;
}

DitBlock::Calibrated DitBlock::calibrate(DitGemm g, int head, double snr_db) const {
  const Operand op = operand(g, head);
  Calibrated c;
  c.work = evaluate(op, kMaxKnob);
  if (c.work.quality.finish().snr_db >= snr_db) {
    c.knob = kMaxKnob;
    return c;
  }
  double lo = 0.0, hi = kMaxKnob;
  for (int it = 0; it < 12; ++it) {
    const double mid = 0.5 * (lo + hi);
    (evaluate(op, mid).quality.finish().snr_db >= snr_db ? lo : hi) = mid;
  }
  c.knob = lo;
  c.work = evaluate(op, lo);
  return c;
}

DitBlockRun DitBlock::run(const DitKnobs& knobs) const {
  for (int g = 0; g < kDitGemms; ++g) {
    const size_t want = dit_gemm_per_head(static_cast<DitGemm>(g)) ? static_cast<size_t>(s_.heads) : 1u;
    if (knobs[static_cast<size_t>(g)].size() != want)
      throw Error(std::string("DiT block: ") + dit_gemm_name(static_cast<DitGemm>(g)) + " needs " +
                  std::to_string(want) + " knobs");
  }
  const Forward f = forward(&knobs, nullptr);
  DitBlockRun r;
  r.gemms = f.work;
  r.block = sums_of(f.y, y_exact_).finish();
  FloatMatrix du = f.y, de = y_exact_;
  for (size_t i = 0; i < du.data.size(); ++i) {
    du.data[i] -= x0_sample_.data[i];
    de.data[i] -= x0_sample_.data[i];
  }
  r.update = sums_of(du, de).finish();
  return r;
}

// ------------------------------------------------------------------ the study's table

int64_t block_study_units(const BlockStudySpec& spec) {
  size_t targets = spec.snr_targets.size();
  if (spec.schedule) {  // the most entries any step has
    std::map<int, size_t> per_step;
    targets = 0;
    for (const KnobStep& k : spec.schedule->steps) targets = std::max(targets, ++per_step[k.step]);
  }
  return 1 + static_cast<int64_t>(targets) * (kDitGemms + 1);
}

namespace {
std::vector<BlockRecord> block_study_on(const Grid& grid, FloatMatrix x0, DitWeights w, const ModelShape& m,
                                        const BlockStudySpec& spec, const std::string& clip,
                                        const std::string& proxy, int step, double sigma, Progress& progress,
                                        DitRealInputs real);
}  // namespace

std::vector<BlockRecord> run_block_study(const Tokens& tokens, const ModelShape& m, const BlockStudySpec& spec,
                                         const std::string& clip, const std::string& proxy, int step, double sigma,
                                         Progress& progress) {
  DitWeights w = make_dit_weights(DitShape::of(m), tokens.f.cols, spec.proxy);
  FloatMatrix x0 = dit_hidden_states(tokens, w, spec.threads);
  return block_study_on(tokens.grid, std::move(x0), std::move(w), m, spec, clip, proxy, step, sigma, progress, {});
}

std::vector<BlockRecord> run_block_study(const Grid& grid, FloatMatrix x0, const ModelShape& m,
                                         const BlockStudySpec& spec, const std::string& clip,
                                         const std::string& proxy, int step, double sigma, Progress& progress,
                                         DitRealInputs real) {
  // The patch embedding is not used past X0; one feature keeps it small.
  DitWeights w = make_dit_weights(DitShape::of(m), 1, spec.proxy);
  return block_study_on(grid, std::move(x0), std::move(w), m, spec, clip, proxy, step, sigma, progress,
                        std::move(real));
}

namespace {
// Tokens x `width` from a .npy of shape (N, width) or (1, N, width), every value finite.
FloatMatrix load_token_matrix(const std::string& option, const std::string& path, const Grid& grid, int64_t width,
                              const std::string& letter, const std::string& what) {
  workload::NpyArray a = workload::read_npy(path);
  const std::vector<int64_t> want2 = {grid.tokens(), width}, want3 = {1, grid.tokens(), width};
  if (a.shape != want2 && a.shape != want3) {
    std::string got;
    for (int64_t d : a.shape) got += (got.empty() ? "" : ", ") + std::to_string(d);
    throw ConfigError(option, path + " of shape (" + got + ")",
                      "must be (N, " + letter + ") or (1, N, " + letter + ") = (" + std::to_string(grid.tokens()) +
                          ", " + std::to_string(width) + "): the grid's tokens by " + what);
  }
  FloatMatrix x(grid.tokens(), width);
  x.data = std::move(a.data);
  for (float v : x.data)
    if (!std::isfinite(v)) throw ConfigError(option, path, "holds a value that is not finite");
  return x;
}
}  // namespace

FloatMatrix load_hidden_states(const std::string& path, const Grid& grid, int hidden) {
  return load_token_matrix("hidden-npy", path, grid, hidden, "D", "the model's hidden size");
}

std::pair<DitGemm, FloatMatrix> load_gemm_input(const std::string& spec, const Grid& grid, const DitShape& s) {
  const size_t eq = spec.find('=');
  const std::string name = spec.substr(0, eq == std::string::npos ? 0 : eq);
  for (int gi = 0; gi < kDitGemms; ++gi) {
    const DitGemm g = static_cast<DitGemm>(gi);
    if (name != dit_gemm_name(g)) continue;
    if (g == DitGemm::Qkv)
      throw ConfigError("gemm-npy", spec, "the qkv GEMM's input is LayerNorm(X0): give X0 with --hidden-npy");
    if (!dit_gemm_input_loadable(g))
      throw ConfigError("gemm-npy", spec,
                        "the block computes the " + name + " GEMM's input from its own Q and K; load out_proj, "
                        "ffn_up or ffn_down");
    const bool ffn = g == DitGemm::FfnDown;
    return {g, load_token_matrix("gemm-npy", spec.substr(eq + 1), grid, ffn ? s.ffn : s.hidden, ffn ? "F" : "D",
                                 ffn ? "the model's FFN size" : "the model's hidden size")};
  }
  throw ConfigError("gemm-npy", spec, "must be <gemm>=<file.npy>, <gemm> one of out_proj, ffn_up, ffn_down");
}

namespace {

// The block table on X0 with the block's weights w (the ones that made X0, or any: only the
// GEMMs' weights are used here).
std::vector<BlockRecord> block_study_on(const Grid& grid, FloatMatrix x0, DitWeights w, const ModelShape& m,
                                        const BlockStudySpec& spec, const std::string& clip,
                                        const std::string& proxy, int step, double sigma, Progress& progress,
                                        DitRealInputs real) {
  const DitShape shape = DitShape::of(m);
  const int64_t N = grid.tokens();
  const std::string where = clip + " (" + proxy + ") step " + (step < 0 ? std::string("npy") : std::to_string(step)) +
                            ": DiT block";
  progress.note(where + ": exact " + m.title + " block on " + std::to_string(N) + " tokens (hidden " +
                std::to_string(shape.hidden) + ", " + std::to_string(shape.heads) + " heads x " +
                std::to_string(shape.head_dim) + ", FFN " + std::to_string(shape.ffn) + ")");
  DitSample sample = make_dit_sample(shape, N, spec.rows, spec.cols, spec.seed);
  const std::string sampled = sample.describe(shape, N);
  const DitBlock block(shape, grid, std::move(x0), std::move(w), spec.reuse, std::move(sample), spec.threads,
                       std::move(real));
  progress.advance(where + ": exact block done (" + fixed(static_cast<double>(block.total_macs()) * 1e-9, 1) +
                   " GMAC)");
  // What to run: each SNR target, calibrated here, or the schedule's entries at this step, knobs given.
  std::vector<std::pair<double, const std::map<std::string, std::vector<double>>*>> plans;
  if (spec.schedule) {
    std::string steps;
    for (const KnobStep& k : spec.schedule->steps) {
      if (k.step == step) plans.emplace_back(k.snr_target_db, &k.knobs);
      steps += (steps.empty() ? "" : ", ") + std::to_string(k.step);
    }
    if (plans.empty())
      throw ConfigError("block-schedule", "step " + std::to_string(step), "the schedule has steps " + steps);
  } else {
    for (double target : spec.snr_targets) plans.emplace_back(target, nullptr);
  }
  std::vector<BlockRecord> out;
  for (const auto& [target, given] : plans) {
    DitKnobs knobs;
    std::array<GemmWork, kDitGemms> iso;
    for (int gi = 0; gi < kDitGemms; ++gi) {
      const DitGemm g = static_cast<DitGemm>(gi);
      const int heads = dit_gemm_per_head(g) ? shape.heads : 1;
      const std::vector<double>* from_file = nullptr;
      if (given) {
        const auto it = given->find(dit_gemm_name(g));
        if (it == given->end() || static_cast<int>(it->second.size()) != heads)
          throw ConfigError("block-schedule", std::string(dit_gemm_name(g)) + " at step " + std::to_string(step),
                            "needs " + std::to_string(heads) + " knob(s), one per head of " + m.title);
        from_file = &it->second;
      }
      for (int h = 0; h < heads; ++h) {
        if (g == DitGemm::Pv)  // the slow one: P of a head is N x N and every step of the search decides on all of it
          progress.note(where + ", " + fixed(target, 1) + " dB target: pv, head " + std::to_string(h + 1) + " of " +
                        std::to_string(heads));
        if (from_file) {
          const double knob = (*from_file)[static_cast<size_t>(h)];
          knobs[static_cast<size_t>(gi)].push_back(knob);
          merge_work(iso[static_cast<size_t>(gi)], block.isolated(g, h, knob));
        } else {
          const DitBlock::Calibrated c = block.calibrate(g, h, target);
          knobs[static_cast<size_t>(gi)].push_back(c.knob);
          merge_work(iso[static_cast<size_t>(gi)], c.work);
        }
      }
      const GemmWork& iw = iso[static_cast<size_t>(gi)];
      progress.advance(where + ", " + fixed(target, 1) + " dB target: " + dit_gemm_name(g) + " savings " +
                       fixed(100.0 * iw.savings(), 1) + "%, SNR " + fixed(iw.quality.finish().snr_db, 2) + " dB");
    }
    const DitBlockRun run = block.run(knobs);
    progress.advance(where + ", " + fixed(target, 1) + " dB target: block savings " + fixed(100.0 * run.savings(), 1) +
                     "%, block output SNR " + fixed(run.block.snr_db, 2) + " dB");
    const double total = static_cast<double>(block.total_macs());
    auto base = [&](const std::string& gemm) {
      BlockRecord r;
      r.clip = clip;
      r.proxy = proxy;
      r.step = step;
      r.sigma = sigma;
      r.snr_target = target;
      r.gemm = gemm;
      r.sampled = sampled;
      return r;
    };
    for (int gi = 0; gi < kDitGemms; ++gi) {
      const DitGemm g = static_cast<DitGemm>(gi);
      const GemmWork& iw = iso[static_cast<size_t>(gi)];
      const GemmWork& cw = run.gemms[static_cast<size_t>(gi)];
      BlockRecord r = base(dit_gemm_name(g));
      r.operands = dit_gemm_operands(g);
      r.heads = dit_gemm_per_head(g) ? shape.heads : 1;
      r.rows = N;
      r.k = iw.k;
      r.m = iw.m;
      r.macs = block.macs(g);
      r.mac_share = static_cast<double>(r.macs) / total;
      const auto& k = knobs[static_cast<size_t>(gi)];
      double sum = 0.0;
      for (double x : k) sum += x;
      r.knob = sum / static_cast<double>(k.size());
      r.knobs = k;
      r.group_w = spec.reuse.group_w;
      r.policy = policy_name(spec.reuse.policy);
      r.distance = distance_name(ReuseConfig{}.distance);  // gemm_config keeps the default: the RTL's max
      r.reuse_ratio = iw.reuse_ratio();
      r.savings = iw.savings();
      r.savings_in_block = cw.savings();
      r.quality = iw.quality.finish();
      out.push_back(r);
    }
    for (const char* name : {"block", "block_update"}) {
      BlockRecord r = base(name);
      r.operands = std::string(name) == "block" ? "Y = X1 + H W_2 (residual stream after the FFN)"
                                                : "Y - X0 (attention and FFN branches)";
      r.rows = N;
      r.macs = block.total_macs();
      r.mac_share = 1.0;
      r.knob = std::nan("");
      r.reuse_ratio = std::nan("");
      r.savings = run.savings();
      r.savings_in_block = run.savings();
      r.quality = std::string(name) == "block" ? run.block : run.update;
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace

}  // namespace kaleido::study
