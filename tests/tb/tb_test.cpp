// The Verilator testbench of kld_top against the golden model (issue 5):
// a matrix of hardware configurations, workloads and seeds, corner cases,
// back-to-back runs, a reset in the middle of a run, and a negative test;
// and the same testbench on the dense baseline kld_plain_top.
//
// Each hardware configuration is built once into the Verilator cache; the
// workloads vary inside its limits. KALEIDO_SOAK_RUNS (label "soak") sets the
// number of random runs of the long soak test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/process.hpp"
#include "common/version.hpp"
#include "golden/gemm.hpp"
#include "golden/intmath.hpp"
#include "golden/quant.hpp"
#include "golden/random.hpp"
#include "golden/vectors.hpp"
#include "golden/workload.hpp"
#include "hw/blocks.hpp"
#include "hw/generator.hpp"
#include "hw/regmap.hpp"
#include "sim/simulate.hpp"
#include "sim/verilator_build.hpp"
#include "support/test_dir.hpp"

namespace kaleido {
namespace {

namespace fs = std::filesystem;

// Hardware configurations of the regression (small, so builds stay short).
hw::HwConfig hw_config(int which) {
  hw::HwConfig c;
  switch (which) {
    case 0:  // several k-tiles and m-tiles with remainders, several detector rounds, 3-token gather beats
      c.rows = 4; c.cols = 3; c.group_w = 2; c.data_w = 8; c.acc_w = 32; c.gather_w = 3;
      c.max_t = 3; c.max_h = 5; c.max_w = 6; c.max_k = 12; c.max_m = 7; c.lanes = 2; c.win_cap = 32;
      break;
    case 1:  // narrow data, accumulator as narrow as allowed (wraps), pipelined multipliers, 2-token beats,
             // detector lanes deciding two groups in alternate cycles
      c.rows = 8; c.cols = 4; c.group_w = 4; c.data_w = 4; c.acc_w = 8; c.mul_pipe = 1; c.gather_w = 2;
      c.lane_groups = 2;
      c.max_t = 2; c.max_h = 4; c.max_w = 5; c.max_k = 16; c.max_m = 9; c.win_cap = 32;
      break;
    case 2:  // one-row groups, wide data, odd accumulator
      c.rows = 2; c.cols = 5; c.group_w = 1; c.data_w = 16; c.acc_w = 40;
      c.max_t = 2; c.max_h = 3; c.max_w = 4; c.max_k = 4; c.max_m = 5; c.win_cap = 16;
      break;
    case 4:  // one row (kld_plain_top only): consecutive passes of a one-token grid issue back to back
      c.rows = 1; c.cols = 3; c.group_w = 1; c.data_w = 8; c.acc_w = 32;
      c.max_t = 1; c.max_h = 2; c.max_w = 2; c.max_k = 4; c.max_m = 6; c.win_cap = 16;
      break;
    default:  // every limit a power of two: N*K*M = 2^8 and MT*KT*N = 2^6 at the limits
      c.rows = 2; c.cols = 2; c.group_w = 1; c.data_w = 4; c.acc_w = 16;
      c.max_t = 1; c.max_h = 4; c.max_w = 4; c.max_k = 4; c.max_m = 4; c.win_cap = 16;
      break;
  }
  return c;
}
constexpr int kHwConfigs = 3;  // the configurations every random test runs on
constexpr int kPowerOfTwoConfig = 3;
constexpr int kOneRowConfig = 4;

struct Built {
  fs::path exe;
};

// The testbench of hardware configuration `which`, built for `top` (kld_top or kld_plain_top).
const Built& testbench(int which, const std::string& top) {
  static std::mutex mu;
  static std::map<std::pair<int, std::string>, Built> built;
  std::lock_guard<std::mutex> lock(mu);
  auto it = built.find({which, top});
  if (it != built.end()) return it->second;
  const hw::HwConfig hw = hw_config(which);
  const fs::path rtl = sim::cached_rtl(hw);
  sim::BuildSpec spec;
  spec.name = (top == "kld_top" ? "kld_tb_test_" : "kld_tb_plain_test_") + hw.name();
  spec.rtl_dir = rtl;
  spec.top = top;
  const fs::path src = source_dir();
  spec.sources = {src / "tb/tb_main.cpp"};
  spec.include_dirs = {src / "gen", src / "tb", rtl};
  spec.libs = sim::testbench_libs();
  return built[{which, top}] = Built{sim::build_model(spec).exe};
}

// A random workload that fits hardware configuration `which`.
ReuseConfig random_config(int which, Rng& r) {
  const hw::HwConfig hw = hw_config(which);
  ReuseConfig c;
  c.grid = {static_cast<int>(r.range(1, hw.max_t)), static_cast<int>(r.range(1, hw.max_h)),
            static_cast<int>(r.range(1, hw.max_w))};
  c.group_w = hw.group_w;
  c.channels = hw.group_w * static_cast<int>(r.range(1, hw.max_k / hw.group_w));
  c.out_cols = static_cast<int>(r.range(1, hw.max_m));
  c.data_w = hw.data_w;
  c.acc_w = hw.acc_w;
  c.policy = static_cast<Policy>(r.range(0, 2));
  const std::vector<std::vector<Axis>> lists = {{Axis::T, Axis::H, Axis::W}, {Axis::W}, {Axis::H, Axis::T}, {Axis::W, Axis::T, Axis::H}};
  c.fixed_axes = lists[static_cast<size_t>(r.range(0, 3))];
  if (r.range(0, 1)) c.band = {"test", {static_cast<int>(r.range(1, 3)), static_cast<int>(r.range(1, 3)), static_cast<int>(r.range(1, 3))}};
  if (c.band.has_rope() && c.channels % c.band.head_dim() != 0) c.band = BandSplit{};
  c.tile_h = static_cast<int>(r.range(0, c.grid.h));
  c.tile_w = static_cast<int>(r.range(0, c.grid.w));
  const int64_t need = ScanOrder(c.grid, c.tile_h, c.tile_w).required_window_depth();
  c.window_depth = r.range(0, 2) == 0 ? static_cast<int>(r.range(1, std::min<int64_t>(hw.window_cap(), std::max<int64_t>(need, 1))))
                                      : 0;
  if (need > hw.window_cap() && c.window_depth == 0) c.window_depth = hw.window_cap();
  for (int g = 0; g < c.groups(); ++g) c.tau.push_back(static_cast<uint32_t>(r.range(0, c.tau_max() / 3)));
  if (r.range(0, 3) == 0)  // mixed mode: some groups never reuse
    for (int g = 0; g < c.groups(); ++g) c.group_enable.push_back(static_cast<uint8_t>(r.range(0, 1)));
  return c;
}

// A workload at the limits of `hw`: the whole grid, K = MAX_K, M = MAX_M, the hardware's widths.
ReuseConfig at_limits(const hw::HwConfig& hw) {
  ReuseConfig c;
  c.grid = {hw.max_t, hw.max_h, hw.max_w};
  c.group_w = hw.group_w;
  c.channels = hw.max_k;
  c.out_cols = hw.max_m;
  c.data_w = hw.data_w;
  c.acc_w = hw.acc_w;
  return c;
}

IntMatrix correlated_a(const ReuseConfig& c, uint64_t seed) {
  SyntheticSpec s;
  s.grid = c.grid;
  s.channels = c.channels;
  s.seed = seed;
  s.spatial_corr = 0.95;
  s.temporal_corr = 0.97;
  s.noise = 0.03;
  return quantize(make_latent(s), c.data_w).q;
}

struct TbRun {
  int status;
  nlohmann::json report;
  std::string output;
};

// A workload run after the first one on the same instance (the testbench's --then).
struct NextWorkload {
  ReuseConfig c;
  IntMatrix a, b;
};

// `keep`: further B tiles of A, each passed as --keep vectors; `then`: other workloads, run after.
TbRun run_tb(int which, const ReuseConfig& c, const IntMatrix& a, const IntMatrix& b, const std::string& args,
             const std::string& tag, const std::string& top = "kld_top", const std::vector<IntMatrix>& keep = {},
             const std::vector<NextWorkload>& then = {}) {
  const fs::path dir = testing::process_dir("tb_test");
  const fs::path vec = dir / (tag + ".kvec"), json = dir / (tag + ".json"), log = dir / (tag + ".log");
  write_vectors(vec.string(), make_vectors(c, a, b));
  std::vector<std::string> argv = {testbench(which, top).exe.string(), "--vectors", vec.string(), "--json",
                                   json.string()};
  std::vector<fs::path> kept;
  for (size_t k = 0; k < keep.size(); ++k) {
    kept.push_back(dir / (tag + "_keep" + std::to_string(k) + ".kvec"));
    write_vectors(kept.back().string(), make_vectors(c, a, keep[k]));
    argv.insert(argv.end(), {"--keep", kept.back().string()});
  }
  for (size_t k = 0; k < then.size(); ++k) {
    kept.push_back(dir / (tag + "_then" + std::to_string(k) + ".kvec"));
    write_vectors(kept.back().string(), make_vectors(then[k].c, then[k].a, then[k].b));
    argv.insert(argv.end(), {"--then", kept.back().string()});
  }
  std::istringstream words(args);  // `args` holds plain space-separated options
  for (std::string w; words >> w;) argv.push_back(w);
  ProcessOptions po;
  po.log = log;
  const ProcessResult run = run_process(argv, po);
  TbRun r;
  r.status = run.exit_code;
  r.output = run.output;
  if (fs::exists(json)) r.report = nlohmann::json::parse(read_file(json));
  fs::remove(vec);
  fs::remove(json);
  fs::remove(log);
  for (const fs::path& f : kept) fs::remove(f);
  return r;
}

void expect_pass(const TbRun& r, const std::string& what) {
  EXPECT_EQ(r.status, 0) << what << "\n" << r.output;
  ASSERT_FALSE(r.report.is_null()) << what << "\n" << r.output;
  EXPECT_TRUE(r.report.at("bit_exact").get<bool>()) << what << "\n" << r.output;
  for (const auto& run : r.report.at("runs")) EXPECT_GT(run.at("compared_outputs").get<int64_t>(), 0) << what;
}

TEST(Testbench, RandomMatrixPassesBitForBitInReuseDenseAndMixedModes) {
  for (int which = 0; which < kHwConfigs; ++which) {
    Rng r(1000 + static_cast<uint64_t>(which));
    for (int k = 0; k < 12; ++k) {
      const ReuseConfig c = random_config(which, r);
      const uint64_t seed = r.next() % 100000;
      const IntMatrix a = correlated_a(c, seed);
      const IntMatrix b = make_int_uniform(c.channels, c.out_cols, c.data_w, seed + 1);
      const std::string what = "hw " + hw_config(which).name() + " case " + std::to_string(k) + " " + nlohmann::json(c).dump();
      expect_pass(run_tb(which, c, a, b, "--mode both --stall 0.3 --seed " + std::to_string(seed), "m"), what);
    }
  }
}

TEST(Testbench, CornerCases) {
  const int which = 0;
  const hw::HwConfig hw = hw_config(which);
  auto base = [&] {
    ReuseConfig c = at_limits(hw);  // M = MAX_M: not a multiple of COLS
    c.channels = hw.max_k - hw.group_w;  // not a multiple of ROWS
    c.tau.assign(static_cast<size_t>(c.groups()), 20);
    return c;
  };
  const IntMatrix b = make_int_uniform(hw.max_k, hw.max_m, 8, 5);
  auto b_for = [&](const ReuseConfig& c) {
    IntMatrix m(c.channels, c.out_cols);
    for (int k = 0; k < c.channels; ++k)
      for (int j = 0; j < c.out_cols; ++j) m.at(k, j) = b.at(k, j);
    return m;
  };
  {  // every pair that has a reference reused
    ReuseConfig c = base();
    c.tau.assign(static_cast<size_t>(c.groups()), c.tau_max());
    expect_pass(run_tb(which, c, correlated_a(c, 1), b_for(c), "--mode both --stall 0.2", "all"), "every pair reused");
  }
  {  // none reused: tau 0 on random data; and a group-enable mask of zeros
    ReuseConfig c = base();
    c.tau.assign(static_cast<size_t>(c.groups()), 0);
    const IntMatrix a = make_int_uniform(c.grid.tokens(), c.channels, c.data_w, 9);
    expect_pass(run_tb(which, c, a, b_for(c), "--stall 0.2", "tau0"), "tau = 0");
    c.tau.assign(static_cast<size_t>(c.groups()), c.tau_max());
    c.group_enable.assign(static_cast<size_t>(c.groups()), 0);
    expect_pass(run_tb(which, c, a, b_for(c), "--stall 0.2", "none"), "no group enabled");
  }
  {  // T = 1 and W = 1
    ReuseConfig c = base();
    c.grid.t = 1;
    expect_pass(run_tb(which, c, correlated_a(c, 2), b_for(c), "--mode both", "t1"), "T = 1");
    c = base();
    c.grid.w = 1;
    expect_pass(run_tb(which, c, correlated_a(c, 3), b_for(c), "--mode both", "w1"), "W = 1");
    c = base();
    c.grid = {1, 1, 1};
    expect_pass(run_tb(which, c, correlated_a(c, 4), b_for(c), "--mode both", "one"), "a single token");
  }
  {  // extreme operands: most negative values everywhere, wrap-around at ACC_W
    const int w2 = 1;  // narrow accumulator configuration
    const hw::HwConfig h2 = hw_config(w2);
    ReuseConfig c = at_limits(h2);
    c.tau.assign(static_cast<size_t>(c.groups()), 1);
    IntMatrix a(c.grid.tokens(), c.channels, -(1 << (c.data_w - 1)));
    IntMatrix bb(c.channels, c.out_cols, -(1 << (c.data_w - 1)));
    for (int64_t i = 0; i < a.rows; i += 3) a.at(i, 0) = (1 << (c.data_w - 1)) - 1;
    const WideMatrix exact = gemm_exact(a, bb);
    bool wraps = false;
    for (int64_t v : exact.data) wraps |= v > signed_max(c.acc_w);
    EXPECT_TRUE(wraps) << "the case must overflow ACC_W";
    expect_pass(run_tb(w2, c, a, bb, "--mode both --stall 0.1", "extreme"), "extreme operands");
  }
}

// An m-tile's last partials land while the next m-tile's passes issue (no drain): with one k-tile and
// a few tokens an m-tile's passes are shorter than its landing (2 + GROUP_W + COLS - 1 cycles), so
// two m-tiles are in the array at once, each writing the bank its tags carry, and the pass engine
// waits for an m-tile that has not yet reached the gather. Bit-exact, and CYCLES as documented.
TEST(Testbench, MTilesShorterThanTheirLandingOverlapInTheArray) {
  const int which = 0;  // 3 columns, M = 7: three m-tiles, the last one partial
  const hw::HwConfig hw = hw_config(which);
  for (const Grid& grid : {Grid{1, 1, 1}, Grid{1, 2, 2}, Grid{2, 1, 3}}) {
    ReuseConfig c = at_limits(hw);
    c.grid = grid;
    c.channels = hw.group_w;  // one k-tile
    c.tau.assign(static_cast<size_t>(c.groups()), 30);
    const std::string tag = "short_" + std::to_string(grid.tokens());
    const IntMatrix a = correlated_a(c, 11), b = make_int_uniform(c.channels, c.out_cols, c.data_w, 12);
    expect_pass(run_tb(which, c, a, b, "--mode both --stall 0", tag), tag);
    expect_pass(run_tb(which, c, a, b, "--mode both --stall 0.3", tag + "_stalls"), tag + " with stalls");
  }
}

// Every product at its largest, (-2^(DATA_W-1))^2 = 2^(2*DATA_W-2), with K at MAX_K: each group's
// partial, each array column and each dot product reaches the magnitude its exact width is derived
// from (docs/hardware.md "Widths"), without wrapping ACC_W. A width one bit narrower overflows here
// (config 0: PARTIAL_W and PSUM_W; config 2: OUT_SUM_W, MAX_K = 4 a power of two).
TEST(Testbench, ExtremeOperandsReachTheExactSumWidths) {
  for (int which : {0, 2}) {
    const hw::HwConfig hw = hw_config(which);
    ReuseConfig c = at_limits(hw);
    c.tau.assign(static_cast<size_t>(c.groups()), 1);
    const int lo = -(1 << (c.data_w - 1));
    const IntMatrix a(c.grid.tokens(), c.channels, lo), b(c.channels, c.out_cols, lo);
    const WideMatrix exact = gemm_exact(a, b);
    const int64_t bound = int64_t{c.channels} << (2 * c.data_w - 2);
    EXPECT_EQ(*std::max_element(exact.data.begin(), exact.data.end()), bound) << hw.name();
    ASSERT_LE(bound, signed_max(c.acc_w)) << hw.name() << ": the case must not wrap ACC_W";
    expect_pass(run_tb(which, c, a, b, "--mode both --stall 0.1", "extreme_exact"), hw.name() + " kld_top");
    c.mode = Mode::Dense;
    expect_pass(run_tb(which, c, a, b, "--stall 0.1", "extreme_exact_plain", "kld_plain_top"),
                hw.name() + " kld_plain_top");
  }
}

// The counters a run bounds are only as wide as the bound (docs/hardware.md "Counters"). With every
// limit a power of two the dense run at the limits reaches MACS_ISSUED = N*K*M = 2^8 and BUSY =
// MT*KT*N = 2^6 exactly, where a counter of clog2(bound) bits would read 0.
TEST(Testbench, CountersHoldTheirBoundAtPowerOfTwoLimits) {
  const hw::HwConfig hw = hw_config(kPowerOfTwoConfig);
  ReuseConfig c = at_limits(hw);
  c.tau.assign(static_cast<size_t>(c.groups()), 2);
  const IntMatrix a = correlated_a(c, 21), b = make_int_uniform(c.channels, c.out_cols, c.data_w, 22);
  const TbRun t = run_tb(kPowerOfTwoConfig, c, a, b, "--mode both", "pow2_limits");
  expect_pass(t, hw.name());
  ASSERT_FALSE(t.report.is_null());
  const int64_t N = c.grid.tokens(), nkm = N * c.channels * c.out_cols;
  const int64_t passes = ((c.out_cols + hw.cols - 1) / hw.cols) * ((c.channels + hw.rows - 1) / hw.rows);
  ASSERT_EQ(nkm, 256);
  ASSERT_EQ(passes * N, 64);
  bool saw_dense = false;
  for (const auto& run : t.report.at("runs")) {
    EXPECT_EQ(run.at("macs_issued").get<int64_t>() + run.at("macs_skipped").get<int64_t>(), nkm);
    if (run.at("mode").get<std::string>() != "dense") continue;
    saw_dense = true;
    EXPECT_EQ(run.at("macs_issued").get<int64_t>(), nkm);
    EXPECT_EQ(run.at("busy_cycles").get<int64_t>(), passes * N);
  }
  EXPECT_TRUE(saw_dense);
}

// Decision patterns that load the array's segments differently (issue 10): uniform (every group
// reuses at one threshold), clustered (a static half of the frame reused by every group, the rest
// computed by every group) and the worst imbalance (the groups of segment 0 reuse every pair with
// a reference, those of segment 1 none, in every k-tile: half the MACs skipped, yet every pass is
// as long as its busiest segment). Each is bit-exact, its cycles equal the documented schedule (the
// testbench checks CYCLES and every stall counter), and reuse mode is never slower than dense.
TEST(Testbench, DecisionPatternsUniformClusteredAndWorstImbalance) {
  const int which = 0;
  const hw::HwConfig hw = hw_config(which);
  const int segs = hw.segs();
  ASSERT_GE(segs, 2) << "the imbalance pattern needs two segments per k-tile";
  const ReuseConfig c = at_limits(hw);
  const IntMatrix b = make_int_uniform(c.channels, c.out_cols, c.data_w, 11);
  const IntMatrix noise = make_int_uniform(c.grid.tokens(), c.channels, c.data_w, 12);

  struct Pattern {
    std::string name;
    IntMatrix a;
    std::vector<uint32_t> tau;
  };
  std::vector<Pattern> patterns;
  patterns.push_back({"uniform", correlated_a(c, 13), std::vector<uint32_t>(static_cast<size_t>(c.groups()), 24)});
  IntMatrix clustered = noise;  // tokens in the left half of every frame are one static vector
  for (int64_t i = 0; i < clustered.rows; ++i)
    if (i % c.grid.w < c.grid.w / 2)
      for (int64_t k = 0; k < clustered.cols; ++k) clustered.at(i, k) = noise.at(0, k);
  patterns.push_back({"clustered", clustered, std::vector<uint32_t>(static_cast<size_t>(c.groups()), 0)});
  std::vector<uint32_t> imbalance;
  for (int g = 0; g < c.groups(); ++g) imbalance.push_back(g % segs == 0 ? c.tau_max() : 0);
  patterns.push_back({"worst_imbalance", noise, imbalance});

  for (const Pattern& p : patterns) {
    ReuseConfig pc = c;
    pc.tau = p.tau;
    const TbRun r = run_tb(which, pc, p.a, b, "--mode both --stall 0", "pattern_" + p.name);
    expect_pass(r, p.name);
    ASSERT_EQ(r.report.at("runs").size(), 2u) << p.name;
    const nlohmann::json& reuse = r.report.at("runs").at(0);
    const nlohmann::json& dense = r.report.at("runs").at(1);
    ASSERT_EQ(reuse.at("mode"), "reuse");
    ASSERT_EQ(dense.at("mode"), "dense");
    const auto skipped = reuse.at("macs_skipped").get<double>();
    const double fraction = skipped / (skipped + reuse.at("macs_issued").get<double>());
    const auto reuse_cycles = reuse.at("cycles").get<int64_t>(), dense_cycles = dense.at("cycles").get<int64_t>();
    EXPECT_LE(reuse_cycles, dense_cycles) << p.name << ": reuse mode slower than dense";
    std::printf("%s: skipped %.3f of the MACs, reuse %lld / dense %lld cycles\n", p.name.c_str(), fraction,
                static_cast<long long>(reuse_cycles), static_cast<long long>(dense_cycles));
    if (p.name == "clustered") {  // about half the tokens of every group are reused
      EXPECT_GT(fraction, 0.4) << p.name;
      EXPECT_LT(reuse_cycles, dense_cycles * 3 / 4) << p.name;
    }
    if (p.name == "worst_imbalance") {  // half the MACs skipped, no pass shorter than N
      EXPECT_NEAR(fraction, 0.5, 0.02) << p.name;
      EXPECT_GT(reuse_cycles, dense_cycles * 9 / 10) << p.name << ": segments are fixed per group (issue 10, item 1)";
    }
  }
}

// The scan's corners (issue 10, "How it is proven"): tiles one and two positions long, edge tiles
// clipped to one column or row, a window exactly as deep as the scan needs and one position
// shallower, and t and w chains as long as the grid allows. Each run is bit-exact in both modes
// with CYCLES equal to the schedule; the golden model shows that each case holds what it names.
TEST(Testbench, ScanCornersTilesOfOneAndTwoPositionsWindowAtItsEdgeLongChains) {
  const int which = 0;
  const hw::HwConfig hw = hw_config(which);
  ASSERT_GE(hw.max_t, 3);
  ASSERT_GE(hw.max_w, 5);
  ReuseConfig base = at_limits(hw);
  base.tau.assign(static_cast<size_t>(base.groups()), 40);
  const IntMatrix b = make_int_uniform(base.channels, base.out_cols, base.data_w, 21);
  auto run = [&](const ReuseConfig& c, const std::string& tag) {
    const IntMatrix a = correlated_a(c, 22);
    expect_pass(run_tb(which, c, a, b, "--mode both --stall 0.2 --seed 23", tag), tag + " " + nlohmann::json(c).dump());
    return run_reuse(c, a);
  };
  {  // T = 1, 1 x 1 tiles: every tile one position, no reference anywhere
    ReuseConfig c = base;
    c.grid.t = 1;
    c.tile_h = 1;
    c.tile_w = 1;
    EXPECT_EQ(run(c, "tiles_of_one").counters.reused_pairs, 0);
  }
  {  // T = 2, 1 x 1 tiles: two positions per tile, the t reference at distance 1
    ReuseConfig c = base;
    c.grid.t = 2;
    c.tile_h = 1;
    c.tile_w = 1;
    c.fixed_axes = {Axis::T};
    c.policy = Policy::Fixed;
    EXPECT_GT(run(c, "tiles_of_two").counters.reused_per_axis[static_cast<size_t>(Axis::T)], 0);
  }
  for (int t : {1, 3}) {  // tiles 2 wide and 2 high: the last column and row of tiles clipped
    ReuseConfig c = base;
    c.grid = {t, 5, 5};
    c.tile_h = 2;
    c.tile_w = 2;
    const IntReuse r = run(c, "clipped_t" + std::to_string(t));
    EXPECT_GT(r.counters.reused_pairs, 0) << "T = " << t;
    c.tile_h = 1;  // tiles one row high, two wide, the last one column
    run(c, "rows_t" + std::to_string(t));
    c.tile_h = 2;  // tiles one column wide, two high, the last one row
    c.tile_w = 1;
    run(c, "columns_t" + std::to_string(t));
  }
  {  // a window exactly as deep as the scan needs, then one position shallower
    ReuseConfig c = base;
    c.tile_h = 3;
    c.tile_w = 4;
    const int64_t need = ScanOrder(c.grid, c.tile_h, c.tile_w).required_window_depth();
    ASSERT_LE(need, hw.window_cap());
    c.window_depth = static_cast<int>(need);
    EXPECT_EQ(run(c, "window_at_edge").counters.refs_beyond_window, 0);
    c.window_depth = static_cast<int>(need) - 1;
    EXPECT_GT(run(c, "window_below_edge").counters.refs_beyond_window, 0);
  }
  {  // every pair with a t reference reuses it: chains through all T frames; then w chains
    // through whole rows
    ReuseConfig c = base;
    c.policy = Policy::Fixed;
    c.fixed_axes = {Axis::T};
    c.tau.assign(static_cast<size_t>(c.groups()), c.tau_max());
    const IntReuse t = run(c, "t_chains");
    const int64_t frame = static_cast<int64_t>(c.grid.h) * c.grid.w;
    EXPECT_EQ(t.counters.reused_per_axis[static_cast<size_t>(Axis::T)], (c.grid.t - 1) * frame * c.groups());
    EXPECT_EQ(t.at(static_cast<int32_t>((c.grid.t - 1) * frame), 0).root, 0) << "the last frame's root is the first's";
    c.fixed_axes = {Axis::W};
    const IntReuse w = run(c, "w_chains");
    EXPECT_EQ(w.counters.reused_per_axis[static_cast<size_t>(Axis::W)],
              static_cast<int64_t>(c.grid.t) * c.grid.h * (c.grid.w - 1) * c.groups());
  }
}

TEST(Testbench, BackToBackRunsAndResetInTheMiddleOfARun) {
  Rng r(77);
  const ReuseConfig c = random_config(0, r);
  const IntMatrix a = correlated_a(c, 7);
  const IntMatrix b = make_int_uniform(c.channels, c.out_cols, c.data_w, 8);
  const TbRun back = run_tb(0, c, a, b, "--mode both --runs 3 --stall 0.2", "b2b");
  expect_pass(back, "back to back");
  EXPECT_EQ(back.report.at("runs").size(), 6u);
  for (int at : {3, 17, 40}) {
    const TbRun rs = run_tb(0, c, a, b, "--reset-at " + std::to_string(at) + " --stall 0.2", "reset");
    expect_pass(rs, "reset at cycle " + std::to_string(at));
  }
}

// The memories are never cleared: a run with fewer groups, tokens or output columns than the run
// before it, on the same instance and without a reset, must read none of that run's partials, list
// entries, root tables or B words. Each configuration runs at its limits, then with one group fewer
// (the merge must mask the group past K), then with a smaller grid and fewer columns; both modes,
// and the same on kld_plain_top.
TEST(Testbench, ASmallerWorkloadAfterALargerOneReadsNothingItLeft) {
  for (int which = 0; which < kHwConfigs; ++which) {
    const hw::HwConfig hw = hw_config(which);
    ReuseConfig big = at_limits(hw);
    big.tau.assign(static_cast<size_t>(big.groups()), static_cast<uint32_t>(big.tau_max() / 4));
    std::vector<NextWorkload> then;
    ReuseConfig fewer_groups = big;
    fewer_groups.channels = hw.max_k - hw.group_w;
    fewer_groups.tau.resize(static_cast<size_t>(fewer_groups.groups()));
    ReuseConfig smaller = fewer_groups;
    smaller.grid = {1, std::max(1, hw.max_h - 1), std::max(1, hw.max_w - 2)};
    smaller.out_cols = std::max(1, hw.max_m - hw.cols);
    int seed = 31;
    for (const ReuseConfig& c : {fewer_groups, smaller}) {
      ASSERT_GE(c.groups(), 1) << hw.name();
      then.push_back({c, correlated_a(c, seed), make_int_uniform(c.channels, c.out_cols, c.data_w, seed + 1)});
      seed += 2;
    }
    const IntMatrix a = correlated_a(big, 29), b = make_int_uniform(big.channels, big.out_cols, big.data_w, 30);
    const TbRun t = run_tb(which, big, a, b, "--mode both --stall 0.1", "smaller_after", "kld_top", {}, then);
    expect_pass(t, hw.name());
    ASSERT_FALSE(t.report.is_null());
    EXPECT_EQ(t.report.at("runs").size(), 6u) << hw.name();
    big.mode = Mode::Dense;  // the dense baseline keeps B and its accumulators the same way
    for (NextWorkload& w : then) w.c.mode = Mode::Dense;
    const TbRun p = run_tb(which, big, a, b, "--stall 0.1", "smaller_after_plain", "kld_plain_top", {}, then);
    expect_pass(p, hw.name() + " kld_plain_top");
  }
}

TEST(Testbench, AResetInTheMiddleOfARunRestartsTheCountersAndTheRerunIsBitExact) {
  Rng r(78);
  const ReuseConfig c = random_config(0, r);
  const IntMatrix a = correlated_a(c, 8);
  const IntMatrix b = make_int_uniform(c.channels, c.out_cols, c.data_w, 9);
  for (const std::string mode : {"reuse", "dense"}) {
    const TbRun rs = run_tb(0, c, a, b, "--mode " + mode + " --reset-at 17 --stall 0.2 --seed 5", "reset_" + mode);
    expect_pass(rs, "reset at cycle 17, " + mode + " mode");
    ASSERT_FALSE(rs.report.is_null());
    const nlohmann::json& reset = rs.report.at("reset");
    // The reset hit the run 17 cycles after START, while the counters were counting...
    EXPECT_TRUE(reset.at("happened").get<bool>()) << rs.output;
    EXPECT_EQ(reset.at("run_cycles").get<int64_t>(), 17);
    EXPECT_GT(reset.at("counters_before").at("cycles").get<int64_t>(), 0);
    EXPECT_LE(reset.at("counters_before").at("cycles").get<int64_t>(), 17);
    // ...and cleared every one of them.
    for (const auto& [name, value] : reset.at("counters_after").items()) EXPECT_EQ(value.get<int64_t>(), 0) << name;
    // The rerun started after the cut and counted only itself: its CYCLES equal the schedule of that run alone.
    const nlohmann::json& run = rs.report.at("runs").at(0);
    EXPECT_GT(run.at("start_cycle").get<int64_t>(), 17);
    EXPECT_EQ(run.at("cycles").get<int64_t>(), run.at("schedule_cycles").get<int64_t>());
    EXPECT_NE(rs.output.find("RESET after 17 cycles"), std::string::npos) << rs.output;
  }
  // As a fraction of the free-running schedule: the cut lands at floor(0.5 x schedule).
  const TbRun half = run_tb(0, c, a, b, "--reset-at-fraction 0.5 --stall 0.3", "reset_half");
  expect_pass(half, "reset at half the schedule");
  const int64_t free_running = half.report.at("runs").at(0).at("schedule_cycles_free_running").get<int64_t>();
  EXPECT_EQ(half.report.at("reset").at("requested_at").get<int64_t>(), free_running / 2);
  EXPECT_TRUE(half.report.at("reset").at("happened").get<bool>());
  // A reset asked for after the run is over did not happen: the testbench says so and fails.
  const TbRun late = run_tb(0, c, a, b, "--reset-at 100000000 --stall 0", "reset_late");
  EXPECT_NE(late.status, 0);
  EXPECT_NE(late.output.find("reset not applied"), std::string::npos) << late.output;
}

TEST(Testbench, DenseCyclesEqualTheDocumentedFormula) {
  // The testbench checks CYCLES against the schedule moved by the back-pressure
  // it applied; here, with none, the dense count is the closed formula of
  // docs/hardware.md: every m-tile's passes outlast the previous m-tile's landing
  // and gather, and a pass (N cycles) hides the next pass's weight load behind it
  // (N >= ROWS + kIssueStages + GROUP_W + COLS - 1), so only the first load
  // (ROWS cycles, plus one: the PEs shift a cycle after the loader) is exposed,
  // the k-tiles of an m-tile follow each other without a drain, and the m-tiles
  // with one HANDOFF cycle.
  for (int which = 0; which < kHwConfigs; ++which) {
    const hw::HwConfig hw = hw_config(which);
    ReuseConfig c = at_limits(hw);
    c.mode = Mode::Dense;
    const TbRun r = run_tb(which, c, correlated_a(c, 1), make_int_uniform(c.channels, c.out_cols, c.data_w, 2),
                           "--stall 0", "dense");
    expect_pass(r, "dense");
    const int64_t N = c.grid.tokens();
    const int64_t KT = (c.channels + hw.rows - 1) / hw.rows, MT = (c.out_cols + hw.cols - 1) / hw.cols;
    ASSERT_GE(N, hw.rows + hw::kIssueStages + hw.group_w + hw.cols - 1) << hw.name();
    // The last m-tile's partials land kIssueStages + GROUP_W + COLS - 1 + MUL_PIPE cycles after its last
    // issue; then its gather, ceil(N / GATHER_W) beats, the last of which leaves three pipeline steps
    // after it entered.
    const int64_t beats = (N + hw.gather_w - 1) / hw.gather_w;
    const int64_t land = hw::kIssueStages + hw.group_w + hw.cols - 1 + hw.mul_pipe;
    ASSERT_GE(KT * N, beats + land) << hw.name() << ": the gather of an m-tile would hold the next but one";
    const int64_t formula = hw.rows + MT * (KT * N + 1) + land + beats + 4;
    EXPECT_EQ(r.report.at("cycles").get<int64_t>(), formula) << hw.name();
    EXPECT_EQ(r.report.at("stalls").at("weight_load").get<int64_t>(), hw.rows + 1) << hw.name();
    EXPECT_EQ(r.report.at("stall_cycles").get<int64_t>(), 0);
  }
}

TEST(Testbench, AWrongExpectedValueMakesTheHarnessFail) {
  Rng r(5);
  const ReuseConfig c = random_config(0, r);
  const TbRun bad = run_tb(0, c, correlated_a(c, 5), make_int_uniform(c.channels, c.out_cols, c.data_w, 6),
                           "--corrupt-expected", "neg");
  EXPECT_NE(bad.status, 0);
  EXPECT_FALSE(bad.report.at("bit_exact").get<bool>());
  EXPECT_NE(bad.output.find("FAIL"), std::string::npos);
  EXPECT_NE(bad.output.find("expected"), std::string::npos);
  EXPECT_NE(bad.output.find("reproduce:"), std::string::npos);
}

// kld_plain_top's free-running dense cycles (docs/hardware.md) when every pass hides the next
// weight load (N >= 2*ROWS + COLS): the first load, KT passes and the drain per m-tile (the issue
// register, the array, the accumulators' read stage), a cycle per later m-tile for its first token
// to follow the gather, the last m-tile's N words and the output register.
int64_t plain_dense_cycles(const hw::HwConfig& hw, int64_t N, int64_t KT, int64_t MT) {
  const int64_t drain = 1 + hw.rows + hw.cols - 1 + hw.mul_pipe + 1;
  return hw.rows + 1 + MT * (KT * N + drain) + (MT - 1) + N + 1;
}

// kld_plain_top through the same testbench: every output of the dense GEMM
// against A . B of the golden model (gemm_wrap at ACC_W), on array shapes
// 4x3, 8x4 (pipelined multiplier, 8-bit accumulator that wraps) and 2x5, with
// K not a multiple of ROWS and M not a multiple of COLS, random back-pressure,
// a single token, and back-to-back runs. The harness also checks CYCLES
// against the busy cycles it counted itself (there is no documented schedule
// of the plain top to hold it to).
TEST(TestbenchPlainTop, DenseGemmIsBitExactOnOddShapes) {
  const std::string plain = "kld_plain_top";
  for (int which = 0; which < kHwConfigs; ++which) {
    const hw::HwConfig hw = hw_config(which);
    Rng r(300 + static_cast<uint64_t>(which));
    for (int k = 0; k < 4; ++k) {
      ReuseConfig c = random_config(which, r);
      if (k == 0) {  // the largest grid, K and M at their odd limits
        c = at_limits(hw);
        c.channels = hw.max_k % hw.rows != 0 || hw.max_k == hw.group_w ? hw.max_k : hw.max_k - hw.group_w;
        c.out_cols = hw.max_m % hw.cols != 0 ? hw.max_m : hw.max_m - 1;
        c.mode = Mode::Dense;
        EXPECT_NE(c.channels % hw.rows, 0) << hw.name() << ": K must leave a partial k-tile";
        EXPECT_NE(c.out_cols % hw.cols, 0) << hw.name() << ": M must leave a partial m-tile";
      }
      if (k == 1) {  // a pass shorter than a weight load
        c.grid = {1, 1, 1};
        c.tile_h = c.tile_w = 0;
        c.window_depth = 0;
      }
      const uint64_t seed = r.next() % 100000;
      const IntMatrix a = make_int_uniform(c.grid.tokens(), c.channels, c.data_w, seed);
      const IntMatrix b = make_int_uniform(c.channels, c.out_cols, c.data_w, seed + 1);
      const std::string what = "plain hw " + hw.name() + " case " + std::to_string(k) + " " + nlohmann::json(c).dump();
      const TbRun t = run_tb(which, c, a, b, "--runs 2 --stall 0.3 --seed " + std::to_string(seed), "plain", plain);
      expect_pass(t, what);
      ASSERT_FALSE(t.report.is_null()) << what;
      ASSERT_EQ(t.report.at("runs").size(), 2u) << what;
      const int64_t N = c.grid.tokens();
      const int64_t MT = (c.out_cols + hw.cols - 1) / hw.cols, KT = (c.channels + hw.rows - 1) / hw.rows;
      for (const auto& run : t.report.at("runs")) {
        EXPECT_EQ(run.at("mode").get<std::string>(), "dense") << what;
        EXPECT_EQ(run.at("compared_outputs").get<int64_t>(), N * c.out_cols) << what;
        // At least one issue cycle per (m-tile, k-tile, token), and the last m-tile's N output words
        // after its last pass (the other m-tiles' words leave beside the next m-tile's passes).
        EXPECT_GE(run.at("cycles").get<int64_t>(), MT * KT * N + N) << what;
      }
      if (k == 0) {
        // Free-running, with passes long enough to hide every weight load behind the previous
        // pass (N >= 2*ROWS + COLS: a buffer frees 1 + ROWS + COLS - 1 cycles after its pass, then
        // loads in ROWS, the PEs one cycle behind the loader): the first load (ROWS + 1), then per
        // m-tile KT passes of N issues and the drain (1 + ROWS + COLS - 1 + MUL_PIPE + 1); the gather of an
        // m-tile runs beside the next m-tile's passes, whose first token waits a cycle for the
        // gather's first read; the last m-tile's gather reads N words, the last of which leaves
        // the output register a cycle later.
        ASSERT_GE(N, 2 * hw.rows + hw.cols) << what;
        const TbRun f = run_tb(which, c, a, b, "--stall 0", "plain_free", plain);
        expect_pass(f, what + " free-running");
        EXPECT_EQ(f.report.at("cycles").get<int64_t>(), plain_dense_cycles(hw, N, KT, MT)) << what;
      }
    }
  }
  // The harness fails on a wrong expected value here too.
  Rng r(9);
  const ReuseConfig c = random_config(0, r);
  const TbRun bad = run_tb(0, c, correlated_a(c, 5), make_int_uniform(c.channels, c.out_cols, c.data_w, 6),
                           "--corrupt-expected", "plain_neg", plain);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.output.find("expected"), std::string::npos) << bad.output;
}

// A one-row array runs the passes of a one-token grid back to back: the next k-tile's tap of the
// token reaches its accumulator in the very cycle the previous k-tile's sum is written back, so the
// read stage must take that sum, not the memory's stale word. Bit-exact, with and without stalls.
TEST(TestbenchPlainTop, BackToBackTapsOfOneTokenTakeTheSumBeingWritten) {
  const hw::HwConfig hw = hw_config(kOneRowConfig);
  ReuseConfig c = at_limits(hw);
  c.grid = {1, 1, 1};
  c.mode = Mode::Dense;
  const IntMatrix a = make_int_uniform(1, c.channels, c.data_w, 41);
  const IntMatrix b = make_int_uniform(c.channels, c.out_cols, c.data_w, 42);
  for (const std::string stall : {"0", "0.3"}) {
    const TbRun t = run_tb(kOneRowConfig, c, a, b, "--runs 2 --stall " + stall, "one_row", "kld_plain_top");
    expect_pass(t, "one row, stall " + stall);
  }
}

// Both tops read back the register map they are built from: reset values and
// constants, RW fields written with ones and zeros, fields a top does not
// implement ignored (the testbench's --check-registers, from kld_regs.hpp).
// `kaleido sim --plain`: the same GEMM on kld_plain_top beside kld_top's dense run, bit-exact,
// with its cycles (the formula above) and PE utilisation in the report.
TEST(Sim, PlainBaselineRunsTheSameGemm) {
  sim::SimRequest req;
  req.hw = hw_config(0);
  req.fit_hw = false;
  req.cfg = at_limits(req.hw);
  ReuseConfig& c = req.cfg;
  c.tau.assign(static_cast<size_t>(c.groups()), 24);
  req.a = correlated_a(c, 21);
  req.b = make_int_uniform(c.channels, c.out_cols, c.data_w, 22);
  req.plain = true;
  req.work_dir = testing::process_dir("sim_plain");
  const sim::SimResult r = sim::run_sim(req);
  ASSERT_TRUE(r.plain.ran);
  EXPECT_TRUE(r.plain.bit_exact);
  EXPECT_TRUE(r.bit_exact());
  const int64_t N = c.grid.tokens();
  const int64_t KT = (c.channels + req.hw.rows - 1) / req.hw.rows, MT = (c.out_cols + req.hw.cols - 1) / req.hw.cols;
  EXPECT_EQ(r.plain.compared_outputs, N * c.out_cols);
  EXPECT_EQ(r.plain.cycles, plain_dense_cycles(req.hw, N, KT, MT));
  const double pes = static_cast<double>(req.hw.rows) * req.hw.cols;
  EXPECT_DOUBLE_EQ(r.utilisation_plain, static_cast<double>(N) * c.channels * c.out_cols / (static_cast<double>(r.plain.cycles) * pes));
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j.at("plain").at("cycles").get<int64_t>(), r.plain.cycles);
  EXPECT_DOUBLE_EQ(j.at("pe_utilisation_plain").get<double>(), r.utilisation_plain);
  EXPECT_TRUE(fs::exists(req.work_dir / "tb_plain.json")) << "the plain run keeps its own report";
  EXPECT_TRUE(fs::exists(req.work_dir / "tb_dense.json"));
}

