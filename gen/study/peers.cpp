#include "study/peers.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/error.hpp"

namespace kaleido::study {

double mean_pairwise_cosine(const FloatMatrix& x, const std::vector<int32_t>& rows) {
  const size_t n = rows.size();
  if (n <= 1) return 1.0;
  std::vector<double> sum(static_cast<size_t>(x.cols), 0.0);
  double self = 0.0;  // sum of |x^_i|^2: n, minus rows that are all zero
  for (int32_t r : rows) {
    const float* v = x.row(r);
    double nn = 0.0;
    for (int64_t c = 0; c < x.cols; ++c) nn += static_cast<double>(v[c]) * v[c];
    if (nn <= 0.0) continue;
    const double inv = 1.0 / std::sqrt(nn);
    for (int64_t c = 0; c < x.cols; ++c) sum[static_cast<size_t>(c)] += v[c] * inv;
    self += 1.0;
  }
  double s2 = 0.0;
  for (double s : sum) s2 += s * s;
  return (s2 - self) / (static_cast<double>(n) * static_cast<double>(n - 1));
}

BlockSummary summarize_blocks(const FloatMatrix& q, const FloatMatrix& k, const BlockLayout& layout) {
  BlockSummary s;
  s.blocks = layout.count();
  s.dim = static_cast<int>(q.cols);
  const size_t sz = static_cast<size_t>(s.blocks) * static_cast<size_t>(s.dim);
  const float inf = std::numeric_limits<float>::infinity();
  s.q_mean.assign(sz, 0.0f);
  s.k_mean.assign(sz, 0.0f);
  s.q_var.assign(sz, 0.0f);
  s.k_var.assign(sz, 0.0f);
  s.q_max.assign(sz, -inf);
  s.k_max.assign(sz, -inf);
  s.q_min.assign(sz, inf);
  s.k_min.assign(sz, inf);
  for (int b = 0; b < s.blocks; ++b) {
    const auto& mem = layout.members(b);
    const size_t base = static_cast<size_t>(b) * static_cast<size_t>(s.dim);
    for (int c = 0; c < s.dim; ++c) {
      double sq = 0, sk = 0, sq2 = 0, sk2 = 0;
      for (int32_t t : mem) {
        const float a = q.at(t, c), kk = k.at(t, c);
        sq += a;
        sk += kk;
        sq2 += static_cast<double>(a) * a;
        sk2 += static_cast<double>(kk) * kk;
        s.q_max[base + static_cast<size_t>(c)] = std::max(s.q_max[base + static_cast<size_t>(c)], a);
        s.q_min[base + static_cast<size_t>(c)] = std::min(s.q_min[base + static_cast<size_t>(c)], a);
        s.k_max[base + static_cast<size_t>(c)] = std::max(s.k_max[base + static_cast<size_t>(c)], kk);
        s.k_min[base + static_cast<size_t>(c)] = std::min(s.k_min[base + static_cast<size_t>(c)], kk);
      }
      const double n = static_cast<double>(mem.size());
      s.q_mean[base + static_cast<size_t>(c)] = static_cast<float>(sq / n);
      s.k_mean[base + static_cast<size_t>(c)] = static_cast<float>(sk / n);
      s.q_var[base + static_cast<size_t>(c)] = static_cast<float>(std::max(0.0, sq2 / n - (sq / n) * (sq / n)));
      s.k_var[base + static_cast<size_t>(c)] = static_cast<float>(std::max(0.0, sk2 / n - (sk / n) * (sk / n)));
    }
    s.q_sim.push_back(mean_pairwise_cosine(q, mem));
    s.k_sim.push_back(mean_pairwise_cosine(k, mem));
  }
  return s;
}

namespace {

double dot(const float* a, const float* b, int d) {
  double s = 0.0;
  for (int c = 0; c < d; ++c) s += static_cast<double>(a[c]) * b[c];
  return s;
}

void check_inputs(const FloatMatrix& q, const FloatMatrix& k, const Grid& grid) {
  if (q.rows != grid.tokens() || k.rows != grid.tokens() || q.cols != k.cols || q.cols < 1)
    throw Error("block-sparse peer: Q and K must both be N x d with N = grid tokens");
}

}  // namespace

// ---- SPADE-style ----

int spade_topk(double sim, double progress, double factor, int nblocks) {
  const double k = (1.0 - sim) * (1.0 - progress) * factor * nblocks;
  if (!(k > 0.0)) return 0;
  // A hair below an integer stays that integer (floating error), then round up.
  const double kk = std::ceil(k - 1e-9);
  return static_cast<int>(std::min<double>(nblocks, kk));
}

SpadePlan spade_plan(const FloatMatrix& q, const FloatMatrix& k, const Grid& grid, const std::vector<BlockShape>& candidates) {
  check_inputs(q, k, grid);
  if (candidates.empty()) throw ConfigError("block shapes", "none", "SPADE-style needs at least one candidate");
  SpadePlan plan;
  double best = -2.0;
  for (const BlockShape& shape : candidates) {
    BlockLayout layout(grid, shape);
    double s = 0.0;
    for (int b = 0; b < layout.count(); ++b) s += mean_pairwise_cosine(q, layout.members(b));
    s /= layout.count();
    if (s > best + 1e-12) {
      best = s;
      plan.layout = std::move(layout);
    }
  }
  plan.sim = best;
  const BlockSummary sum = summarize_blocks(q, k, plan.layout);
  const int nb = sum.blocks, d = sum.dim;
  plan.estimate.assign(static_cast<size_t>(nb) * static_cast<size_t>(nb), 0.0f);
  std::vector<float> qs(static_cast<size_t>(d));
  for (int a = 0; a < nb; ++a) {
    for (int c = 0; c < d; ++c)
      qs[static_cast<size_t>(c)] = sum.q_max[static_cast<size_t>(a * d + c)] + sum.q_min[static_cast<size_t>(a * d + c)];
    for (int b = 0; b < nb; ++b) {
      const double hi = dot(qs.data(), sum.k_max.data() + static_cast<size_t>(b) * static_cast<size_t>(d), d);
      const double lo = dot(qs.data(), sum.k_min.data() + static_cast<size_t>(b) * static_cast<size_t>(d), d);
      plan.estimate[static_cast<size_t>(a) * static_cast<size_t>(nb) + static_cast<size_t>(b)] = static_cast<float>(std::max(hi, lo));
    }
  }
  return plan;
}

BlockMask spade_mask(const SpadePlan& plan, double factor, double progress, double shortcut_sim, bool* shortcut) {
  const int nb = plan.layout.count();
  BlockMask m(nb, nb);
  const bool short_cut = plan.sim >= shortcut_sim;
  if (shortcut) *shortcut = short_cut;
  const int k = short_cut ? 0 : spade_topk(plan.sim, progress, factor, nb);
  std::vector<int> idx(static_cast<size_t>(nb));
  for (int a = 0; a < nb; ++a) {
    m.set(a, 0);
    m.set(a, a);
    if (k == 0) continue;
    std::iota(idx.begin(), idx.end(), 0);
    const float* est = plan.estimate.data() + static_cast<size_t>(a) * static_cast<size_t>(nb);
    std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [est](int x, int y) {
      return est[x] > est[y] || (est[x] == est[y] && x < y);
    });
    for (int j = 0; j < k; ++j) m.set(a, idx[static_cast<size_t>(j)]);
  }
  return m;
}

