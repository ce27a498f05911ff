#include "study/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.hpp"
#include "golden/random.hpp"
#include "study/hot.hpp"


namespace kaleido::study {

std::vector<int32_t> sample_rows(int64_t n, int64_t count, uint64_t seed) {
  std::vector<int32_t> rows;
  if (count >= n) {
    for (int64_t i = 0; i < n; ++i) rows.push_back(static_cast<int32_t>(i));
    return rows;
  }
  // Selection sampling (Knuth's algorithm S): uniform, sorted, no duplicates.
  Rng rng(seed);
  int64_t needed = count;
  for (int64_t i = 0; i < n && needed > 0; ++i)
    if (rng.uniform() * static_cast<double>(n - i) < static_cast<double>(needed)) {
      rows.push_back(static_cast<int32_t>(i));
      --needed;
    }
  return rows;
}

void QualitySums::add(double approx, double exact) {
  const double e = approx - exact;
  ++n;
  se += e * e;
  peak = std::max(peak, std::fabs(exact));
  max_err = std::max(max_err, std::fabs(e));
  dot += approx * exact;
  na += approx * approx;
  nb += exact * exact;
}

void QualitySums::merge(const QualitySums& o) {
  n += o.n;
  se += o.se;
  peak = std::max(peak, o.peak);
  max_err = std::max(max_err, o.max_err);
  dot += o.dot;
  na += o.na;
  nb += o.nb;
}

Quality QualitySums::finish() const {
  Quality q;
  q.elements = n;
  q.max_abs_err = max_err;
  finish_quality(q, se, peak, dot, na, nb);
  return q;
}

namespace {

constexpr int kTile = 16;  // query rows processed together (one K or V row serves all)

// Quality sums of each kTile chunk of rows, merged in chunk order: totals do not depend on which thread ran
// which chunk (bit-identical results for any --threads).
struct ChunkSums {
  explicit ChunkSums(int64_t rows) : chunks(static_cast<size_t>((rows + kTile - 1) / kTile)) {}
  QualitySums& of(int64_t first_row) { return chunks[static_cast<size_t>(first_row / kTile)]; }
  QualitySums total() const {
    QualitySums t;
    for (const QualitySums& c : chunks) t.merge(c);
    return t;
  }
  std::vector<QualitySums> chunks;
};

inline float dot8(const float* a, const float* b, int64_t d) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t c = 0;
  for (; c + 8 <= d; c += 8)
    for (int l = 0; l < 8; ++l) acc[l] += a[c + l] * b[c + l];
  float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; c < d; ++c) s += a[c] * b[c];
  return s;
}

KALEIDO_HOT void scores_tile(const float* const* q, int nr, const FloatMatrix& k, float* s) {
  const int64_t N = k.rows, d = k.cols;
  for (int64_t j = 0; j < N; ++j) {
    const float* kj = k.row(j);
    for (int r = 0; r < nr; ++r) s[r * N + j] = dot8(q[r], kj, d);
  }
}

KALEIDO_HOT void pv_tile(const float* p, int nr, const FloatMatrix& v, float* o) {
  const int64_t N = v.rows, d = v.cols;
  std::fill(o, o + nr * d, 0.0f);
  for (int64_t j = 0; j < N; ++j) {
    const float* vj = v.row(j);
    for (int r = 0; r < nr; ++r) {
      const float pr = p[r * N + j];
      if (pr == 0.0f) continue;
      float* orow = o + r * d;
      for (int64_t c = 0; c < d; ++c) orow[c] += pr * vj[c];
    }
  }
}

// Row softmax of S / sqrt(d) in place; -inf entries (skipped keys) become 0.
void softmax_rows(float* s, int nr, int64_t N, double scale) {
  for (int r = 0; r < nr; ++r) {
    float* row = s + r * N;
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < N; ++j) mx = std::max(mx, row[j]);
    if (!std::isfinite(mx)) throw Error("attention row with no key kept: a mask must keep at least one tile per row");
    double z = 0.0;
    const float sc = static_cast<float>(scale);
    for (int64_t j = 0; j < N; ++j) {
      const float e = row[j] == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp((row[j] - mx) * sc);
      row[j] = e;
      z += e;
    }
    const float inv = static_cast<float>(1.0 / z);
    for (int64_t j = 0; j < N; ++j) row[j] *= inv;
  }
}

struct Buffers {
  std::vector<float> s, o;
};

