// The proxy keeps the latent's spectrum; the denoised-estimate proxy is the
// Wiener filter of its closed form.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "golden/random.hpp"
#include "helpers.hpp"
#include "workload/denoise.hpp"
#include "workload/latent.hpp"
#include "workload/qk_workload.hpp"

namespace kaleido::workload {
namespace {

// A static clip of `hc` x `wc` latent cells: each 8x8 cell shows 128 + 30 a +
// 10 b cos(pi (2x + 1) / 16), with a an AR(1) sequence along w (coefficient
// rho, unit variance) and b white, both per row of cells.
Video correlated_clip(int hc, int wc, double rho, uint64_t seed) {
  Video v;
  v.width = wc * 8;
  v.height = hc * 8;
  v.chroma = Chroma::C444;
  v.chroma_tag = "444";
  Rng rng(seed);
  VideoFrame fr;
  fr.y.resize(v.luma_bytes());
  fr.u.assign(v.luma_bytes(), 128);
  fr.v.assign(v.luma_bytes(), 128);
  for (int h = 0; h < hc; ++h) {
    double a = rng.normal();
    for (int w = 0; w < wc; ++w) {
      if (w > 0) a = rho * a + std::sqrt(1 - rho * rho) * rng.normal();
      const double b = rng.normal();
      for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 8; ++x) {
          const double p = 128 + 30 * a + 10 * b * std::cos(M_PI * (2 * x + 1) / 16.0);
          fr.y[static_cast<size_t>((h * 8 + y) * v.width + w * 8 + x)] =
              static_cast<uint8_t>(std::clamp(std::lround(p), 0L, 255L));
        }
    }
  }
  for (int f = 0; f < 5; ++f) v.frames.push_back(fr);
  return v;
}

TEST(Proxy, UnscaledLatentKeepsTheNeighbourCorrelationOfAKnownClip) {
  const double rho = 0.9;
  const Video v = correlated_clip(16, 64, rho, 5);
  // Orthonormal 4x8x8 DCT: a cell of value c gives DC 16 c; the cosine of
  // amplitude A gives the (0,0,1) coefficient A * (4 / 2) * (8 / sqrt 8) * (4 sqrt(2/8)) = 8 sqrt(2) A.
  // Energy-pooled correlation along w: rho * var(DC) / (var(DC) + var(AC)).
  const double dc = 16 * 30 / 127.5, ac = 8 * std::sqrt(2.0) * 10 / 127.5;
  const double want = rho * dc * dc / (dc * dc + ac * ac);  // 0.85
  for (LatentScaling s : {LatentScaling::None, LatentScaling::Global}) {
    LatentSpec spec;
    spec.scaling = s;
    const Latent lat = encode_latent(to_pixels(v, v.width, v.height), spec);
    EXPECT_NEAR(neighbour_correlation(lat.grid, lat.x, 2), want, 0.05) << scaling_name(s);
    EXPECT_NEAR(neighbour_correlation(lat.grid, lat.x, 0), 1.0, 1e-6) << "static clip: t neighbours equal";
  }
  // Z-scoring every channel weights the white AC channel and the channels that
  // hold only rounding noise like the DC: the correlation collapses.
  LatentSpec z;
  z.scaling = LatentScaling::PerChannel;
  const Latent white = encode_latent(to_pixels(v, v.width, v.height), z);
  EXPECT_LT(neighbour_correlation(white.grid, white.x, 2), 0.4);
}

TEST(Proxy, WienerEstimateMatchesItsClosedFormInOneDimension) {
  // x0 = cos(2 pi k0 n / L): power L/4 at bins k0 and L - k0, none elsewhere.
  const int L = 64, k0 = 5;
  const Grid g{1, 1, L};
  FloatMatrix x0(L, 1);
  for (int n = 0; n < L; ++n) x0.at(n, 0) = static_cast<float>(std::cos(2 * M_PI * k0 * n / L));
  const LatentSpectrum spec = estimate_spectrum(g, x0, 0);
  for (int k = 0; k < L; ++k)
    EXPECT_NEAR(spec.at(0, k), (k == k0 || k == L - k0) ? L / 4.0 : 0.0, 1e-6) << k;
  for (double sigma : {0.0, 0.3, 0.8, 1.0}) {
    const FloatMatrix xt = add_noise(x0, sigma, 9);
    const FloatMatrix est = wiener_denoise(g, xt, sigma, spec);
    // Closed form: H = (1 - s) P / ((1 - s)^2 P + s^2) times the projection of x_t on bin k0.
    const double P = L / 4.0, a = 1 - sigma;
    const double H = sigma == 0.0 ? 1.0 : a * P / (a * a * P + sigma * sigma);
    double alpha = 0, beta = 0;
    for (int n = 0; n < L; ++n) {
      alpha += 2.0 / L * xt.at(n, 0) * std::cos(2 * M_PI * k0 * n / L);
      beta += 2.0 / L * xt.at(n, 0) * std::sin(2 * M_PI * k0 * n / L);
    }
    for (int n = 0; n < L; ++n) {
      const double want = sigma == 0.0 ? xt.at(n, 0)
                                       : H * (alpha * std::cos(2 * M_PI * k0 * n / L) + beta * std::sin(2 * M_PI * k0 * n / L));
      EXPECT_NEAR(est.at(n, 0), want, 1e-5) << "sigma " << sigma << " n " << n;
    }
  }
}

TEST(Proxy, WienerWithAFlatSpectrumScalesEveryCellIn3d) {
  const Grid g{3, 4, 5};
  FloatMatrix x(g.tokens(), 2);
  Rng rng(3);
  for (auto& v : x.data) v = static_cast<float>(rng.normal());
  LatentSpectrum flat;
  flat.grid = g;
  flat.channels = 2;
  flat.power.assign(static_cast<size_t>(2 * g.tokens()), 2.0);
  const double sigma = 0.5, H = 0.5 * 2.0 / (0.25 * 2.0 + 0.25);
  EXPECT_NEAR(wiener_gain(2.0, sigma), H, 1e-12);
  const FloatMatrix est = wiener_denoise(g, x, sigma, flat);
  for (size_t i = 0; i < x.data.size(); ++i) EXPECT_NEAR(est.data[i], H * x.data[i], 1e-5);
  flat.grid = Grid{3, 4, 4};
  EXPECT_THROW(wiener_denoise(g, x, sigma, flat), ConfigError);
}

TEST(QkWorkload, QAndKTransposedOfOneHeadAtALateStep) {
  const std::string clip = testing::temp_path("qk.y4m"), other = testing::temp_path("qk_other.y4m");
  write_y4m(clip, testing::static_background_video(128, 128, 5, 32, 2, 3));   // 2 x 8 x 8 tokens at 16 px
  write_y4m(other, testing::static_background_video(128, 128, 5, 64, 1, 4));
  QkWorkloadSpec spec;
  spec.clip = clip;
  spec.spectrum_clip = other;
  const QkWorkload w = make_qk_workload(spec);
  ASSERT_EQ(w.a.rows, 128);  // tokens
  ASSERT_EQ(w.a.cols, 128);  // Wan2.1 head dim
  ASSERT_EQ(w.b.rows, 128);
  ASSERT_EQ(w.b.cols, 128);  // keys
  for (int64_t v : w.a.data) EXPECT_LE(std::abs(v), 127);
  EXPECT_LE(w.description["sigma"].get<double>(), 0.3);
  EXPECT_EQ(w.description["kind"], "qk");
  EXPECT_EQ(w.description["proxy"], "denoised");
  // 8-bit operands keep the scores: well above 25 dB of SNR, cosine near 1.
  EXPECT_GT(w.quantisation.snr_db, 25.0);
  EXPECT_GT(w.quantisation.cosine, 0.998);
  spec.data_w = 3;
  EXPECT_THROW(make_qk_workload(spec), ConfigError);
  std::remove(clip.c_str());
  std::remove(other.c_str());
}

}  // namespace
}  // namespace kaleido::workload