// ---- SpargeAttn-style ----

SpargePlan sparge_plan(const FloatMatrix& q, const FloatMatrix& k, const Grid& grid, const BlockShape& shape,
                       double sim_threshold) {
  check_inputs(q, k, grid);
  SpargePlan plan;
  plan.layout = BlockLayout(grid, shape);
  const BlockSummary s = summarize_blocks(q, k, plan.layout);
  const int nb = s.blocks, d = s.dim;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  plan.p.assign(static_cast<size_t>(nb) * static_cast<size_t>(nb), 0.0);
  for (int a = 0; a < nb; ++a) {
    double* row = plan.p.data() + static_cast<size_t>(a) * static_cast<size_t>(nb);
    double mx = -std::numeric_limits<double>::infinity();
    for (int b = 0; b < nb; ++b) {
      row[b] = dot(s.q_mean.data() + static_cast<size_t>(a * d), s.k_mean.data() + static_cast<size_t>(b * d), d) * scale +
               std::log(static_cast<double>(plan.layout.size(b)));
      mx = std::max(mx, row[b]);
    }
    double z = 0.0;
    for (int b = 0; b < nb; ++b) z += (row[b] = std::exp(row[b] - mx));
    for (int b = 0; b < nb; ++b) row[b] /= z;
  }
  for (int b = 0; b < nb; ++b) {
    plan.q_whole.push_back(s.q_sim[static_cast<size_t>(b)] < sim_threshold);
    plan.k_whole.push_back(s.k_sim[static_cast<size_t>(b)] < sim_threshold);
  }
  return plan;
}

