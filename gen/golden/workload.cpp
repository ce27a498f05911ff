#include "golden/workload.hpp"

#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "golden/intmath.hpp"
#include "golden/random.hpp"

namespace kaleido {

void SyntheticSpec::validate() const {
  auto req = [](bool ok, const char* p, double v, const char* rule) {
    if (!ok) throw ConfigError(p, std::to_string(v), rule);
  };
  req(grid.t > 0 && grid.h > 0 && grid.w > 0, "grid", static_cast<double>(grid.tokens()), "T, H, W must be positive");
  req(channels > 0, "K", channels, "must be at least 1");
  req(spatial_corr >= 0.0 && spatial_corr < 1.0, "spatial_corr", spatial_corr, "must be in [0, 1)");
  req(temporal_corr >= 0.0 && temporal_corr <= 1.0, "temporal_corr", temporal_corr, "must be in [0, 1]");
  req(noise >= 0.0 && noise <= 1.0, "noise", noise, "must be in [0, 1]");
  req(static_w >= 0 && static_w <= grid.w, "static_w", static_w, "must be 0 to W");
}

FloatMatrix make_latent(const SyntheticSpec& spec) {
  spec.validate();
  const Grid& g = spec.grid;
  const int K = spec.channels;
  FloatMatrix x(g.tokens(), K);
  Rng rng(spec.seed);
  const double rs = spec.spatial_corr, rt = spec.temporal_corr;
  const double ks = std::sqrt(1.0 - rs * rs), kt = std::sqrt(1.0 - rt * rt);
  std::vector<double> field(static_cast<size_t>(g.h) * g.w), prev(field.size());
  for (int c = 0; c < K; ++c) {
    for (int t = 0; t < g.t; ++t) {
      // Separable AR(1): along w, then along h; stationary with unit variance.
      for (int h = 0; h < g.h; ++h)
        for (int w = 0; w < g.w; ++w) {
          const double e = rng.normal();
          double& f = field[static_cast<size_t>(h * g.w + w)];
          f = w == 0 ? e : rs * field[static_cast<size_t>(h * g.w + w - 1)] + ks * e;
        }
      for (int h = 1; h < g.h; ++h)
        for (int w = 0; w < g.w; ++w) {
          double& f = field[static_cast<size_t>(h * g.w + w)];
          f = rs * field[static_cast<size_t>((h - 1) * g.w + w)] + ks * f;
        }
      for (size_t k = 0; k < field.size(); ++k) prev[k] = t == 0 ? field[k] : rt * prev[k] + kt * field[k];
      for (int h = 0; h < g.h; ++h)
        for (int w = 0; w < g.w; ++w) {
          const bool still = w < spec.static_w && t > 0;
          x.at(g.index(t, h, w), c) =
              still ? x.at(g.index(0, h, w), c) : static_cast<float>(prev[static_cast<size_t>(h * g.w + w)]);
        }
    }
  }
  if (spec.noise > 0.0) {
    Rng nrng(spec.seed * 7919u + 17u);
    const double s = spec.noise;
    for (int t = 0; t < g.t; ++t)
      for (int h = 0; h < g.h; ++h)
        for (int w = 0; w < g.w; ++w)
          for (int c = 0; c < K; ++c) {
            // The static background keeps frame 0's noise too, so it stays identical.
            const int32_t tok = g.index(t, h, w);
            if (w < spec.static_w && t > 0) {
              x.at(tok, c) = x.at(g.index(0, h, w), c);
              continue;
            }
            x.at(tok, c) = static_cast<float>((1.0 - s) * x.at(tok, c) + s * nrng.normal());
          }
  }
  return x;
}

IntMatrix make_int_uniform(int64_t rows, int64_t cols, int bits, uint64_t seed) {
  IntMatrix m(rows, cols);
  Rng rng(seed);
  for (auto& v : m.data) v = static_cast<int32_t>(rng.range(signed_min(bits), signed_max(bits)));
  return m;
}

IntMatrix make_int_weights(int rows, int cols, int bits, uint64_t seed) {
  return make_int_uniform(rows, cols, bits, seed);
}

FloatMatrix make_float_weights(int rows, int cols, uint64_t seed) {
  FloatMatrix m(rows, cols);
  Rng rng(seed);
  const double s = 1.0 / std::sqrt(static_cast<double>(rows));
  for (auto& v : m.data) v = static_cast<float>(s * rng.normal());
  return m;
}

void to_json(nlohmann::json& j, const SyntheticSpec& s) {
  j = nlohmann::json{{"kind", "synthetic"},
                     {"T", s.grid.t},
                     {"H", s.grid.h},
                     {"W", s.grid.w},
                     {"K", s.channels},
                     {"seed", s.seed},
                     {"spatial_corr", s.spatial_corr},
                     {"temporal_corr", s.temporal_corr},
                     {"noise", s.noise},
                     {"static_w", s.static_w}};
}

void from_json(const nlohmann::json& j, SyntheticSpec& s) {
  s.grid = {j.at("T").get<int>(), j.at("H").get<int>(), j.at("W").get<int>()};
  s.channels = j.at("K").get<int>();
  s.seed = j.at("seed").get<uint64_t>();
  s.spatial_corr = j.at("spatial_corr").get<double>();
  s.temporal_corr = j.at("temporal_corr").get<double>();
  s.noise = j.at("noise").get<double>();
  s.static_w = j.value("static_w", 0);
}

}  // namespace kaleido