// Segment s issues the COMPUTE pairs of groups s, s + SEGS, ... once per m-tile. Configuration 0
// has two segments and six groups: with reuse off in segment 0's groups (0, 2, 4) it issues every
// token of each, 3 N per m-tile, while segment 1's groups reuse.
TEST(Sim, SegmentUtilisationFollowsEachSegmentsGroups) {
  sim::SimRequest req;
  req.hw = hw_config(0);
  req.fit_hw = false;
  req.cfg = at_limits(req.hw);
  ReuseConfig& c = req.cfg;
  ASSERT_EQ(req.hw.segs(), 2);
  ASSERT_EQ(c.groups(), 6);
  c.tau.assign(static_cast<size_t>(c.groups()), c.tau_max());
  c.group_enable = {0, 1, 0, 1, 0, 1};
  req.a = correlated_a(c, 31);
  req.b = make_int_uniform(c.channels, c.out_cols, c.data_w, 32);
  req.work_dir = testing::process_dir("sim_segments");
  const sim::SimResult r = sim::run_sim(req);
  ASSERT_TRUE(r.bit_exact());
  ASSERT_EQ(r.segment_utilisation_reuse.size(), 2u);
  const int64_t N = c.grid.tokens(), MT = (c.out_cols + req.hw.cols - 1) / req.hw.cols;
  const double cycles = static_cast<double>(r.reuse.cycles);
  EXPECT_DOUBLE_EQ(r.segment_utilisation_reuse[0], static_cast<double>(MT * 3 * N) / cycles);
  EXPECT_LT(r.segment_utilisation_reuse[1], 0.5 * r.segment_utilisation_reuse[0]) << "segment 1's groups reuse";
  // Both segments' issues are the MACs the RTL counted: GROUP_W x M per COMPUTE pair, M over MT m-tiles.
  const double issues = (r.segment_utilisation_reuse[0] + r.segment_utilisation_reuse[1]) * cycles;
  EXPECT_NEAR(issues * c.group_w * c.out_cols / static_cast<double>(MT), static_cast<double>(r.reuse.macs_issued), 1e-6);
  EXPECT_EQ(r.to_json().at("segment_utilisation_reuse").size(), 2u);
}

