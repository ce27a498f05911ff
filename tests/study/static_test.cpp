// End to end on a synthetic clip with a static background: the clip goes
// through the y4m writer and reader, the latent transform and the token
// patchify; channel-wise reuse must find the static region.
#include <gtest/gtest.h>

#include <filesystem>

#include "golden/reuse.hpp"
#include "helpers.hpp"
#include "workload/latent.hpp"
#include "workload/models.hpp"
#include "workload/qkv.hpp"

namespace kaleido::workload {
namespace {

struct RegionRatio {
  double static_ratio = 0, moving_ratio = 0;
};

// Reuse ratio over pairs of tokens at t >= 1 whose columns are static (w < static_cols) or moving.
RegionRatio region_ratio(const FloatReuse& r, const Grid& g, int static_cols, const std::vector<int>& groups) {
  int64_t s = 0, sn = 0, m = 0, mn = 0;
  for (int t = 1; t < g.t; ++t)
    for (int h = 0; h < g.h; ++h)
      for (int w = 0; w < g.w; ++w)
        for (int gr : groups) {
          const bool reused = r.at(g.index(t, h, w), gr).kind == PairKind::Reuse;
          if (w < static_cols) {
            s += reused;
            ++sn;
          } else {
            m += reused;
            ++mn;
          }
        }
  return {static_cast<double>(s) / static_cast<double>(sn), static_cast<double>(m) / static_cast<double>(mn)};
}

TEST(StaticBackground, ChannelReuseFindsTheStaticRegion) {
  // 128 x 128 pixels, 17 frames: tokens 5 x 8 x 8; the left 64 pixels (4 token columns) are static.
  const std::string path = testing::temp_path("static.y4m");
  write_y4m(path, testing::static_background_video(128, 128, 17, 64, 3, 1));
  const Video v = read_y4m_file(path);
  std::filesystem::remove(path);
  const Latent lat = encode_latent(to_pixels(v, 128, 128), LatentSpec{});
  const Tokens tok = patchify(lat.grid, lat.x);  // clean latent (the last step, sigma = 0)
  ASSERT_EQ(tok.grid.tokens(), 5 * 8 * 8);

  // Token features (the input of the projections, no RoPE: every axis allowed).
  ReuseConfig cfg;
  cfg.grid = tok.grid;
  cfg.channels = static_cast<int>(tok.f.cols);
  cfg.out_cols = 8;
  cfg.group_w = 8;
  cfg.tau_float.assign(static_cast<size_t>(cfg.groups()), 1e-3f);
  const FloatReuse r = run_reuse(cfg, tok.f);
  std::vector<int> all;
  for (int g = 0; g < cfg.groups(); ++g) all.push_back(g);
  const RegionRatio rr = region_ratio(r, tok.grid, 4, all);
  EXPECT_GE(rr.static_ratio, 0.99);
  EXPECT_LE(rr.moving_ratio, 0.2);

  // Q of a Wan2.1 head with its RoPE: the groups that may reuse along t (h and
  // w bands under the rope-orthogonal policy) find the static region too.
  const ModelShape& wan = find_model("wan2.1-1.3b");
  ProjectionSpec ps;
  ps.qk_align = 0.5;
  const AttentionInputs in = project_head(tok, wan, ps);
  ReuseConfig qc = cfg;  // a copy: a second default construction trips a GCC 12 false -Wmaybe-uninitialized
  qc.grid = tok.grid;
  qc.channels = wan.head_dim;
  qc.out_cols = static_cast<int>(tok.grid.tokens());
  qc.group_w = 8;
  qc.band = parse_band_split("wan2.1");
  qc.tau_float.assign(static_cast<size_t>(qc.groups()), 1e-3f);
  const FloatReuse rq = run_reuse(qc, in.q);
  std::vector<int> t_allowed;
  for (int g = 0; g < qc.groups(); ++g) {
    const auto axes = qc.allowed_axes(g);
    if (std::find(axes.begin(), axes.end(), Axis::T) != axes.end()) t_allowed.push_back(g);
  }
  ASSERT_FALSE(t_allowed.empty());
  const RegionRatio rq_ratio = region_ratio(rq, tok.grid, 4, t_allowed);
  EXPECT_GE(rq_ratio.static_ratio, 0.99);
  EXPECT_LE(rq_ratio.moving_ratio, 0.2);
}

}  // namespace
}  // namespace kaleido::workload