// One pass over the sampled rows in tiles: fill(pos0, nr, s) writes the
// approximate scores of rows pos0..pos0+nr-1; then metrics against the exact
// rows (when given) or storage as the exact rows.
template <class Fill>
AttentionQuality evaluate(const AttentionInputs& in, const FloatMatrix& v, const std::vector<int32_t>& rows, int threads,
                          const Fill& fill,
                          const FloatMatrix* s_ref, const FloatMatrix* o_ref, FloatMatrix* s_store, FloatMatrix* o_store) {
  const int64_t N = in.k.rows, d = in.head_dim, R = static_cast<int64_t>(rows.size());
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  ChunkSums out_sum(R), s_sum(R);
  parallel_for(R, threads, kTile, [&](int64_t b, int64_t e) {
    thread_local Buffers buf;
    const int nr = static_cast<int>(e - b);
    buf.s.resize(static_cast<size_t>(kTile * N));
    buf.o.resize(static_cast<size_t>(kTile * d));
    float* s = buf.s.data();
    float* o = buf.o.data();
    fill(b, nr, s);
    QualitySums &ls = s_sum.of(b), &lo = out_sum.of(b);
    for (int r = 0; r < nr; ++r) {
      if (s_ref) {
        const float* ex = s_ref->row(b + r);
        for (int64_t j = 0; j < N; ++j) {
          const float x = s[r * N + j];
          ls.add(x == -std::numeric_limits<float>::infinity() ? 0.0 : x, ex[j]);
        }
      }
      if (s_store) std::copy(s + r * N, s + (r + 1) * N, s_store->row(b + r));
    }
    softmax_rows(s, nr, N, scale);
    pv_tile(s, nr, v, o);
    for (int r = 0; r < nr; ++r) {
      if (o_ref) {
        const float* ex = o_ref->row(b + r);
        for (int64_t c = 0; c < d; ++c) lo.add(o[r * d + c], ex[c]);
      }
      if (o_store) std::copy(o + r * d, o + (r + 1) * d, o_store->row(b + r));
    }
  });
  AttentionQuality q;
  q.out = out_sum.total().finish();
  q.scores = s_sum.total().finish();
  q.rows = R;
  return q;
}

void check_inputs(const AttentionInputs& in) {
  const int64_t N = in.grid.tokens(), d = in.head_dim;
  if (in.q.rows != N || in.k.rows != N || in.v.rows != N || in.q.cols != d || in.k.cols != d || in.v.cols != d)
    throw Error("attention inputs: Q, K, V must be N x d = " + std::to_string(N) + " x " + std::to_string(d));
}

}  // namespace

AttentionEvaluator::AttentionEvaluator(const AttentionInputs& in, std::vector<int32_t> rows, int threads)
    : in_(in), rows_(std::move(rows)), threads_(threads) {
  check_inputs(in);
  const int64_t R = static_cast<int64_t>(rows_.size()), N = in.k.rows;
  s_exact_ = FloatMatrix(R, N);
  o_exact_ = FloatMatrix(R, in.head_dim);
  auto fill = [this](int64_t b, int nr, float* s) {
    const float* q[kTile];
    for (int r = 0; r < nr; ++r) q[r] = in_.q.row(rows_[static_cast<size_t>(b + r)]);
    scores_tile(q, nr, in_.k, s);
  };
  evaluate(in_, in_.v, rows_, threads_, fill, nullptr, nullptr, &s_exact_, &o_exact_);
}

AttentionQuality AttentionEvaluator::with_inputs(const FloatMatrix& q_eff, const FloatMatrix* k_eff,
                                                 const FloatMatrix* v_eff) const {
  auto same = [](const FloatMatrix* a, const FloatMatrix& b) { return !a || (a->rows == b.rows && a->cols == b.cols); };
  if (!same(&q_eff, in_.q) || !same(k_eff, in_.k) || !same(v_eff, in_.v))
    throw InternalError("attention: effective inputs have the wrong shape");
  const FloatMatrix& keys = k_eff ? *k_eff : in_.k;
  auto fill = [&](int64_t b, int nr, float* s) {
    const float* q[kTile];
    for (int r = 0; r < nr; ++r) q[r] = q_eff.row(rows_[static_cast<size_t>(b + r)]);
    scores_tile(q, nr, keys, s);
  };
  return evaluate(in_, v_eff ? *v_eff : in_.v, rows_, threads_, fill, &s_exact_, &o_exact_, nullptr, nullptr);
}

AttentionQuality AttentionEvaluator::with_probabilities(const FloatMatrix& q_eff,
                                                         const std::function<const float*(int32_t)>& p_row) const {
  const int64_t N = in_.k.rows, d = in_.head_dim, R = static_cast<int64_t>(rows_.size());
  AttentionQuality q = with_inputs(q_eff);  // the scores' quality
  ChunkSums out_sum(R);
  parallel_for(R, threads_, kTile, [&](int64_t b, int64_t e) {
    const int nr = static_cast<int>(e - b);
    std::vector<float> rows(static_cast<size_t>(nr * N)), o(static_cast<size_t>(nr * d));
    for (int r = 0; r < nr; ++r) {
      const float* src = p_row(rows_[static_cast<size_t>(b + r)]);
      if (!src) throw InternalError("attention: no probability row of query " + std::to_string(rows_[b + r]));
      std::copy(src, src + N, rows.data() + r * N);
    }
    pv_tile(rows.data(), nr, in_.v, o.data());
    QualitySums& lo = out_sum.of(b);
    for (int r = 0; r < nr; ++r) {
      const float* ex = o_exact_.row(b + r);
      for (int64_t c = 0; c < d; ++c) lo.add(o[static_cast<size_t>(r * d + c)], ex[c]);
    }
  });
  q.out = out_sum.total().finish();
  return q;
}