BlockMask sparge_mask(const SpargePlan& plan, double cdf) {
  const int nb = plan.layout.count();
  BlockMask m(nb, nb);
  std::vector<int> idx(static_cast<size_t>(nb));
  for (int a = 0; a < nb; ++a) {
    if (plan.q_whole[static_cast<size_t>(a)]) {
      for (int b = 0; b < nb; ++b) m.set(a, b);
      continue;
    }
    const double* p = plan.p.data() + static_cast<size_t>(a) * static_cast<size_t>(nb);
    std::iota(idx.begin(), idx.end(), 0);
    std::sort(idx.begin(), idx.end(), [p](int x, int y) { return p[x] > p[y] || (p[x] == p[y] && x < y); });
    double acc = 0.0;
    for (int j = 0; j < nb && (j == 0 || acc < cdf); ++j) {  // the top block always
      m.set(a, idx[static_cast<size_t>(j)]);
      acc += p[idx[static_cast<size_t>(j)]];
    }
    for (int b = 0; b < nb; ++b)
      if (plan.k_whole[static_cast<size_t>(b)]) m.set(a, b);
  }
  return m;
}

// ---- greedy selection ----

GreedyPlan make_greedy_plan(BlockLayout layout, std::vector<double> value) {
  const size_t nb = static_cast<size_t>(layout.count());
  if (value.size() != nb * nb) throw Error("greedy plan: value table does not match the layout");
  GreedyPlan g;
  g.layout = std::move(layout);
  g.value = std::move(value);
  g.order.resize(g.value.size());
  std::iota(g.order.begin(), g.order.end(), 0);
  const auto& v = g.value;
  std::stable_sort(g.order.begin(), g.order.end(), [&v](int32_t x, int32_t y) { return v[static_cast<size_t>(x)] > v[static_cast<size_t>(y)]; });
  return g;
}

BlockMask greedy_mask(const GreedyPlan& plan, double keep_fraction) {
  const BlockLayout& L = plan.layout;
  const int nb = L.count();
  BlockMask m(nb, nb);
  const double total = static_cast<double>(L.grid().tokens()) * static_cast<double>(L.grid().tokens());
  const double budget = std::clamp(keep_fraction, 0.0, 1.0) * total;
  double kept = 0.0;  // in token pairs (MACs / d)
  for (int a = 0; a < nb; ++a) {
    m.set(a, a);
    kept += static_cast<double>(L.size(a)) * L.size(a);
  }
  for (int32_t t : plan.order) {
    const int a = t / nb, b = t % nb;
    if (m.at(a, b)) continue;
    const double cost = static_cast<double>(L.size(a)) * L.size(b);
    if (kept + cost > budget) {
      // Smaller tiles further down may still fit; edge tiles make this matter.
      continue;
    }
    m.set(a, b);
    kept += cost;
  }
  return m;
}

// ---- Veda-style ----

