// Attention evaluation against a naive model, and the MAC accounting of the methods.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "golden/random.hpp"
#include "golden/reuse.hpp"
#include "study/attention.hpp"
#include "study/methods.hpp"

namespace kaleido::study {
namespace {

AttentionInputs random_inputs(const Grid& g, int d, uint64_t seed) {
  AttentionInputs in;
  in.grid = g;
  in.head_dim = d;
  in.rope = Rope3d{{d / 2 - (d / 2) % 2, d / 4, d - (d / 2 - (d / 2) % 2) - d / 4}, 10000.0};
  Rng rng(seed);
  for (FloatMatrix* m : {&in.q, &in.k, &in.v}) {
    *m = FloatMatrix(g.tokens(), d);
    for (auto& x : m->data) x = static_cast<float>(rng.normal());
  }
  return in;
}

// Naive double-precision attention row with an optional key filter.
std::vector<double> naive_row(const AttentionInputs& in, const FloatMatrix& q, int32_t i,
                              const std::function<bool(int32_t)>& keep) {
  const int64_t N = in.k.rows, d = in.head_dim;
  std::vector<double> s(static_cast<size_t>(N));
  double mx = -1e300;
  for (int64_t j = 0; j < N; ++j) {
    double x = 0;
    for (int64_t c = 0; c < d; ++c) x += static_cast<double>(q.at(i, c)) * in.k.at(j, c);
    s[static_cast<size_t>(j)] = x / std::sqrt(static_cast<double>(d));
    if (keep(static_cast<int32_t>(j))) mx = std::max(mx, s[static_cast<size_t>(j)]);
  }
  double z = 0;
  std::vector<double> o(static_cast<size_t>(d), 0.0);
  for (int64_t j = 0; j < N; ++j) {
    if (!keep(static_cast<int32_t>(j))) continue;
    const double p = std::exp(s[static_cast<size_t>(j)] - mx);
    z += p;
    for (int64_t c = 0; c < d; ++c) o[static_cast<size_t>(c)] += p * in.v.at(j, c);
  }
  for (double& x : o) x /= z;
  return o;
}

TEST(Attention, ExactRowsMatchANaiveModel) {
  const AttentionInputs in = random_inputs(Grid{2, 3, 5}, 16, 1);
  const std::vector<int32_t> rows = sample_rows(30, 7, 3);
  ASSERT_EQ(rows.size(), 7u);
  const AttentionEvaluator ev(in, rows, 2);
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto o = naive_row(in, in.q, rows[r], [](int32_t) { return true; });
    for (int c = 0; c < 16; ++c) EXPECT_NEAR(ev.exact_out().at(static_cast<int64_t>(r), c), o[static_cast<size_t>(c)], 1e-5);
  }
  const AttentionQuality same = ev.with_inputs(in.q);
  EXPECT_TRUE(std::isinf(same.out.psnr_db));
  EXPECT_TRUE(std::isinf(ev.with_inputs(in.q, &in.k, &in.v).out.psnr_db));
  // Other values change the output exactly as the naive model says.
  FloatMatrix v2 = in.v;
  for (auto& x : v2.data) x *= 2.0f;
  EXPECT_NEAR(ev.with_inputs(in.q, nullptr, &v2).out.cosine, 1.0, 1e-9);
  EXPECT_NEAR(ev.with_inputs(in.q, nullptr, &v2).out.max_abs_err, ev.exact_out().data.empty() ? 0.0 : [&] {
    double m = 0;
    for (float x : ev.exact_out().data) m = std::max(m, static_cast<double>(std::fabs(x)));
    return m;
  }(), 1e-5);
  EXPECT_NEAR(same.scores.cosine, 1.0, 1e-12);
}

TEST(Attention, MaskedRowsMatchANaiveMaskedSoftmax) {
  const Grid g{2, 2, 4};
  const AttentionInputs in = random_inputs(g, 8, 2);
  const BlockLayout L(g, BlockShape{1, 2, 2});
  BlockMask m(L.count(), L.count());
  Rng rng(4);
  for (int a = 0; a < L.count(); ++a) {
    m.set(a, a);
    for (int b = 0; b < L.count(); ++b)
      if (rng.uniform() < 0.4) m.set(a, b);
  }
  std::vector<int32_t> all = sample_rows(16, 100, 1);
  const AttentionEvaluator ev(in, all, 1);
  const AttentionQuality q = ev.with_mask(L, m);
  // Rebuild the expected error from the naive model.
  double se = 0, peak = 0;
  for (int32_t i : all) {
    const auto o = naive_row(in, in.q, i, [&](int32_t j) { return m.at(L.block_of(i), L.block_of(j)); });
    const auto e = naive_row(in, in.q, i, [](int32_t) { return true; });
    for (int c = 0; c < 8; ++c) {
      se += (o[static_cast<size_t>(c)] - e[static_cast<size_t>(c)]) * (o[static_cast<size_t>(c)] - e[static_cast<size_t>(c)]);
      peak = std::max(peak, std::fabs(e[static_cast<size_t>(c)]));
    }
  }
  const double want = 10 * std::log10(peak * peak / (se / (16 * 8)));
  EXPECT_NEAR(q.out.psnr_db, want, 1e-3);
  // Everything kept: exact.
  const AttentionQuality full = ev.with_mask(L, BlockMask(L.count(), L.count(), true));
  EXPECT_TRUE(std::isinf(full.out.psnr_db));
}

TEST(Attention, BlockMassRowsSumToOne) {
  const Grid g{2, 4, 4};
  const AttentionInputs in = random_inputs(g, 8, 5);
  const BlockLayout L(g, BlockShape{1, 2, 2});
  const std::vector<double> mass = block_attention_mass(in, L, 2, 1, 2);
  for (int a = 0; a < L.count(); ++a) {
    double s = 0;
    for (int b = 0; b < L.count(); ++b) s += mass[static_cast<size_t>(a * L.count() + b)];
    EXPECT_NEAR(s, 1.0, 1e-5);
  }
}

TEST(Methods, ReuseAccountingFollowsTheGoldenCounters) {
  const Grid g{3, 4, 4};
  AttentionInputs in = random_inputs(g, 16, 7);
  // Smooth queries so that some pairs are reused.
  for (int64_t i = 0; i < in.q.rows; ++i)
    for (int c = 0; c < 16; ++c) in.q.at(i, c) = static_cast<float>(std::sin(0.1 * static_cast<double>(i) + c));
  ReuseMethodSpec spec;
  spec.group_w = 4;
  auto m = make_reuse_method(in, spec);
  const Execution e = m->execute(0.5);
  const int64_t N = g.tokens();
  EXPECT_EQ(e.dense, N * N * 16);
  const int64_t pairs = N * 4;
  const int64_t reused = std::llround(m->detail()["reuse_ratio"].get<double>() * static_cast<double>(pairs));
  EXPECT_GT(reused, 0);
  EXPECT_EQ(e.qk, (pairs - reused) * 4 * N);  // compute pairs x Gw x N_k
  EXPECT_EQ(e.pv, N * N * 16);  // rope-orthogonal groups never share one reference
  EXPECT_NEAR(e.qk_savings(), static_cast<double>(reused) / static_cast<double>(pairs), 1e-12);
  // Token-level reuse skips whole rows of both products.
  spec.mode = Mode::TokenReuse;
  auto t = make_reuse_method(in, spec);
  const Execution et = t->execute(10.0);
  const int64_t rows = t->detail()["rows_identical"].get<int64_t>();
  EXPECT_GT(rows, 0);
  EXPECT_EQ(et.pv, (N - rows) * N * 16);
  EXPECT_EQ(et.qk, et.pv);
}

TEST(Methods, KnobSearchHitsTheTargetAndBlockSparseSavesBothProducts) {
  const Grid g{4, 8, 8};
  const AttentionInputs in = random_inputs(g, 16, 9);
  PeerParams p;
  auto veda = make_veda_method(in, p);
  const KnobSearch ks = find_knob(*veda, 0.6, false);
  EXPECT_NEAR(ks.achieved, 0.6, 0.02);
  EXPECT_EQ(ks.exec.qk, ks.exec.pv);
  EXPECT_NEAR(ks.exec.savings(), ks.exec.qk_savings(), 1e-12);
  ReuseMethodSpec spec;
  spec.group_w = 4;
  auto reuse = make_reuse_method(in, spec);
  const KnobSearch kr = find_knob(*reuse, 0.3, true);
  EXPECT_NEAR(kr.achieved, 0.3, 0.01);
  EXPECT_NEAR(kr.exec.qk_savings(), 0.3, 0.01);
}

}  // namespace
}  // namespace kaleido::study
