// The DiT block table (study/dit_block.hpp): sampled quality against a full computation, exactness at
// threshold 0, MAC accounting against hand formulas and the golden model's own decisions, savings growing with
// the threshold, calibration, and the CLI switch.
#include "golden/threshold.hpp"
#include "study/dit_block.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "golden/random.hpp"
#include "golden/reuse.hpp"
#include "helpers.hpp"
#include "support/test_dir.hpp"
#include "workload/npy.hpp"
#include "workload/models.hpp"
#include "workload/rope.hpp"

namespace kaleido::study {
namespace {

using testing::random_matrix;

// Full SNR and cosine of Ahat B against A B, in double, straight from the definitions.
struct FullQuality {
  double snr_db, cosine;
};
FullQuality full_quality(const FloatMatrix& a, const FloatMatrix& a_hat, const FloatMatrix& b) {
  double sig = 0, err = 0, dot = 0, na = 0;
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < b.cols; ++j) {
      double x = 0, y = 0;
      for (int64_t k = 0; k < a.cols; ++k) {
        x += static_cast<double>(a_hat.at(i, k)) * b.at(k, j);
        y += static_cast<double>(a.at(i, k)) * b.at(k, j);
      }
      sig += y * y;
      err += (x - y) * (x - y);
      dot += x * y;
      na += x * x;
    }
  return {10.0 * std::log10(sig / err), dot / std::sqrt(na * sig)};
}

std::vector<int32_t> every(int64_t n) {
  std::vector<int32_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<int32_t>(i));
  return v;
}

TEST(DitBlock, MatmulMatchesNaiveProduct) {
  const FloatMatrix a = random_matrix(37, 53, 1), b = random_matrix(53, 300, 2);
  const FloatMatrix c = matmul(a, b, 2);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < b.cols; ++j) {
      double s = 0;
      for (int64_t k = 0; k < a.cols; ++k) s += static_cast<double>(a.at(i, k)) * b.at(k, j);
      ASSERT_NEAR(c.at(i, j), s, 1e-4) << i << "," << j;
    }
}

TEST(DitBlock, SampledQualityMatchesTheFullComputation) {
  const FloatMatrix a = random_matrix(200, 48, 3), b = random_matrix(48, 160, 4);
  FloatMatrix a_hat = a;
  Rng rng(5);
  for (float& x : a_hat.data) x += static_cast<float>(0.05 * rng.normal());
  const FullQuality full = full_quality(a, a_hat, b);
  // Every row and column: the same number.
  const Quality all = sampled_gemm_quality(a, a_hat, b, every(a.rows), every(b.cols));
  EXPECT_NEAR(all.snr_db, full.snr_db, 1e-6);
  EXPECT_NEAR(all.cosine, full.cosine, 1e-9);
  // A quarter of the rows and a quarter of the columns (1/16 of the products): close to it.
  const Quality part = sampled_gemm_quality(a, a_hat, b, sample_rows(a.rows, 50, 7), sample_rows(b.cols, 40, 8));
  EXPECT_EQ(part.elements, 50 * 40);
  EXPECT_NEAR(part.snr_db, full.snr_db, 0.5);
  EXPECT_NEAR(part.cosine, full.cosine, 1e-3);
}

// A small block: hidden 32 = 2 heads x 16 (RoPE bands 4/6/6), FFN 64, on a 2 x 4 x 6 grid of smooth tokens.
struct SmallBlock {
  DitShape shape;
  Grid grid{2, 4, 6};
  Tokens tokens;
  DitWeights w;
  FloatMatrix x0;
  DitReuse reuse;

  SmallBlock() {
    shape.hidden = 32;
    shape.heads = 2;
    shape.head_dim = 16;
    shape.ffn = 64;
    shape.rope = Rope3d{{4, 6, 6}, 10000.0};
    tokens.grid = grid;
    tokens.f = FloatMatrix(grid.tokens(), 16);
    Rng rng(9);
    for (int t = 0; t < grid.t; ++t)
      for (int h = 0; h < grid.h; ++h)
        for (int x = 0; x < grid.w; ++x)
          for (int c = 0; c < 16; ++c)
            tokens.f.at(grid.index(t, h, x), c) =
                static_cast<float>(std::sin(0.4 * x + 0.3 * h + 0.2 * t + c) + 0.05 * rng.normal());
    w = make_dit_weights(shape, 16, DitProxySpec{});
    x0 = dit_hidden_states(tokens, w, 2);
    reuse.group_w = 4;
  }
  DitBlock make() const {
    return DitBlock(shape, grid, x0, w, reuse, make_dit_sample(shape, grid.tokens(), 1000, 1000, 1), 2);
  }
};

