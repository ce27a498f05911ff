// Frames to latent: resampling, the 3D-DCT patchify, noise, token patchify,
// and the model shapes.
#include <gtest/gtest.h>

#include <cmath>

#include "common/error.hpp"
#include "helpers.hpp"
#include "workload/latent.hpp"
#include "workload/models.hpp"

namespace kaleido::workload {
namespace {

Video flat_video(int w, int h, int frames, uint8_t y, uint8_t u, uint8_t v) {
  Video vid;
  vid.width = w;
  vid.height = h;
  vid.chroma = Chroma::C420;
  for (int f = 0; f < frames; ++f) {
    VideoFrame fr;
    fr.y.assign(vid.luma_bytes(), y);
    fr.u.assign(vid.chroma_bytes(), u);
    fr.v.assign(vid.chroma_bytes(), v);
    vid.frames.push_back(fr);
  }
  return vid;
}

TEST(Pixels, CentreCropThenAreaAverage) {
  // 4x2 source, 2x2 target: the aspect crop keeps columns 1..2, then 1:1.
  Video v = flat_video(4, 2, 1, 0, 128, 128);
  v.frames[0].y = {0, 51, 102, 255, 10, 20, 30, 40};
  PixelClip p = to_pixels(v, 2, 2);
  ASSERT_EQ(p.frames.size(), 1u);
  const auto& y = p.frames[0][0];
  EXPECT_NEAR(y[0], 51 / 127.5 - 1, 1e-6);
  EXPECT_NEAR(y[1], 102 / 127.5 - 1, 1e-6);
  EXPECT_NEAR(y[2], 20 / 127.5 - 1, 1e-6);
  EXPECT_NEAR(y[3], 30 / 127.5 - 1, 1e-6);
  // 2x downscale: each output is the mean of a 2x2 square.
  v.frames[0].y = {0, 10, 20, 30, 40, 50, 60, 70};
  p = to_pixels(v, 2, 1);
  EXPECT_NEAR(p.frames[0][0][0], (0 + 10 + 40 + 50) / 4.0 / 127.5 - 1, 1e-5);
  EXPECT_NEAR(p.frames[0][0][1], (20 + 30 + 60 + 70) / 4.0 / 127.5 - 1, 1e-5);
  // Chroma 128 is zero.
  EXPECT_NEAR(p.frames[0][1][0], 128 / 127.5 - 1, 1e-6);
}

TEST(Latent, BasisOrderIsTheDocumentedOne) {
  const auto b = latent_basis(16, 4, 8);
  ASSERT_EQ(b.size(), 16u);
  auto is = [](const DctCoefficient& c, int p, int t, int y, int x) {
    return c.plane == p && c.ft == t && c.fy == y && c.fx == x;
  };
  EXPECT_TRUE(is(b[0], 0, 0, 0, 0));
  EXPECT_TRUE(is(b[1], 0, 0, 0, 1));
  EXPECT_TRUE(is(b[2], 0, 0, 1, 0));
  EXPECT_TRUE(is(b[3], 0, 1, 0, 0));
  EXPECT_TRUE(is(b[4], 1, 0, 0, 0));
  EXPECT_TRUE(is(b[5], 2, 0, 0, 0));
  for (int c = 6; c < 12; ++c) EXPECT_EQ(b[static_cast<size_t>(c)].plane, 0);
  EXPECT_TRUE(is(b[12], 1, 0, 0, 1));
  EXPECT_TRUE(is(b[15], 2, 0, 0, 1));
  EXPECT_THROW(latent_basis(0, 4, 8), ConfigError);
}

TEST(Latent, FlatClipHasOnlyDcEnergyAndCausalFrameCount) {
  // Orthonormal DCT: the DC of 4 x 8 x 8 equal values v is 16 v.
  const double yv = 200 / 127.5 - 1, uv = 90 / 127.5 - 1;
  LatentSpec spec;
  spec.scaling = LatentScaling::None;
  const Latent lat = encode_latent(to_pixels(flat_video(32, 16, 9, 200, 90, 128), 32, 16), spec);
  EXPECT_EQ(lat.grid.t, 3);  // frames 0 | 1-4 | 5-8
  EXPECT_EQ(lat.grid.h, 2);
  EXPECT_EQ(lat.grid.w, 4);
  for (int64_t i = 0; i < lat.x.rows; ++i) {
    EXPECT_NEAR(lat.x.at(i, 0), 16 * yv, 1e-4);
    EXPECT_NEAR(lat.x.at(i, 4), 16 * uv, 1e-4);
    EXPECT_NEAR(lat.x.at(i, 5), 16 * (128 / 127.5 - 1), 1e-4);
    for (int c : {1, 2, 3, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}) EXPECT_NEAR(lat.x.at(i, c), 0.0, 1e-4) << c;
  }
  EXPECT_THROW(encode_latent(to_pixels(flat_video(32, 16, 8, 1, 1, 1), 32, 16), spec), ConfigError);  // not 4k+1
  EXPECT_THROW(encode_latent(to_pixels(flat_video(36, 16, 9, 1, 1, 1), 36, 16), spec), ConfigError);  // not 8n
}

TEST(Latent, GlobalScalingKeepsChannelRatiosAndGivesUnitMeanVariance) {
  const Video v = testing::random_video(64, 32, 9, Chroma::C420, "420jpeg", 3);
  LatentSpec raw_spec;
  raw_spec.scaling = LatentScaling::None;
  const Latent raw = encode_latent(to_pixels(v, 64, 32), raw_spec);
  const Latent lat = encode_latent(to_pixels(v, 64, 32), LatentSpec{});
  const double n = static_cast<double>(lat.x.rows);
  std::vector<double> var_raw(16), var(16);
  double mean_var = 0.0;
  for (int c = 0; c < 16; ++c) {
    double s = 0, s2 = 0, r = 0, r2 = 0;
    for (int64_t i = 0; i < lat.x.rows; ++i) {
      s += lat.x.at(i, c);
      s2 += lat.x.at(i, c) * lat.x.at(i, c);
      r += raw.x.at(i, c);
      r2 += raw.x.at(i, c) * raw.x.at(i, c);
    }
    EXPECT_NEAR(s / n, 0.0, 1e-4);
    var[static_cast<size_t>(c)] = s2 / n;
    var_raw[static_cast<size_t>(c)] = r2 / n - (r / n) * (r / n);
    mean_var += var[static_cast<size_t>(c)] / 16;
  }
  EXPECT_NEAR(mean_var, 1.0, 1e-3);
  for (int c = 1; c < 16; ++c)  // one factor for all channels: variance ratios unchanged
    EXPECT_NEAR(var[static_cast<size_t>(c)] / var[0], var_raw[static_cast<size_t>(c)] / var_raw[0], 1e-3);
  EXPECT_EQ(parse_latent_scaling("per-channel"), LatentScaling::PerChannel);
  EXPECT_THROW(parse_latent_scaling("z"), ConfigError);
}

TEST(Latent, PerChannelScalingGivesZeroMeanAndUnitVariance) {
  const Video v = testing::random_video(64, 32, 9, Chroma::C420, "420jpeg", 3);
  LatentSpec spec;
  spec.scaling = LatentScaling::PerChannel;
  const Latent lat = encode_latent(to_pixels(v, 64, 32), spec);
  for (int c = 0; c < 16; ++c) {
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < lat.x.rows; ++i) {
      s += lat.x.at(i, c);
      s2 += lat.x.at(i, c) * lat.x.at(i, c);
    }
    const double n = static_cast<double>(lat.x.rows);
    EXPECT_NEAR(s / n, 0.0, 1e-4);
    EXPECT_NEAR(s2 / n, 1.0, 1e-3);
  }
}

TEST(Noise, RectifiedFlowScheduleAndMix) {
  FlowSchedule f;
  f.steps = 50;
  f.shift = 5.0;
  EXPECT_DOUBLE_EQ(f.sigma(0), 1.0);
  EXPECT_DOUBLE_EQ(f.sigma(50), 0.0);
  EXPECT_NEAR(f.sigma(25), 2.5 / 3.0, 1e-12);  // t = 0.5: 5 * 0.5 / (1 + 4 * 0.5)
  f.shift = 1.0;
  EXPECT_NEAR(f.sigma(10), 0.8, 1e-12);
  EXPECT_THROW(f.sigma(51), ConfigError);
  FloatMatrix x0(100, 4, 2.0f);
  const FloatMatrix clean = add_noise(x0, 0.0, 1), pure = add_noise(x0, 1.0, 1), half = add_noise(x0, 0.5, 1);
  EXPECT_EQ(clean.data, x0.data);
  for (size_t i = 0; i < x0.data.size(); ++i) EXPECT_NEAR(half.data[i], 0.5 * 2.0 + 0.5 * pure.data[i], 1e-5);
}

TEST(Tokens, PatchifyGathersTwoByTwoCellsChannelMajor) {
  const Grid g{1, 2, 4};
  FloatMatrix x(g.tokens(), 2);
  for (int h = 0; h < 2; ++h)
    for (int w = 0; w < 4; ++w) {
      x.at(g.index(0, h, w), 0) = static_cast<float>(10 * h + w);
      x.at(g.index(0, h, w), 1) = static_cast<float>(100 + 10 * h + w);
    }
  const Tokens t = patchify(g, x);
  EXPECT_EQ(t.grid.tokens(), 2);
  ASSERT_EQ(t.f.cols, 8);
  // Token (0,0,1) covers cells h 0-1, w 2-3; feature c * 4 + dy * 2 + dx.
  const float want[] = {2, 3, 12, 13, 102, 103, 112, 113};
  for (int k = 0; k < 8; ++k) EXPECT_EQ(t.f.at(1, k), want[k]);
  EXPECT_THROW(patchify(Grid{1, 3, 4}, FloatMatrix(12, 2), 2, 2), ConfigError);
}

TEST(Models, TokenGridsOfTheDesignBrief) {
  const ModelShape& wan = find_model("wan2.1-1.3b");
  EXPECT_EQ(wan.hidden, 1536);
  EXPECT_EQ(wan.heads * wan.head_dim, wan.hidden);
  Grid g = token_grid(wan, parse_resolution(wan, "480p"), 81);
  EXPECT_EQ(g.t, 21);
  EXPECT_EQ(g.h, 30);
  EXPECT_EQ(g.w, 52);
  EXPECT_EQ(g.tokens(), 32760);
  g = token_grid(wan, parse_resolution(wan, "720p"), 81);
  EXPECT_EQ(g.tokens(), 75600);
  const ModelShape& w14 = find_model("wan2.1-14b");
  EXPECT_EQ(w14.hidden, 5120);
  EXPECT_EQ(w14.heads, 40);
  EXPECT_EQ(w14.layers, 40);
  EXPECT_EQ(w14.ffn, 13824);
  for (const ModelShape& m : model_shapes()) {
    EXPECT_EQ(m.rope_band[0] + m.rope_band[1] + m.rope_band[2], m.head_dim) << m.name;
    EXPECT_EQ(m.heads * m.head_dim, m.hidden) << m.name;
  }
  const ModelShape& cog = find_model("cogvideox-5b");
  EXPECT_EQ(token_grid(cog, parse_resolution(cog, "480p"), 49).tokens(), 13 * 30 * 45);
  EXPECT_EQ(token_grid(wan, parse_resolution(wan, "128x224"), 17).tokens(), 5 * 8 * 14);
  EXPECT_THROW(parse_resolution(wan, "100x200"), ConfigError);
  EXPECT_THROW(token_grid(wan, parse_resolution(wan, "480p"), 80), ConfigError);
  EXPECT_THROW(find_model("sora"), ConfigError);
}

}  // namespace
}  // namespace kaleido::workload