AttentionQuality AttentionEvaluator::with_mask(const BlockLayout& layout, const BlockMask& mask,
                                               const FloatMatrix* q_eff) const {
  if (layout.grid().tokens() != in_.grid.tokens() || mask.nq != layout.count() || mask.nk != layout.count())
    throw InternalError("attention: mask does not match the token grid");
  if (q_eff && (q_eff->rows != in_.q.rows || q_eff->cols != in_.q.cols))
    throw InternalError("attention: effective queries have the wrong shape");
  const int64_t N = in_.k.rows;
  auto fill = [&](int64_t b, int nr, float* s) {
    if (q_eff) {
      const float* q[kTile];
      for (int r = 0; r < nr; ++r) q[r] = q_eff->row(rows_[static_cast<size_t>(b + r)]);
      scores_tile(q, nr, in_.k, s);
    }
    for (int r = 0; r < nr; ++r) {
      const int a = layout.block_of(rows_[static_cast<size_t>(b + r)]);
      const float* src = q_eff ? s + r * N : s_exact_.row(b + r);
      float* row = s + r * N;
      for (int64_t j = 0; j < N; ++j)
        row[j] = mask.at(a, layout.block_of(static_cast<int32_t>(j))) ? src[j]
                                                                      : -std::numeric_limits<float>::infinity();
    }
  };
  return evaluate(in_, in_.v, rows_, threads_, fill, &s_exact_, &o_exact_, nullptr, nullptr);
}

void attention_probabilities(const AttentionInputs& in, const std::vector<int32_t>& rows, int threads,
                             const std::function<void(size_t, const float*)>& fn) {
  check_inputs(in);
  const int64_t N = in.k.rows, R = static_cast<int64_t>(rows.size());
  const double scale = 1.0 / std::sqrt(static_cast<double>(in.head_dim));
  // Blocks of rows computed in parallel, then handed to fn one row at a time in order: what fn accumulates does
  // not depend on the threads.
  const int64_t block = std::min<int64_t>(R, int64_t{kTile} * 8 * std::max(1, threads));
  std::vector<float> s(static_cast<size_t>(block * N));
  for (int64_t b0 = 0; b0 < R; b0 += block) {
    const int64_t nb = std::min(block, R - b0);
    parallel_for(nb, threads, kTile, [&](int64_t b, int64_t e) {
      const int nr = static_cast<int>(e - b);
      const float* q[kTile];
      for (int r = 0; r < nr; ++r) q[r] = in.q.row(rows[static_cast<size_t>(b0 + b + r)]);
      scores_tile(q, nr, in.k, s.data() + b * N);
      softmax_rows(s.data() + b * N, nr, N, scale);
    });
    for (int64_t i = 0; i < nb; ++i) fn(static_cast<size_t>(b0 + i), s.data() + i * N);
  }
}

std::vector<double> block_attention_mass(const AttentionInputs& in, const BlockLayout& layout, int per_block,
                                         uint64_t seed, int threads) {
  if (per_block < 1) throw ConfigError("calibration rows per block", std::to_string(per_block), "must be at least 1");
  const int nb = layout.count();
  std::vector<int32_t> rows;
  std::vector<int> block_of_row;
  Rng rng(seed);
  for (int a = 0; a < nb; ++a) {
    const auto& mem = layout.members(a);
    for (int k = 0; k < per_block; ++k) {
      rows.push_back(mem[static_cast<size_t>(rng.range(0, static_cast<int64_t>(mem.size()) - 1))]);
      block_of_row.push_back(a);
    }
  }
  std::vector<double> mass(static_cast<size_t>(nb) * static_cast<size_t>(nb), 0.0);
  const int64_t N = in.k.rows;
  attention_probabilities(in, rows, threads, [&](size_t i, const float* p) {
    double* row = mass.data() + static_cast<size_t>(block_of_row[i]) * static_cast<size_t>(nb);
    for (int64_t j = 0; j < N; ++j) row[layout.block_of(static_cast<int32_t>(j))] += static_cast<double>(p[j]) / per_block;
  });
  return mass;
}

std::vector<double> exact_block_attention_mass(const AttentionInputs& in, const BlockLayout& layout, int threads) {
  const int nb = layout.count();
  const int64_t N = in.k.rows;
  std::vector<int32_t> rows(static_cast<size_t>(N));
  for (int64_t i = 0; i < N; ++i) rows[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  std::vector<double> mass(static_cast<size_t>(nb) * static_cast<size_t>(nb), 0.0);
  attention_probabilities(in, rows, threads, [&](size_t i, const float* p) {  // called one row at a time
    const int a = layout.block_of(static_cast<int32_t>(i));
    double* row = mass.data() + static_cast<size_t>(a) * static_cast<size_t>(nb);
    const double w = 1.0 / static_cast<double>(layout.size(a));
    for (int64_t j = 0; j < N; ++j) row[layout.block_of(static_cast<int32_t>(j))] += static_cast<double>(p[j]) * w;
  });
  return mass;
}

}  // namespace kaleido::study