// The block written out directly, in double, from the definitions in dit_block.hpp.
std::vector<double> direct_block(const SmallBlock& sb) {
  const int64_t N = sb.grid.tokens(), D = sb.shape.hidden, d = sb.shape.head_dim;
  using Rows = std::vector<std::vector<double>>;
  auto product = [](const Rows& a, const FloatMatrix& b) {
    Rows c(a.size(), std::vector<double>(static_cast<size_t>(b.cols)));
    for (size_t i = 0; i < a.size(); ++i)
      for (int64_t k = 0; k < b.rows; ++k)
        for (int64_t j = 0; j < b.cols; ++j) c[i][static_cast<size_t>(j)] += a[i][static_cast<size_t>(k)] * b.at(k, j);
    return c;
  };
  auto layer_norm = [](Rows x) {
    for (auto& r : x) {
      double mean = 0, var = 0;
      for (double v : r) mean += v;
      mean /= static_cast<double>(r.size());
      for (double v : r) var += (v - mean) * (v - mean);
      const double inv = 1.0 / std::sqrt(var / static_cast<double>(r.size()) + 1e-6);
      for (double& v : r) v = (v - mean) * inv;
    }
    return x;
  };
  Rows f(static_cast<size_t>(N), std::vector<double>(16));
  for (int64_t i = 0; i < N; ++i)
    for (int c = 0; c < 16; ++c) f[static_cast<size_t>(i)][static_cast<size_t>(c)] = sb.tokens.f.at(i, c);
  const Rows x0 = product(f, sb.w.embed);
  const Rows raw = product(layer_norm(x0), sb.w.qkv);
  Rows o(static_cast<size_t>(N), std::vector<double>(static_cast<size_t>(D)));
  for (int h = 0; h < sb.shape.heads; ++h) {
    Rows q(static_cast<size_t>(N)), k(static_cast<size_t>(N));
    for (int64_t i = 0; i < N; ++i) {
      const int t = static_cast<int>(i / (sb.grid.h * sb.grid.w)), y = static_cast<int>((i / sb.grid.w) % sb.grid.h),
                x = static_cast<int>(i % sb.grid.w);
      for (int part = 0; part < 2; ++part) {
        std::vector<float> v(static_cast<size_t>(d));
        double ss = 0;
        for (int64_t c = 0; c < d; ++c) {
          const double e = raw[static_cast<size_t>(i)][static_cast<size_t>(part * D + h * d + c)] +
                           sb.w.bias_u.data[static_cast<size_t>(h * d + c)];
          v[static_cast<size_t>(c)] = static_cast<float>(e);
          ss += e * e;
        }
        const double g = sb.w.qk_gain / std::sqrt(ss / static_cast<double>(d) + 1e-6);
        for (float& e : v) e = static_cast<float>(e * g);
        workload::rope_rotate(v.data(), sb.shape.rope, t, y, x);
        (part == 0 ? q : k)[static_cast<size_t>(i)].assign(v.begin(), v.end());
      }
    }
    for (int64_t i = 0; i < N; ++i) {
      std::vector<double> p(static_cast<size_t>(N));
      double mx = -1e300, z = 0;
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t c = 0; c < d; ++c)
          s += q[static_cast<size_t>(i)][static_cast<size_t>(c)] * k[static_cast<size_t>(j)][static_cast<size_t>(c)];
        p[static_cast<size_t>(j)] = s / std::sqrt(static_cast<double>(d));
        mx = std::max(mx, p[static_cast<size_t>(j)]);
      }
      for (double& e : p) z += (e = std::exp(e - mx));
      for (int64_t c = 0; c < d; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < N; ++j)
          acc += p[static_cast<size_t>(j)] / z * raw[static_cast<size_t>(j)][static_cast<size_t>(2 * D + h * d + c)];
        o[static_cast<size_t>(i)][static_cast<size_t>(h * d + c)] = acc;
      }
    }
  }
  Rows x1 = product(o, sb.w.out);
  for (size_t i = 0; i < x1.size(); ++i)
    for (size_t c = 0; c < x1[i].size(); ++c) x1[i][c] += x0[i][c];
  Rows hid = product(layer_norm(x1), sb.w.up);
  for (auto& r : hid)
    for (double& v : r) v = 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
  const Rows y = product(hid, sb.w.down);
  std::vector<double> out;
  for (int64_t i = 0; i < N; ++i)
    for (int64_t c = 0; c < D; ++c)
      out.push_back(x1[static_cast<size_t>(i)][static_cast<size_t>(c)] +
                    y[static_cast<size_t>(i)][static_cast<size_t>(c)]);
  return out;
}

