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
#include "port_bits.hpp"

namespace kld_detect {

using kaleido::Axis;
using kaleido::Policy;

// `policy` with a random axis list and, two times in three, a RoPE band split whose head dim
// divides K (groups may straddle bands): c's K must be set.
inline void random_detection(kaleido::ReuseConfig& c, kaleido::Rng& r, Policy policy) {
  c.policy = policy;
  const std::vector<std::vector<Axis>> lists = {{Axis::T, Axis::H, Axis::W}, {Axis::W}, {Axis::H, Axis::T},
                                                {Axis::W, Axis::T, Axis::H}, {Axis::T}, {Axis::H, Axis::W}};
  c.fixed_axes = lists[static_cast<size_t>(r.range(0, static_cast<int64_t>(lists.size()) - 1))];
  if (r.range(0, 2) != 0) {
    for (int tries = 0; tries < 20 && !c.band.has_rope(); ++tries) {
      kaleido::BandSplit b{"test", {static_cast<int>(r.range(1, 4)), static_cast<int>(r.range(1, 4)),
                                    static_cast<int>(r.range(1, 4))}};
      if (c.channels % b.head_dim() == 0) c.band = b;
    }
  }
}

// One time in three, some groups disabled (each one in four).
inline void random_enables(kaleido::ReuseConfig& c, kaleido::Rng& r) {
  if (r.range(0, 2) == 0)
    for (int g = 0; g < c.groups(); ++g) c.group_enable.push_back(static_cast<uint8_t>(r.range(0, 3) != 0));
}

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
  random_detection(c, r, policy);
  c.tile_h = static_cast<int>(r.range(0, c.grid.h));
  c.tile_w = static_cast<int>(r.range(0, c.grid.w));
  const int64_t need = kaleido::ScanOrder(c.grid, c.tile_h, c.tile_w).required_window_depth();
  const int64_t cap = hw.window_cap();
  // Window depths from 1 (only w references) to the capacity; 0 = as needed when that fits.
  c.window_depth = (need <= cap && r.range(0, 2) == 0) ? 0 : static_cast<int>(r.range(1, cap));
  random_enables(c, r);
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
    const int64_t st = r.range(-span / 16, span / 16), sh = r.range(-span / 32, span / 32);
    const int64_t sw = r.range(-span / 32, span / 32);
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

// The detection inputs of kld_ring_detect (as kld_ring_engine passes them on) for `c`, decided as
// `gold`, on `hw`: the window, the policy and axis list (garbage outside the fixed policy) and
// each group's enable, RoPE axes and threshold (garbage past c's groups).
template <class Dut>
void drive_detection(Dut& dut, const kaleido::hw::HwConfig& hw, const kaleido::ReuseConfig& c,
                     const kaleido::IntReuse& gold, kaleido::Rng& rng) {
  using kld_tb::set_bits;
  dut.win_i = static_cast<uint32_t>(gold.window_depth);
  dut.policy_i = static_cast<uint8_t>(c.policy);
  if (c.policy == Policy::Fixed) {
    dut.naxes_i = static_cast<uint8_t>(c.fixed_axes.size());
    uint32_t axes = 0;
    for (size_t k = 0; k < c.fixed_axes.size(); ++k) axes |= static_cast<uint32_t>(c.fixed_axes[k]) << (2 * k);
    dut.axes_i = static_cast<uint8_t>(axes);
  } else {
    dut.naxes_i = static_cast<uint8_t>(rng.range(0, 3));
    dut.axes_i = static_cast<uint8_t>(rng.range(0, 63));
  }
  const int tauw = hw.tau_w();
  for (int g = 0; g < hw.max_groups(); ++g) {
    const bool has = g < c.groups();
    set_bits(dut.enable_i, g, 1, has ? c.group_enabled(g) : rng.range(0, 1));
    set_bits(dut.rope_i, 3 * g, 3, has ? c.rope_mask(g) : rng.next());
    set_bits(dut.tau_i, g * tauw, tauw, has ? c.tau_of(g) : rng.next());
  }
}

// A's beat k of kld_ring_detect's stream: scan position k / LANE_GROUPS, groups
// (k mod LANE_GROUPS) x LANES + l on lane l (garbage past c's groups).
template <class Dut>
void drive_beat(Dut& dut, const kaleido::IntMatrix& a, const kaleido::ScanOrder& scan, int64_t k,
                const kaleido::hw::HwConfig& hw, int groups, kaleido::Rng& rng) {
  const int L = hw.det_lanes(), P = hw.lane_groups, gw = hw.group_w, dw = hw.data_w;
  const int32_t tok = scan.token_at(k / P);
  const int b = static_cast<int>(k % P);
  for (int l = 0; l < L; ++l) {
    const int g = b * L + l;
    for (int j = 0; j < gw; ++j)
      kld_tb::set_bits(dut.a_i, (l * gw + j) * dw, dw,
                       g < groups ? static_cast<uint64_t>(a.at(tok, g * gw + j)) : rng.next());
  }
}

// A garbage beat on a_i (offered or not).
template <class Dut>
void garbage_beat(Dut& dut, const kaleido::hw::HwConfig& hw, kaleido::Rng& rng) {
  for (int l = 0; l < hw.det_lanes() * hw.group_w; ++l) kld_tb::set_bits(dut.a_i, l * hw.data_w, hw.data_w, rng.next());
}

}  // namespace kld_detect
