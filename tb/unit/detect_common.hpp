// Shared by the detectors' block harnesses (detector_tb, ring_detect_tb): a random runtime
// configuration that fits the hardware, thresholds that meet the distances often, and a
// correlated A, all for the golden model (kaleido::run_reuse) to decide.
#pragma once

#include <algorithm>
#include <vector>

#include "golden/intmath.hpp"
#include "golden/random.hpp"
#include "golden/reuse.hpp"
#include "golden/scan.hpp"
#include "hw/hw_config.hpp"

namespace kld_detect {

using kaleido::Axis;
using kaleido::Policy;

// A grid, K, tiling, window depth, policy and axis list, RoPE band split and enables for `policy`
// (thresholds come from random_thresholds, once A is drawn).
inline kaleido::ReuseConfig random_config(const kaleido::hw::HwConfig& hw, kaleido::Rng& r, Policy policy) {
  kaleido::ReuseConfig c;
  c.grid = {static_cast<int>(r.range(1, hw.max_t)), static_cast<int>(r.range(1, hw.max_h)),
            static_cast<int>(r.range(1, hw.max_w))};
  c.group_w = hw.group_w;
  c.channels = hw.group_w * static_cast<int>(r.range(1, hw.max_groups()));
  c.out_cols = 1;
  c.data_w = hw.data_w;
  c.acc_w = hw.acc_w;
  c.policy = policy;
  const std::vector<std::vector<Axis>> lists = {{Axis::T, Axis::H, Axis::W}, {Axis::W}, {Axis::H, Axis::T},
                                                {Axis::W, Axis::T, Axis::H}, {Axis::T}, {Axis::H, Axis::W}};
  c.fixed_axes = lists[static_cast<size_t>(r.range(0, static_cast<int64_t>(lists.size()) - 1))];
  // A RoPE band split whose head dim divides K; groups may straddle bands.
  if (r.range(0, 2) != 0) {
    for (int tries = 0; tries < 20 && !c.band.has_rope(); ++tries) {
      kaleido::BandSplit b{"test", {static_cast<int>(r.range(1, 4)), static_cast<int>(r.range(1, 4)),
                                    static_cast<int>(r.range(1, 4))}};
      if (c.channels % b.head_dim() == 0) c.band = b;
    }
  }
  c.tile_h = static_cast<int>(r.range(0, c.grid.h));
  c.tile_w = static_cast<int>(r.range(0, c.grid.w));
  const int64_t need = kaleido::ScanOrder(c.grid, c.tile_h, c.tile_w).required_window_depth();
  const int64_t cap = hw.window_cap();
  // Window depths from 1 (only w references) to the capacity; 0 = as needed when that fits.
  c.window_depth = (need <= cap && r.range(0, 2) == 0) ? 0 : static_cast<int>(r.range(1, cap));
  if (r.range(0, 2) == 0)
    for (int g = 0; g < c.groups(); ++g) c.group_enable.push_back(static_cast<uint8_t>(r.range(0, 3) != 0));
  return c;
}

// Thresholds per group: 0, the largest value, small random values, or the
// exact difference between a random token and one of its neighbours (so
// d == tau, the boundary of "d <= tau", occurs often).
inline void random_thresholds(kaleido::ReuseConfig& c, const kaleido::IntMatrix& a, kaleido::Rng& r) {
  const uint32_t tau_top = (2u << c.data_w) - 1u;
  c.tau.clear();
  for (int g = 0; g < c.groups(); ++g) {
    const int64_t kind = r.range(0, 9);
    uint32_t tau = static_cast<uint32_t>(r.range(0, (1 << c.data_w) / 4));
    if (kind == 0) tau = 0;
    if (kind == 1) tau = tau_top;
    if (kind >= 6) {
      const int32_t tok = static_cast<int32_t>(r.range(0, c.grid.tokens() - 1));
      const int32_t other = tok > 0 ? tok - 1 : std::min<int32_t>(1, static_cast<int32_t>(c.grid.tokens()) - 1);
      tau = static_cast<uint32_t>(kaleido::group_difference(a, a, tok, other, g, c.group_w));
    }
    c.tau.push_back(tau);
  }
}

// A smooth field per channel (a plane in t, h, w plus small noise), with a
// few extreme values, so references pass and fail in a mix.
inline kaleido::IntMatrix correlated_a(const kaleido::ReuseConfig& c, kaleido::Rng& r) {
  const int dw = c.data_w;
  const int64_t lo = kaleido::signed_min(dw), hi = kaleido::signed_max(dw);
  const int64_t span = hi - lo + 1;
  kaleido::IntMatrix a(c.grid.tokens(), c.channels);
  for (int ch = 0; ch < c.channels; ++ch) {
    const int64_t base = r.range(lo, hi);
    const int64_t st = r.range(-span / 16, span / 16), sh = r.range(-span / 32, span / 32), sw = r.range(-span / 32, span / 32);
    const int64_t noise = r.range(0, span / 32);
    for (int t = 0; t < c.grid.t; ++t)
      for (int h = 0; h < c.grid.h; ++h)
        for (int w = 0; w < c.grid.w; ++w) {
          int64_t v = base + st * t + sh * h + sw * w + r.range(-noise, noise);
          if (r.range(0, 29) == 0) v = r.range(0, 1) ? lo : hi;
          a.at(c.grid.index(t, h, w), ch) = static_cast<int32_t>(std::clamp(v, lo, hi));
        }
  }
  return a;
}

}  // namespace kld_detect