TEST(Testbench, BothTopsReadBackTheRegisterMap) {
  for (const std::string top : {"kld_top", "kld_plain_top"})
    for (int which : {0, 2}) {
      Rng r(40 + static_cast<uint64_t>(which));
      const ReuseConfig c = random_config(which, r);
      const TbRun t = run_tb(which, c, correlated_a(c, 3), make_int_uniform(c.channels, c.out_cols, c.data_w, 4),
                             "--check-registers --stall 0.1", "regs", top);
      expect_pass(t, top + " " + hw_config(which).name());
      ASSERT_FALSE(t.report.is_null());
      EXPECT_EQ(t.report.at("top").get<std::string>(), top);
      const nlohmann::json& check = t.report.at("register_check");
      EXPECT_TRUE(check.at("errors").empty()) << t.output;
      // CTRL .. STARVED and the three per-group arrays.
      const hw::HwConfig hw = hw_config(which);
      EXPECT_EQ(check.at("words").get<int64_t>(), hw::reg::kStarved + 1 + 3 * hw.max_groups()) << t.output;
      EXPECT_NE(t.output.find("PASS registers"), std::string::npos) << t.output;
    }
}

// The START checks run a cycle early on the values the registers take next (gen/hw/top.cpp): after
// reset, and with each out-of-range value written in the cycle just before START, the run must be
// refused; the good value written back just before the next START must be seen (the last one
// before the real run, which must start and stay bit-exact).
TEST(Testbench, StartRefusesOutOfRangeValuesWrittenTheCycleBefore) {
  for (int which : {0, 2}) {
    Rng r(60 + static_cast<uint64_t>(which));
    const ReuseConfig c = random_config(which, r);
    const TbRun t = run_tb(which, c, correlated_a(c, 5), make_int_uniform(c.channels, c.out_cols, c.data_w, 6),
                           "--check-start --stall 0.1", "start");
    expect_pass(t, hw_config(which).name());
    ASSERT_FALSE(t.report.is_null());
    const nlohmann::json& check = t.report.at("start_check");
    EXPECT_TRUE(check.at("errors").empty()) << t.output;
    // After reset (KEEP, then the reset values), KEEP before any detection, then DIM_T, DIM_W, DIM_K,
    // DIM_M, TILE_W, WIN, two POLICY values, and DIM_K not a multiple of GROUP_W where GROUP_W > 1.
    EXPECT_EQ(check.at("refusals").get<int>(), 11 + (hw_config(which).group_w > 1 ? 1 : 0)) << t.output;
    EXPECT_NE(t.output.find("PASS START checks"), std::string::npos) << t.output;
  }
}