TEST(DitBlock, ExactBlockMatchesADirectComputation) {
  const SmallBlock sb;
  const DitBlock block = sb.make();
  const std::vector<double> want = direct_block(sb);
  const FloatMatrix& got = block.exact_output();  // every row and column: the sample covers the small block
  ASSERT_EQ(got.data.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got.data[i], want[i], 1e-3 * (1.0 + std::fabs(want[i]))) << i;
}

TEST(DitBlock, ThresholdZeroIsExactAndSavesNothing) {
  const SmallBlock sb;
  const DitBlock block = sb.make();
  const DitBlockRun run = block.run(uniform_knobs(sb.shape, 0.0));
  EXPECT_EQ(run.block.mse, 0.0);
  EXPECT_TRUE(std::isinf(run.block.snr_db));
  EXPECT_EQ(run.update.mse, 0.0);
  EXPECT_EQ(run.savings(), 0.0);
  for (int g = 0; g < kDitGemms; ++g) {
    EXPECT_EQ(run.gemms[static_cast<size_t>(g)].skipped, 0) << g;
    const GemmWork w = block.isolated(static_cast<DitGemm>(g), 0, 0.0);
    EXPECT_EQ(w.skipped, 0) << g;
    EXPECT_EQ(w.quality.se, 0.0) << g;
  }
}

TEST(DitBlock, MacsFollowTheBlockShape) {
  const SmallBlock sb;
  const DitBlock block = sb.make();
  const int64_t N = 48, D = 32, F = 64;
  EXPECT_EQ(block.macs(DitGemm::Qkv), N * D * 3 * D);
  EXPECT_EQ(block.macs(DitGemm::Qk), 2 * N * 16 * N);  // heads x N x d x N
  EXPECT_EQ(block.macs(DitGemm::Pv), 2 * N * N * 16);
  EXPECT_EQ(block.macs(DitGemm::OutProj), N * D * D);
  EXPECT_EQ(block.macs(DitGemm::FfnUp), N * D * F);
  EXPECT_EQ(block.macs(DitGemm::FfnDown), N * F * D);
  EXPECT_EQ(block.total_macs(), N * D * 3 * D + 2 * N * N * D + N * D * D + 2 * N * D * F);
}

