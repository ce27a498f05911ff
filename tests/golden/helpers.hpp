// Shared helpers of the golden-model tests.
#pragma once

#include <cstdlib>
#include <unistd.h>
#include <string>

#include "golden/config.hpp"
#include "golden/quant.hpp"
#include "golden/random.hpp"
#include "golden/workload.hpp"

namespace kaleido::testing {

// A synthetic float latent on the grid and channels of `cfg` (other fields at their defaults).
inline SyntheticSpec latent_spec(const ReuseConfig& cfg, uint64_t seed) {
  SyntheticSpec s;
  s.grid = cfg.grid;
  s.channels = cfg.channels;
  s.seed = seed;
  return s;
}

// A random but valid configuration and a correlated integer workload for it.
struct Case {
  ReuseConfig cfg;
  IntMatrix a;
  IntMatrix b;
};

inline Case random_case(uint64_t seed) {
  Rng r(seed);
  Case c;
  ReuseConfig& cfg = c.cfg;
  cfg.grid = {static_cast<int>(r.range(1, 4)), static_cast<int>(r.range(1, 6)), static_cast<int>(r.range(1, 7))};
  const int gw_choices[] = {1, 2, 4, 8};
  cfg.group_w = gw_choices[r.range(0, 3)];
  cfg.channels = cfg.group_w * static_cast<int>(r.range(1, 4));
  cfg.out_cols = static_cast<int>(r.range(1, 9));
  cfg.data_w = static_cast<int>(r.range(4, 16));
  cfg.acc_w = static_cast<int>(r.range(2 * cfg.data_w, 64));
  cfg.policy = static_cast<Policy>(r.range(0, 2));
  if (r.range(0, 1)) cfg.fixed_axes = {Axis::W, Axis::T};
  cfg.tile_h = static_cast<int>(r.range(0, cfg.grid.h));
  cfg.tile_w = static_cast<int>(r.range(0, cfg.grid.w));
  cfg.window_depth = r.range(0, 2) == 0 ? static_cast<int>(r.range(1, 8)) : 0;
  for (int g = 0; g < cfg.groups(); ++g)
    cfg.tau.push_back(static_cast<uint32_t>(r.range(0, static_cast<int64_t>(cfg.tau_max()) / 4)));
  if (r.range(0, 3) == 0)
    for (int g = 0; g < cfg.groups(); ++g) cfg.group_enable.push_back(static_cast<uint8_t>(r.range(0, 1)));
  SyntheticSpec s = latent_spec(cfg, seed);
  s.spatial_corr = 0.95;
  s.temporal_corr = 0.97;
  s.noise = 0.02;
  c.a = quantize(make_latent(s), cfg.data_w).q;
  c.b = make_int_uniform(cfg.channels, cfg.out_cols, cfg.data_w, seed + 99);
  return c;
}

inline std::string temp_path(const std::string& name) {
  const char* base = std::getenv("TMPDIR");
  return std::string(base ? base : "/tmp") + "/kaleido_test_" + std::to_string(::getpid()) + "_" + name;
}

}  // namespace kaleido::testing
