// Speed of the golden model on a real grid (Wan2.1 480p head: 21x30x52 tokens,
// head dim 128). Run: build/tests/bench_golden --benchmark_repetitions=5
// (not part of ctest: timing belongs in reports, not in unit tests).
#include <benchmark/benchmark.h>

#include "golden/gemm.hpp"
#include "golden/quant.hpp"
#include "golden/reuse.hpp"
#include "golden/workload.hpp"

namespace {

using namespace kaleido;

struct WanHead {
  ReuseConfig cfg;
  IntMatrix a, b;
  WanHead() {
    cfg.grid = {21, 30, 52};
    cfg.channels = 128;
    cfg.out_cols = 128;
    cfg.group_w = 8;
    cfg.band = parse_band_split("wan2.1");
    cfg.tau.assign(16, 24);
    SyntheticSpec s;
    s.grid = cfg.grid;
    s.channels = 128;
    s.spatial_corr = 0.97;
    s.temporal_corr = 0.98;
    s.noise = 0.05;
    a = quantize(make_latent(s), 8).q;
    b = make_int_uniform(128, 128, 8, 2);
  }
};

const WanHead& head() {
  static const WanHead h;
  return h;
}

void BM_DecisionsWan480pHead(benchmark::State& state) {
  const WanHead& h = head();
  double ratio = 0;
  for (auto _ : state) {
    const IntReuse r = run_reuse(h.cfg, h.a);
    ratio = r.counters.reuse_ratio();
    benchmark::DoNotOptimize(r.decisions.data());
  }
  state.counters["reuse_ratio"] = ratio;
  state.counters["pairs"] = static_cast<double>(h.cfg.grid.tokens() * h.cfg.groups());
}
BENCHMARK(BM_DecisionsWan480pHead)->Unit(benchmark::kMillisecond);

void BM_OutputTile64x128(benchmark::State& state) {
  const WanHead& h = head();
  const IntReuse r = run_reuse(h.cfg, h.a);
  for (auto _ : state) {
    const WideMatrix t = reuse_output(h.cfg, h.a, h.b, r, Tile{16000, 64, 0, 128});
    benchmark::DoNotOptimize(t.data.data());
  }
}
BENCHMARK(BM_OutputTile64x128)->Unit(benchmark::kMicrosecond);

void BM_FullOutputWan480pHead(benchmark::State& state) {
  const WanHead& h = head();
  const IntReuse r = run_reuse(h.cfg, h.a);
  for (auto _ : state) {
    const WideMatrix t = reuse_output(h.cfg, h.a, h.b, r);
    benchmark::DoNotOptimize(t.data.data());
  }
}
BENCHMARK(BM_FullOutputWan480pHead)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