// Reuse on the QKV projection alone: the block's savings are the golden model's REUSE pairs on LayerNorm(X0)
// (computed here from X0) times Gw x 3D, over the block's MACs counted by hand.
TEST(DitBlock, BlockSavingsAreTheMacWeightedSumOfGemmSavings) {
  const SmallBlock sb;
  const DitBlock block = sb.make();
  const double knob = 1.0;
  DitKnobs knobs = uniform_knobs(sb.shape, 0.0);
  knobs[static_cast<size_t>(DitGemm::Qkv)] = {knob};
  const DitBlockRun run = block.run(knobs);

  FloatMatrix xn = sb.x0;
  for (int64_t i = 0; i < xn.rows; ++i) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < xn.cols; ++c) mean += xn.at(i, c);
    mean /= static_cast<double>(xn.cols);
    for (int64_t c = 0; c < xn.cols; ++c) var += (xn.at(i, c) - mean) * (xn.at(i, c) - mean);
    for (int64_t c = 0; c < xn.cols; ++c)
      xn.at(i, c) = static_cast<float>((xn.at(i, c) - mean) / std::sqrt(var / static_cast<double>(xn.cols) + 1e-6));
  }
  ReuseConfig cfg;
  cfg.grid = sb.grid;
  cfg.channels = 32;
  cfg.out_cols = 96;
  cfg.group_w = 4;
  cfg.band = parse_band_split("none");
  cfg.policy = Policy::Adaptive;
  for (int g = 0; g < 8; ++g) {
    double s = 0;
    for (int64_t i = 0; i < xn.rows; ++i)
      for (int c = 4 * g; c < 4 * g + 4; ++c) s += static_cast<double>(xn.at(i, c)) * xn.at(i, c);
    cfg.tau_float.push_back(static_cast<float>(knob * std::sqrt(s / (static_cast<double>(xn.rows) * 4))));
  }
  const FloatReuse r = run_reuse(cfg, xn);
  ASSERT_GT(r.counters.reused_pairs, 0);
  const double skipped = static_cast<double>(r.counters.reused_pairs) * 4 * 96;
  const double total = 48.0 * 32 * 96 + 2.0 * 48 * 48 * 32 + 48.0 * 32 * 32 + 2.0 * 48 * 32 * 64;
  EXPECT_NEAR(run.gemms[static_cast<size_t>(DitGemm::Qkv)].savings(), skipped / (48.0 * 32 * 96), 1e-12);
  // Downstream GEMMs at threshold 0 still skip pairs whose inputs became identical through the reused
  // projection (e.g. a q group of a reused token in a RoPE band its neighbour shares): exact, free reuse.
  double others = 0;
  for (int g = 1; g < kDitGemms; ++g) others += static_cast<double>(run.gemms[static_cast<size_t>(g)].skipped);
  EXPECT_NEAR(run.savings(), (skipped + others) / total, 1e-12);
  EXPECT_GE(run.savings(), skipped / total);

  // With every GEMM reused, the block's figure is the MAC-weighted mean of its GEMMs' (MACs by hand).
  const DitBlockRun all = block.run(uniform_knobs(sb.shape, 1.0));
  const double macs[kDitGemms] = {48.0 * 32 * 96, 2.0 * 48 * 16 * 48, 2.0 * 48 * 48 * 16,
                                  48.0 * 32 * 32, 48.0 * 32 * 64,     48.0 * 64 * 32};
  double weighted = 0;
  for (int g = 0; g < kDitGemms; ++g) weighted += all.gemms[static_cast<size_t>(g)].savings() * macs[g];
  EXPECT_NEAR(all.savings(), weighted / total, 1e-12);
  EXPECT_GT(all.gemms[static_cast<size_t>(DitGemm::FfnUp)].skipped, 0);
  EXPECT_LT(all.block.snr_db, 200.0);  // something was reused, so the output moved

  // Reuse on the last GEMM alone changes no input before it: nothing else is skipped.
  DitKnobs last = uniform_knobs(sb.shape, 0.0);
  last[static_cast<size_t>(DitGemm::FfnDown)] = {knob};
  const DitBlockRun down = block.run(last);
  for (int g = 0; g + 1 < kDitGemms; ++g) EXPECT_EQ(down.gemms[static_cast<size_t>(g)].skipped, 0) << g;
  EXPECT_GT(down.gemms[static_cast<size_t>(DitGemm::FfnDown)].skipped, 0);
  EXPECT_NEAR(down.savings(), down.gemms[static_cast<size_t>(DitGemm::FfnDown)].savings() * macs[5] / total, 1e-12);
}

TEST(DitBlock, LargerThresholdsSaveMore) {
  const SmallBlock sb;
  const DitBlock block = sb.make();
  // Closed-loop reuse does not guarantee monotone savings in general (a reused reference changes what its
  // dependants compare against); on this smooth field it holds, and the block loses quality as it saves.
  double last_savings = -1.0, last_snr = std::numeric_limits<double>::infinity();
  for (double knob : {0.0, 0.25, 0.5, 1.0, 2.0}) {
    for (int g = 0; g < kDitGemms; ++g) {
      const GemmWork w = block.isolated(static_cast<DitGemm>(g), 1, knob);
      const GemmWork w2 = block.isolated(static_cast<DitGemm>(g), 1, knob * 1.5 + 0.1);
      EXPECT_GE(w2.savings(), w.savings()) << dit_gemm_name(static_cast<DitGemm>(g)) << " at " << knob;
    }
    const DitBlockRun run = block.run(uniform_knobs(sb.shape, knob));
    EXPECT_GE(run.savings(), last_savings) << knob;
    EXPECT_LE(run.block.snr_db, last_snr) << knob;
    last_savings = run.savings();
    last_snr = run.block.snr_db;
  }
  EXPECT_GT(last_savings, 0.3);
}

TEST(DitBlock, CalibrationMeetsTheSnrTarget) {
  const SmallBlock sb;
  const DitBlock block = sb.make();
  for (int g = 0; g < kDitGemms; ++g) {
    const DitBlock::Calibrated c = block.calibrate(static_cast<DitGemm>(g), 0, 25.0);
    EXPECT_GE(c.knob, 0.0);
    EXPECT_LE(c.knob, DitBlock::kMaxKnob);
    EXPECT_GE(c.work.quality.finish().snr_db, 25.0) << dit_gemm_name(static_cast<DitGemm>(g));
    // The figures returned are those of the chosen knob.
    EXPECT_EQ(c.work.skipped, block.isolated(static_cast<DitGemm>(g), 0, c.knob).skipped);
  }
}

