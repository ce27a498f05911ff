// Attention evaluation against a naive model, and the MAC accounting of the methods.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/error.hpp"
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

// Quality sums and probabilities are accumulated in row order, not in the order threads finish: every figure
// is bit-identical for 1, 2 and 3 threads (600 rows: many chunks, and several probability blocks at 1 thread).
TEST(Attention, ResultsDoNotDependOnTheThreadCount) {
  const Grid g{4, 10, 15};
  const AttentionInputs in = random_inputs(g, 8, 13);
  std::vector<int32_t> rows(static_cast<size_t>(g.tokens()));
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
  FloatMatrix q_eff = in.q;
  for (float& x : q_eff.data) x *= 1.01f;
  std::vector<double> snr, cos, mass;
  for (int threads : {1, 2, 3}) {
    AttentionEvaluator ev(in, rows, threads);
    const AttentionQuality q = ev.with_inputs(q_eff);
    snr.push_back(q.out.snr_db);
    cos.push_back(q.scores.cosine);
    const std::vector<double> m = exact_block_attention_mass(in, BlockLayout(g, BlockShape{2, 5, 5}), threads);
    mass.push_back(std::accumulate(m.begin(), m.end(), 0.0, [](double a, double x) { return a * 1.000001 + x; }));
    std::vector<size_t> order;
    attention_probabilities(in, rows, threads, [&](size_t i, const float*) { order.push_back(i); });
    for (size_t i = 0; i < order.size(); ++i) ASSERT_EQ(order[i], i) << threads << " threads";
  }
  for (size_t t = 1; t < snr.size(); ++t) {
    EXPECT_EQ(snr[t], snr[0]);
    EXPECT_EQ(cos[t], cos[0]);
    EXPECT_EQ(mass[t], mass[0]);
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

TEST(Oracle, ExactTileMassAndTheHighestMassTilesAreKept) {
  const Grid g{2, 4, 4};
  const int d = 8;
  AttentionInputs in = random_inputs(g, d, 21);
  for (auto& x : in.q.data) x *= 3.0f;  // a sharper softmax: tile masses far apart
  const BlockLayout L(g, BlockShape{1, 2, 2});  // 8 tiles of 4 tokens
  const int nb = L.count(), N = static_cast<int>(g.tokens());
  // Naive double-precision tile mass: mean over the queries of block a of the probability of block b.
  std::vector<double> want(static_cast<size_t>(nb * nb), 0.0);
  for (int i = 0; i < N; ++i) {
    std::vector<double> s(static_cast<size_t>(N));
    double mx = -1e300, z = 0;
    for (int j = 0; j < N; ++j) {
      double x = 0;
      for (int c = 0; c < d; ++c) x += static_cast<double>(in.q.at(i, c)) * in.k.at(j, c);
      s[static_cast<size_t>(j)] = x / std::sqrt(static_cast<double>(d));
      mx = std::max(mx, s[static_cast<size_t>(j)]);
    }
    for (double& x : s) z += (x = std::exp(x - mx));
    for (int j = 0; j < N; ++j)
      want[static_cast<size_t>(L.block_of(i) * nb + L.block_of(j))] += s[static_cast<size_t>(j)] / z / 4.0;
  }
  const std::vector<double> mass = exact_block_attention_mass(in, L, 2);
  for (size_t t = 0; t < want.size(); ++t) EXPECT_NEAR(mass[t], want[t], 1e-5) << t;
  // Budget: the diagonal (8 x 16 pairs) and three more tiles of 16 pairs, of 32 x 32.
  const double keep = (8 * 16 + 3 * 16) / 1024.0;
  const BlockMask m = greedy_mask(scaling_plan(L, mass), keep);
  std::vector<std::pair<double, int>> off;
  for (int a = 0; a < nb; ++a)
    for (int b = 0; b < nb; ++b)
      if (a != b) off.emplace_back(want[static_cast<size_t>(a * nb + b)], a * nb + b);
  std::sort(off.rbegin(), off.rend());
  EXPECT_EQ(m.kept(), nb + 3);
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(m.at(off[static_cast<size_t>(k)].second / nb, off[static_cast<size_t>(k)].second % nb)) << k;
  PeerParams p;
  p.block = BlockShape{1, 2, 2};
  auto oracle = make_oracle_block_method(in, p);
  EXPECT_EQ(oracle->name(), "oracle-block");
  const Execution e = oracle->execute(keep);
  EXPECT_EQ(e.qk, (8 * 16 + 3 * 16) * d);
  EXPECT_EQ(e.pv, e.qk);
}

TEST(Methods, ReuseOnPVCountsKeyGroupsAndCopiesIdenticalRows) {
  // Five tokens along w with one and the same query: after the first token every Q group and every P group
  // (key groups {0,1}, {2,3}, {4, pad}) reuses, so only token 0 computes: Q K^T d N MACs, P V (2 + 2 + 1) d.
  const Grid g{1, 1, 5};
  const int d = 4;
  AttentionInputs in = random_inputs(g, d, 3);
  for (int64_t i = 1; i < in.q.rows; ++i)
    for (int c = 0; c < d; ++c) in.q.at(i, c) = in.q.at(0, c);
  ReuseMethodSpec spec;
  spec.name = "channel-reuse-pv";
  spec.group_w = 2;
  spec.reuse_p = true;
  spec.policy = Policy::Fixed;  // every axis (Q here has no RoPE band split that matters: d = 4)
  auto m = make_reuse_method(in, spec);
  const Execution e = m->execute(0.0);
  EXPECT_EQ(e.dense, 5 * 5 * d);
  EXPECT_EQ(e.qk, d * 5);
  EXPECT_EQ(e.pv, (2 + 2 + 1) * d);
  EXPECT_DOUBLE_EQ(m->detail()["p_reuse_ratio"].get<double>(), 4.0 / 5.0);
  AttentionEvaluator ev(in, {0, 1, 2, 3, 4}, 1);
  const AttentionQuality q = m->evaluate(ev);
  EXPECT_GT(q.out.snr_db, 100.0);  // identical rows: exact up to float rounding
}

// P is streamed in chunks of 256 rows: the second grid (270 tokens) crosses a chunk boundary.
TEST(Methods, ReuseOnPVMatchesADirectComputation) {
  for (const Grid g : {Grid{2, 2, 3}, Grid{3, 10, 9}}) {
    SCOPED_TRACE(std::to_string(g.tokens()) + " tokens");
    const int d = 4, gw = 2;
    AttentionInputs in = random_inputs(g, d, 8);
    for (int64_t i = 0; i < in.q.rows; ++i)  // smooth queries: neighbours alike
      for (int c = 0; c < d; ++c) in.q.at(i, c) = static_cast<float>(std::sin(0.3 * static_cast<double>(i) + c) * 0.5);
    ReuseMethodSpec spec;
    spec.group_w = gw;
    spec.reuse_p = true;
    spec.policy = Policy::Fixed;
    auto m = make_reuse_method(in, spec);
    const double knob = 0.8;
    const Execution e = m->execute(knob);
    // Direct: Q reuse as the golden model decides, naive double softmax of Qhat K^T, reuse on P, then Phat V.
    ReuseConfig cq;
    cq.grid = g;
    cq.channels = d;
    cq.out_cols = static_cast<int>(g.tokens());
    cq.group_w = gw;
    cq.band = BandSplit{"rope", {in.rope.band[0], in.rope.band[1], in.rope.band[2]}};
    cq.policy = Policy::Fixed;
    cq.validate();
    for (int gr = 0; gr < cq.groups(); ++gr) {
      double s2 = 0;
      for (int64_t i = 0; i < in.q.rows; ++i)
        for (int c = gr * gw; c < (gr + 1) * gw; ++c) s2 += static_cast<double>(in.q.at(i, c)) * in.q.at(i, c);
      cq.tau_float.push_back(static_cast<float>(knob) *
                             static_cast<float>(std::sqrt(s2 / (static_cast<double>(in.q.rows) * gw))));
    }
    const FloatReuse qr = run_reuse(cq, in.q);
    const int64_t N = g.tokens();
    // P of every query from Qhat (the study's softmax, so that decisions near a threshold see the same floats).
    AttentionInputs hat = in;
    hat.q = qr.a_eff;
    FloatMatrix p(N, N);
    std::vector<int32_t> all(static_cast<size_t>(N));
    for (int64_t i = 0; i < N; ++i) all[static_cast<size_t>(i)] = static_cast<int32_t>(i);
    attention_probabilities(hat, all, 1, [&](size_t i, const float* row) { std::copy(row, row + N, p.row(static_cast<int64_t>(i))); });
    ReuseConfig cp;
    cp.grid = g;
    cp.channels = static_cast<int>(N);
    cp.out_cols = d;
    cp.group_w = gw;
    cp.policy = Policy::Fixed;
    cp.validate();
    for (int gr = 0; gr < cp.groups(); ++gr) {
      double s2 = 0;
      for (int64_t i = 0; i < N; ++i)
        for (int c = gr * gw; c < (gr + 1) * gw; ++c) s2 += static_cast<double>(p.at(i, c)) * p.at(i, c);
      cp.tau_float.push_back(static_cast<float>(knob) * static_cast<float>(std::sqrt(s2 / (static_cast<double>(N) * gw))));
    }
    const FloatReuse pr = run_reuse(cp, p);
    EXPECT_EQ(e.qk, qr.counters.macs_issued);
    EXPECT_EQ(e.pv, (N * cp.groups() - pr.counters.reused_pairs) * gw * d);
    EXPECT_GT(pr.counters.reused_pairs, 0);
    EXPECT_LT(e.pv, N * N * d);
    // Output rows against Phat V computed here.
    AttentionEvaluator ev(in, all, 1);
    const AttentionQuality q = m->evaluate(ev);
    double se = 0, sig = 0;
    for (int64_t i = 0; i < N; ++i)
      for (int c = 0; c < d; ++c) {
        double o = 0;
        for (int64_t j = 0; j < N; ++j) o += static_cast<double>(pr.a_eff.at(i, j)) * in.v.at(j, c);
        const double ex = ev.exact_out().at(i, c);
        se += (o - ex) * (o - ex);
        sig += ex * ex;
      }
    EXPECT_NEAR(q.out.snr_db, 10 * std::log10(sig / se), 1e-3);
  }
}

// The method keeps Phat only for the evaluator's rows (spec.kept_rows): the same work and quality on them as
// keeping every row, and a row it did not keep is refused rather than read.
TEST(Methods, ReuseOnPVKeepsOnlyTheEvaluatorsRows) {
  const Grid g{3, 10, 9};
  const int d = 4;
  AttentionInputs in = random_inputs(g, d, 5);
  for (int64_t i = 0; i < in.q.rows; ++i)
    for (int c = 0; c < d; ++c) in.q.at(i, c) = static_cast<float>(std::sin(0.2 * static_cast<double>(i) + c) * 0.5);
  ReuseMethodSpec spec;
  spec.group_w = 2;
  spec.reuse_p = true;
  spec.policy = Policy::Fixed;
  auto every = make_reuse_method(in, spec);
  const std::vector<int32_t> rows{3, 250, 17, 269, 100};
  spec.kept_rows = rows;
  auto some = make_reuse_method(in, spec);
  const Execution a = every->execute(0.5), b = some->execute(0.5);
  EXPECT_EQ(a.qk, b.qk);
  EXPECT_EQ(a.pv, b.pv);
  EXPECT_LT(b.pv, a.dense);
  AttentionEvaluator ev(in, rows, 1);
  const AttentionQuality qa = every->evaluate(ev), qb = some->evaluate(ev);
  EXPECT_EQ(qa.out.snr_db, qb.out.snr_db);
  EXPECT_LT(qb.out.snr_db, 200.0);  // reuse changed the output
  AttentionEvaluator other(in, {4}, 1);
  EXPECT_THROW(some->evaluate(other), InternalError);
}

}  // namespace
}  // namespace kaleido::study