// CTRL.KEEP: after a reuse run, further B tiles of the same A (further key tiles of Q K^T) run on
// that run's compute lists and root tables: bit-exact against the golden model of each tile, no
// decision traced or counted, CYCLES as the documented schedule with the lists complete from the
// start, never above the detecting run's. KEEP is refused before any detection, after reset and
// after a write to a register detection reads (--check-start).
TEST(Testbench, KeptDecisionsServeFurtherBTiles) {
  for (int which : {0, 2}) {
    Rng r(80 + static_cast<uint64_t>(which));
    const ReuseConfig c = random_config(which, r);
    const IntMatrix a = correlated_a(c, 7);
    std::vector<IntMatrix> tiles;
    for (uint64_t k = 0; k < 2; ++k) tiles.push_back(make_int_uniform(c.channels, c.out_cols, c.data_w, 20 + k));
    const std::string what = hw_config(which).name() + " " + nlohmann::json(c).dump();
    const TbRun t = run_tb(which, c, a, make_int_uniform(c.channels, c.out_cols, c.data_w, 19),
                           "--mode both --check-start --stall 0.2", "keep", "kld_top", tiles);
    expect_pass(t, what);
    ASSERT_FALSE(t.report.is_null());
    const nlohmann::json& runs = t.report.at("runs");
    ASSERT_EQ(runs.size(), 4u) << t.output;  // reuse, the two kept tiles, then dense
    EXPECT_EQ(runs[0].at("mode"), "reuse");
    EXPECT_EQ(runs[3].at("mode"), "dense");
    EXPECT_GT(runs[0].at("macs_skipped").get<int64_t>(), 0) << what;
    for (size_t k : {1u, 2u}) {
      const nlohmann::json& run = runs[k];
      EXPECT_EQ(run.at("mode"), "keep");
      EXPECT_EQ(run.at("compared_outputs").get<int64_t>(), c.grid.tokens() * c.out_cols);
      EXPECT_EQ(run.at("compared_decisions").get<int64_t>(), 0);
      EXPECT_EQ(run.at("macs_skipped").get<int64_t>(), 0);
      EXPECT_EQ(run.at("macs_issued"), runs[0].at("macs_issued"));  // the same compute lists
      EXPECT_EQ(run.at("stalls").at("detector_starved").get<int64_t>(), 0) << what;
      EXPECT_LE(run.at("schedule_cycles_free_running").get<int64_t>(),
                runs[0].at("schedule_cycles_free_running").get<int64_t>());
    }
    // The refusals of the START test, and KEEP after a TAU write once the kept runs are over.
    EXPECT_EQ(t.report.at("start_check").at("refusals").get<int>(), 12 + (hw_config(which).group_w > 1 ? 1 : 0))
        << t.output;
  }
}

TEST(TestbenchSoak, ThousandsOfRandomRuns) {
  const char* env = std::getenv("KALEIDO_SOAK_RUNS");
  if (!env) GTEST_SKIP() << "set KALEIDO_SOAK_RUNS (ctest -L soak sets it) to run the soak";
  const int runs = std::atoi(env);
  Rng r(424242);
  for (int k = 0; k < runs; ++k) {
    const int which = static_cast<int>(r.range(0, kHwConfigs - 1));
    const ReuseConfig c = random_config(which, r);
    const uint64_t seed = r.next() % 1000000;
    const TbRun t = run_tb(which, c, correlated_a(c, seed), make_int_uniform(c.channels, c.out_cols, c.data_w, seed + 1),
                           "--mode both --stall 0.3 --seed " + std::to_string(seed), "soak");
    ASSERT_EQ(t.status, 0) << "soak run " << k << " hw " << hw_config(which).name() << " " << nlohmann::json(c).dump()
                           << "\n" << t.output;
  }
}

}  // namespace
}  // namespace kaleido