// A loaded GEMM input is what that GEMM multiplies, in the exact block and the chained one.
TEST(DitBlock, LoadedInputsReplaceTheBlocksOwn) {
  const SmallBlock sb;
  const int64_t N = sb.grid.tokens(), D = sb.shape.hidden, F = sb.shape.ffn;
  Rng rng(3);
  std::vector<float> h(static_cast<size_t>(F));
  for (float& v : h) v = static_cast<float>(rng.normal());
  // The FFN hidden activation with every token alike, and twice it.
  const auto same_rows = [&](float scale) {
    FloatMatrix a(N, F);
    for (int64_t i = 0; i < N; ++i)
      for (int64_t c = 0; c < F; ++c) a.at(i, c) = scale * h[static_cast<size_t>(c)];
    return a;
  };
  const auto block_with = [&](FloatMatrix a) {
    DitRealInputs real;
    real.emplace(DitGemm::FfnDown, std::move(a));
    return DitBlock(sb.shape, sb.grid, sb.x0, sb.w, sb.reuse, make_dit_sample(sb.shape, N, 1000, 1000, 1), 2,
                    std::move(real));
  };
  const DitBlock one = block_with(same_rows(1.0f)), two = block_with(same_rows(2.0f));
  // Y = X1 + H W_2: the two blocks differ by h W_2 in every row (the sample covers the small block).
  for (int64_t i = 0; i < N; ++i)
    for (int64_t c = 0; c < D; ++c) {
      double hw = 0;
      for (int64_t k = 0; k < F; ++k) hw += static_cast<double>(h[static_cast<size_t>(k)]) * sb.w.down.at(k, c);
      ASSERT_NEAR(two.exact_output().at(i, c) - one.exact_output().at(i, c), hw, 1e-3 * (1.0 + std::fabs(hw)));
    }
  // Every token but the first reuses its identical neighbour, exactly; the block's own H does not.
  const GemmWork w = one.isolated(DitGemm::FfnDown, 0, 1.0);
  EXPECT_NEAR(w.reuse_ratio(), static_cast<double>(N - 1) / static_cast<double>(N), 1e-12);
  EXPECT_EQ(w.quality.se, 0.0);
  EXPECT_LT(sb.make().isolated(DitGemm::FfnDown, 0, 1.0).reuse_ratio(), 0.9);
  // In the chained block with reuse on ffn_down alone, the output is exact.
  DitKnobs knobs = uniform_knobs(sb.shape, 0.0);
  knobs[static_cast<size_t>(DitGemm::FfnDown)].assign(1, 1.0);
  const DitBlockRun run = one.run(knobs);
  EXPECT_EQ(run.block.mse, 0.0);
  EXPECT_GT(run.gemms[static_cast<size_t>(DitGemm::FfnDown)].skipped, 0);

  // Only later GEMMs' inputs load, and only at their shape.
  DitRealInputs wrong;
  wrong.emplace(DitGemm::FfnUp, FloatMatrix(N, F));
  EXPECT_THROW(DitBlock(sb.shape, sb.grid, sb.x0, sb.w, sb.reuse, make_dit_sample(sb.shape, N, 8, 8, 1), 1, wrong),
               Error);
  DitRealInputs qk;
  qk.emplace(DitGemm::Qk, FloatMatrix(N, D));
  EXPECT_THROW(DitBlock(sb.shape, sb.grid, sb.x0, sb.w, sb.reuse, make_dit_sample(sb.shape, N, 8, 8, 1), 1, qk),
               Error);
}

TEST(DitBlock, ShapeAndSizeErrorsAreClear) {
  SmallBlock sb;
  sb.shape.hidden = 30;
  EXPECT_THROW(sb.shape.validate(), ConfigError);
  SmallBlock sb2;
  sb2.reuse.group_w = 5;
  EXPECT_THROW(sb2.make(), ConfigError);
}