GreedyPlan veda_plan(const FloatMatrix& q, const FloatMatrix& k, const Grid& grid, const std::vector<BlockShape>& candidates) {
  check_inputs(q, k, grid);
  if (candidates.empty()) throw ConfigError("block shapes", "none", "Veda-style needs at least one candidate");
  BlockLayout best_layout;
  double best = std::numeric_limits<double>::infinity();
  for (const BlockShape& shape : candidates) {
    BlockLayout layout(grid, shape);
    const BlockSummary s = summarize_blocks(q, k, layout);
    double within = 0.0;  // sum over tokens of squared distance to their tile mean = sum n * var
    for (int b = 0; b < s.blocks; ++b)
      for (int c = 0; c < s.dim; ++c)
        within += layout.size(b) * static_cast<double>(s.q_var[static_cast<size_t>(b * s.dim + c)] +
                                                       s.k_var[static_cast<size_t>(b * s.dim + c)]);
    if (within < best - 1e-9) {
      best = within;
      best_layout = std::move(layout);
    }
  }
  const BlockSummary s = summarize_blocks(q, k, best_layout);
  const int nb = s.blocks, d = s.dim;
  const double rs = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> value(static_cast<size_t>(nb) * static_cast<size_t>(nb));
  std::vector<double> row(static_cast<size_t>(nb));
  for (int a = 0; a < nb; ++a) {
    const float* qm = s.q_mean.data() + static_cast<size_t>(a * d);
    const float* qv = s.q_var.data() + static_cast<size_t>(a * d);
    double mx = -std::numeric_limits<double>::infinity();
    for (int b = 0; b < nb; ++b) {
      const float* km = s.k_mean.data() + static_cast<size_t>(b * d);
      const float* kv = s.k_var.data() + static_cast<size_t>(b * d);
      const float* kx = s.k_max.data() + static_cast<size_t>(b * d);
      const float* kn = s.k_min.data() + static_cast<size_t>(b * d);
      double mean = 0.0, var = 0.0, bound = 0.0;
      for (int c = 0; c < d; ++c) {
        mean += static_cast<double>(qm[c]) * km[c];
        var += static_cast<double>(qm[c]) * qm[c] * kv[c] + static_cast<double>(km[c]) * km[c] * qv[c];
        bound += std::max(static_cast<double>(qm[c]) * kx[c], static_cast<double>(qm[c]) * kn[c]);
      }
      const double lnb = std::log(static_cast<double>(best_layout.size(b)));
      const double score = std::min(lnb + mean * rs + var / (2.0 * d), lnb + bound * rs);
      row[static_cast<size_t>(b)] = score;
      mx = std::max(mx, score);
    }
    double z = 0.0;
    for (double& x : row) z += (x = std::exp(x - mx));
    for (int b = 0; b < nb; ++b)
      value[static_cast<size_t>(a) * static_cast<size_t>(nb) + static_cast<size_t>(b)] =
          row[static_cast<size_t>(b)] / z / best_layout.size(b);
  }
  return make_greedy_plan(std::move(best_layout), std::move(value));
}

// ---- ScalingAttention-style ----

GreedyPlan scaling_plan(const BlockLayout& layout, const std::vector<double>& mass) {
  const int nb = layout.count();
  if (mass.size() != static_cast<size_t>(nb) * static_cast<size_t>(nb)) throw Error("scaling plan: mass table does not match the layout");
  std::vector<double> value(mass.size());
  for (int a = 0; a < nb; ++a)
    for (int b = 0; b < nb; ++b) {
      const size_t i = static_cast<size_t>(a) * static_cast<size_t>(nb) + static_cast<size_t>(b);
      value[i] = mass[i] / layout.size(b);
    }
  return make_greedy_plan(layout, std::move(value));
}

// ---- Sliding-tile-style ----

BlockMask sliding_tile_mask(const BlockLayout& layout, const std::array<int, 3>& r) {
  const int nb = layout.count();
  BlockMask m(nb, nb);
  for (int a = 0; a < nb; ++a)
    for (int b = 0; b < nb; ++b)
      if (std::abs(layout.bt(a) - layout.bt(b)) <= r[0] && std::abs(layout.bh(a) - layout.bh(b)) <= r[1] &&
          std::abs(layout.bw(a) - layout.bw(b)) <= r[2])
        m.set(a, b);
  return m;
}

std::array<int, 3> sliding_tile_radius(const BlockLayout& layout, double s) {
  const double c = std::clamp(s, 0.0, 1.0);
  return {static_cast<int>(std::lround(c * (layout.blocks().t - 1))), static_cast<int>(std::lround(c * (layout.blocks().h - 1))),
          static_cast<int>(std::lround(c * (layout.blocks().w - 1)))};
}

}  // namespace kaleido::study