TEST(DitBlockCli, WritesTheBlockTable) {
  const testing::TestDir dir("dit_block_cli");
  const std::string clip = (dir / "clip.y4m").string(), out = (dir / "out").string();
  workload::write_y4m(clip, testing::static_background_video(64, 112, 5, 16, 1, 3));
  const auto r = testing::run_kaleido("study --clip " + clip + " --spectrum-clip " + clip +
                                      " --resolution 64x112 --frames 5 --steps 45 --proxies denoised --methods dense "
                                      "--no-projection --dit-block --block-snr 30 --rows 32 --block-cols 64 "
                                      "--threads 2 -o " +
                                      out);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("DiT block at 30 dB per GEMM: MAC-weighted savings"), std::string::npos) << r.output;
  const std::string csv = read_file(std::filesystem::path(out) / "block_gemms.csv");
  for (const char* g : {",qkv,", ",qk,", ",pv,", ",out_proj,", ",ffn_up,", ",ffn_down,", ",block,", ",block_update,"})
    EXPECT_NE(csv.find(g), std::string::npos) << g;
  const auto j = nlohmann::json::parse(read_file(std::filesystem::path(out) / "study.json"));
  ASSERT_EQ(j["block"].size(), 8u);
  double share = 0;
  for (const auto& row : j["block"])
    if (row["gemm"] != "block" && row["gemm"] != "block_update") {
      share += row["mac_share"].get<double>();
      const auto& snr = row["quality"]["snr_db"];  // null when nothing was reused (exact)
      EXPECT_TRUE(snr.is_null() || snr.get<double>() >= 30.0) << row;
    }
  EXPECT_NEAR(share, 1.0, 1e-9);
  EXPECT_NE(read_file(std::filesystem::path(out) / "summary.md").find("## Reuse on every GEMM of a DiT block"),
            std::string::npos);

  // The calibrated knobs are written as a schedule: one per GEMM and head, means as in the table.
  const std::string schedule = (std::filesystem::path(out) / "block_schedule_clip_denoised.json").string();
  const KnobSchedule k = KnobSchedule::load(schedule);
  ASSERT_EQ(k.steps.size(), 1u);
  EXPECT_EQ(k.steps[0].step, 45);
  EXPECT_EQ(k.steps[0].snr_target_db, 30.0);
  EXPECT_EQ(k.group_w, 8);
  EXPECT_EQ(k.steps[0].knobs.size(), static_cast<size_t>(kDitGemms));
  for (const auto& row : j["block"]) {
    const std::string gemm = row["gemm"].get<std::string>();
    if (gemm == "block" || gemm == "block_update") continue;
    const std::vector<double>& knobs = k.steps[0].knobs.at(gemm);
    ASSERT_EQ(knobs.size(), row["heads"].get<size_t>()) << gemm;
    double mean = 0;
    for (double x : knobs) mean += x / static_cast<double>(knobs.size());
    EXPECT_NEAR(mean, row["tau_over_rms"].get<double>(), 1e-9) << gemm;
  }
  // The study reads it back: the block at the file's knobs reproduces the calibrated table.
  const std::string again = (dir / "again").string();
  auto rerun = testing::run_kaleido("study --clip " + clip + " --spectrum-clip " + clip +
                                    " --resolution 64x112 --frames 5 --steps 45 --proxies denoised --methods dense "
                                    "--no-projection --dit-block --block-schedule " + schedule +
                                    " --rows 32 --block-cols 64 --threads 2 -o " + again);
  ASSERT_EQ(rerun.status, 0) << rerun.output;
  const auto j2 = nlohmann::json::parse(read_file(std::filesystem::path(again) / "study.json"));
  ASSERT_EQ(j2["block"].size(), j["block"].size());
  for (size_t i = 0; i < j["block"].size(); ++i)
    for (const char* field : {"gemm", "tau_over_rms", "savings", "savings_in_block", "quality", "snr_target_db"})
      EXPECT_EQ(j2["block"][i][field], j["block"][i][field]) << field << " of " << j["block"][i]["gemm"];
  for (const std::string& bad : {std::string("--steps 44"), std::string("--steps 45 --block-snr 30")}) {
    rerun = testing::run_kaleido("study --clip " + clip + " --spectrum-clip " + clip +
                                 " --resolution 64x112 --frames 5 --proxies denoised --methods dense --no-projection "
                                 "--dit-block --block-schedule " + schedule + " " + bad + " -o " + again);
    EXPECT_EQ(rerun.status, 2) << bad << ": " << rerun.output;
    const char* expected = bad.find("44") != std::string::npos ? "the schedule has steps 45" : "give one of the two";
    EXPECT_NE(rerun.output.find(expected), std::string::npos)
        << bad << ": " << rerun.output;
  }
  // ... and the golden model: thresholds knob x RMS of each group of its A.
  auto g = testing::run_kaleido("golden --grid 2x4x4 -K 32 -M 8 --policy " + k.policy + " --block-schedule " +
                                schedule + " --gemm ffn_down --step 45 -o " + (dir / "g.kvec").string());
  EXPECT_EQ(g.status, 0) << g.output;
  EXPECT_NE(g.output.find("block schedule"), std::string::npos) << g.output;
  EXPECT_NE(g.output.find("ffn_down head 0"), std::string::npos) << g.output;
  // Another policy, a step or GEMM or head the file does not have: refused, naming what there is.
  g = testing::run_kaleido("golden --grid 2x4x4 -K 32 -M 8 --policy fixed --block-schedule " + schedule +
                           " --gemm qkv --step 45 -o " + (dir / "g.kvec").string());
  EXPECT_EQ(g.status, 2) << g.output;
  EXPECT_NE(g.output.find("calibrated with " + k.policy), std::string::npos) << g.output;
  for (const std::string& bad : {std::string("--gemm qkv --step 44"), std::string("--gemm attn --step 45"),
                                 std::string("--gemm qkv --head 1 --step 45")}) {
    g = testing::run_kaleido("golden --grid 2x4x4 -K 32 -M 8 --policy " + k.policy + " --block-schedule " + schedule +
                             " " + bad + " -o " + (dir / "g.kvec").string());
    EXPECT_EQ(g.status, 2) << bad << ": " << g.output;
    EXPECT_NE(g.output.find(bad.find("44") != std::string::npos ? "the schedule has steps 45"
                            : bad.find("attn") != std::string::npos ? "the schedule has ffn_down"
                                                                    : "has 1 head"),
              std::string::npos)
        << bad << ": " << g.output;
  }
}

// Real hidden states replace the proxy's X0: identical tokens reuse on qkv wherever a reference exists, seeded
// noise hardly at all; a wrong shape or a missing --dit-block is refused.
TEST(DitBlockCli, ReadsRealHiddenStates) {
  const testing::TestDir dir("dit_block_hidden");
  const Grid grid{2, 4, 7};
  const int D = DitShape::of(workload::find_model("wan2.1-1.3b")).hidden;
  const int64_t N = grid.tokens();
  Rng rng(5);
  std::vector<float> same(static_cast<size_t>(N * D)), noise(same.size());
  for (int c = 0; c < D; ++c) {
    const float v = static_cast<float>(rng.normal());
    for (int64_t i = 0; i < N; ++i) same[static_cast<size_t>(i * D + c)] = v;
  }
  for (float& x : noise) x = static_cast<float>(rng.normal());
  const std::string same_npy = (dir / "same.npy").string(), noise_npy = (dir / "noise.npy").string();
  workload::write_npy(same_npy, {N, D}, same);
  workload::write_npy(noise_npy, {1, N, D}, noise);
  const auto qkv_reuse = [&](const std::string& npy) {
    const std::string out = (dir / ("out_" + std::filesystem::path(npy).stem().string())).string();
    const auto r = testing::run_kaleido("study --hidden-npy " + npy + " --npy-grid 2x4x7 --dit-block --block-snr 30 "
                                        "--rows 32 --block-cols 64 --threads 2 -o " + out);
    EXPECT_EQ(r.status, 0) << r.output;
    const auto j = nlohmann::json::parse(read_file(std::filesystem::path(out) / "study.json"));
    EXPECT_EQ(j["block"].size(), 8u);
    EXPECT_NE(j["proxy_statement"].get<std::string>().find(npy), std::string::npos);
    // Its knobs as a schedule, at the step of real activations (-1, no noise level).
    const KnobSchedule k = KnobSchedule::load((std::filesystem::path(out) / "block_schedule_npy_hidden.json").string());
    EXPECT_EQ(k.steps.at(0).step, -1);
    EXPECT_TRUE(std::isnan(k.steps.at(0).sigma));
    // The summary shows the block, not the attention sections it has no data for.
    const std::string md = read_file(std::filesystem::path(out) / "summary.md");
    EXPECT_NE(md.find("## Reuse on every GEMM of a DiT block"), std::string::npos);
    EXPECT_EQ(md.find("## SNR gap at equal MAC savings"), std::string::npos);
    for (const auto& row : j["block"]) {
      EXPECT_EQ(row["proxy"], "hidden");
      if (row["gemm"] == "qkv") return row["reuse_ratio"].get<double>();
    }
    ADD_FAILURE() << "no qkv row";
    return -1.0;
  };
  // Every token but the first has an identical reference.
  EXPECT_NEAR(qkv_reuse(same_npy), static_cast<double>(N - 1) / static_cast<double>(N), 1e-12);
  EXPECT_LT(qkv_reuse(noise_npy), 0.5);

  const std::string out = (dir / "bad").string();
  auto r = testing::run_kaleido("study --hidden-npy " + same_npy + " --npy-grid 2x4x8 --dit-block -o " + out);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("must be (N, D) or (1, N, D) = (64, " + std::to_string(D) + ")"), std::string::npos)
      << r.output;
  r = testing::run_kaleido("study --hidden-npy " + same_npy + " --npy-grid 2x4x7 -o " + out);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("add --dit-block"), std::string::npos) << r.output;
  r = testing::run_kaleido("study --hidden-npy " + same_npy + " --dit-block -o " + out);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--npy-grid"), std::string::npos) << r.output;
}

TEST(DitBlockCli, ReadsRealInputsOfLaterGemms) {
  const testing::TestDir dir("dit_block_gemm_npy");
  const Grid grid{2, 4, 7};
  const DitShape s = DitShape::of(workload::find_model("wan2.1-1.3b"));
  const int64_t N = grid.tokens();
  Rng rng(6);
  const auto write = [&](const std::string& name, int64_t cols, bool same) {
    std::vector<float> v(static_cast<size_t>(N * cols));
    for (int64_t c = 0; c < cols; ++c) {
      const float x = static_cast<float>(rng.normal());
      for (int64_t i = 0; i < N; ++i)
        v[static_cast<size_t>(i * cols + c)] = same ? x : static_cast<float>(rng.normal());
    }
    const std::string path = (dir / name).string();
    workload::write_npy(path, {N, cols}, v);
    return path;
  };
  const std::string x0 = write("x0.npy", s.hidden, false), h = write("h.npy", s.ffn, true);
  const std::string out = (dir / "out").string();
  const auto r = testing::run_kaleido("study --hidden-npy " + x0 + " --gemm-npy ffn_down=" + h +
                                      " --npy-grid 2x4x7 --dit-block --block-snr 30 --rows 32 --block-cols 64 "
                                      "--threads 2 -o " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(read_file(std::filesystem::path(out) / "study.json"));
  EXPECT_NE(j["proxy_statement"].get<std::string>().find("the inputs of qkv, ffn_down are real"), std::string::npos);
  bool seen = false;
  for (const auto& row : j["block"])
    if (row["gemm"] == "ffn_down") {  // identical tokens: all but the first reuse
      EXPECT_NEAR(row["reuse_ratio"].get<double>(), static_cast<double>(N - 1) / static_cast<double>(N), 1e-12);
      seen = true;
    }
  EXPECT_TRUE(seen);

  const std::string bad = (dir / "bad").string();
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"--hidden-npy " + x0 + " --gemm-npy ffn_up=" + h, "must be (N, D) or (1, N, D) = (56, 1536)"},
           {"--hidden-npy " + x0 + " --gemm-npy qk=" + h, "load out_proj, ffn_up or ffn_down"},
           {"--hidden-npy " + x0 + " --gemm-npy qkv=" + h, "give X0 with --hidden-npy"},
           {"--hidden-npy " + x0 + " --gemm-npy " + h, "must be <gemm>=<file.npy>"},
           {"--hidden-npy " + x0 + " --gemm-npy ffn_down=" + h + " --gemm-npy ffn_down=" + h, "a second time"},
           {"--gemm-npy ffn_down=" + h, "with --hidden-npy"}}) {
    const auto e = testing::run_kaleido("study " + args + " --npy-grid 2x4x7 --dit-block -o " + bad);
    EXPECT_EQ(e.status, 2) << args << "\n" << e.output;
    EXPECT_NE(e.output.find(message), std::string::npos) << args << "\n" << e.output;
  }
}

TEST(DitBlockCli, BadInputIsRefused) {
  const testing::TestDir dir("dit_block_bad");
  const std::string out = (dir / "out").string();
  auto r = testing::run_kaleido("study --resolution 480p --steps 45 --methods dense --dit-block -o " + out);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("at most 8192 tokens"), std::string::npos) << r.output;
  r = testing::run_kaleido("study --resolution 64x112 --frames 5 --methods dense --dit-block --block-snr -3 -o " + out);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("block-snr"), std::string::npos) << r.output;
  r = testing::run_kaleido("study --resolution 64x112 --frames 5 --methods dense --dit-block --block-cols 0 -o " + out);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("block-cols"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kaleido::study
