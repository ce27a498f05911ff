// Configuration of one reuse GEMM `Out = A . B` (DESIGN.md section 2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "golden/types.hpp"

namespace kaleido {

// 3D-RoPE band split of one head: channel counts of the t, h and w bands, in
// that order, repeated every head_dim() channels. Empty = no RoPE (a
// projection or FFN input), so every axis is allowed.
struct BandSplit {
  std::string name = "none";
  std::vector<int> sizes;  // {t, h, w} or empty
  int head_dim() const;
  bool has_rope() const { return !sizes.empty(); }
};

// "wan2.1" 44/42/42, "hunyuan" 16/56/56, "cogvideox" 16/24/24, "none", or an
// explicit "T,H,W" list such as "44,42,42".
BandSplit parse_band_split(const std::string& spec);

enum class Policy : uint8_t {
  Fixed = 0,           // the axes of `fixed_axes`, in that order; first passing wins
  RopeOrthogonal = 1,  // axes other than the group's RoPE axes, order t,h,w; first passing wins
  Adaptive = 2,        // the rope-orthogonal set; the passing reference with the smallest difference wins
};
const char* policy_name(Policy p);
Policy parse_policy(const std::string& s);

// What the model computes: channel-wise reuse (the algorithm), or a baseline.
enum class Mode : uint8_t {
  ChannelReuse = 0,  // per (token, group) decisions
  Dense = 1,         // every pair computes
  TokenReuse = 2,    // a token reuses only when all its groups pass for one reference
};
const char* mode_name(Mode m);
Mode parse_mode(const std::string& s);

// How far a (token, group) is from a reference, and what its threshold tau means. Every distance is in units of
// the data, per channel, so one tau means the same in each: a group whose Gw channels all differ by delta passes
// exactly when delta <= tau, whichever the distance.
//   max  max_c |x_c - y_c| <= tau            (the RTL detector computes this one, bit exact)
//   l1   sum_c |x_c - y_c| <= Gw tau          (mean absolute difference <= tau)
//   l2   sum_c (x_c - y_c)^2 <= Gw tau^2      (RMS difference <= tau; squares compared, no square root)
// In one comparison at a given tau, l1 passes whatever l2 passes and l2 whatever max passes (mean <= RMS <= max).
// l1 and l2 exist for the study (float path); the integer path and every hardware run refuse them.
enum class Distance : uint8_t { Max = 0, L1 = 1, L2 = 2 };
const char* distance_name(Distance d);
Distance parse_distance(const std::string& s);

// t, h, w: the default order of the fixed policy and of token-level reuse.
std::vector<Axis> default_axis_order();

struct ReuseConfig {
  Grid grid{2, 4, 4};
  int channels = 16;   // K
  int out_cols = 8;    // M
  int data_w = 8;      // DATA_W, 4..16
  int acc_w = 32;      // ACC_W, 2*DATA_W..64
  int group_w = 8;     // Gw, divides K
  BandSplit band;
  Policy policy = Policy::RopeOrthogonal;
  std::vector<Axis> fixed_axes = default_axis_order();
  Mode mode = Mode::ChannelReuse;
  Distance distance = Distance::Max;
  // Scan order: spatial tiles of tile_h x tile_w (0 = the whole frame); tiles
  // in raster order, and inside a tile t, then h, then w. References never
  // cross a tile (the hardware window holds the current tile only).
  int tile_h = 0;
  int tile_w = 0;
  // Reference window depth in tokens of scan order; 0 = what the scan order needs.
  int window_depth = 0;
  // Integer thresholds per group (unsigned, DATA_W+1 bits); empty = all zero.
  std::vector<uint32_t> tau;
  // Float thresholds per group for the float path; empty = all zero.
  std::vector<float> tau_float;
  // Per-group reuse enable (mixed mode); empty = all enabled.
  std::vector<uint8_t> group_enable;
  // Closed loop compares against effective inputs (the algorithm). Open loop
  // compares against the reference's raw input; kept only to show drift.
  bool closed_loop = true;

  int groups() const { return channels / group_w; }
  int tile_h_eff() const { return tile_h > 0 ? tile_h : grid.h; }
  int tile_w_eff() const { return tile_w > 0 ? tile_w : grid.w; }
  uint32_t tau_max() const { return (1u << data_w) - 1u; }  // largest possible difference
  uint32_t tau_of(int g) const { return tau.empty() ? 0u : tau[static_cast<size_t>(g)]; }
  float tau_float_of(int g) const { return tau_float.empty() ? 0.0f : tau_float[static_cast<size_t>(g)]; }
  bool group_enabled(int g) const { return group_enable.empty() || group_enable[static_cast<size_t>(g)] != 0; }

  // RoPE axes each group's channels depend on (a group straddling two bands
  // depends on both), and the axes the policy lets it reuse along, in order.
  AxisMask rope_mask(int g) const;
  std::vector<Axis> allowed_axes(int g) const;

  // Throws ConfigError naming the parameter and the rule.
  void validate() const;
  // validate(), and what the hardware implements on top: the max distance (the RTL detector computes max |x - y|
  // over a group). For every run that drives the hardware (golden vectors, sim, flow).
  void validate_for_hardware() const;
};

void to_json(nlohmann::json& j, const ReuseConfig& c);
void from_json(const nlohmann::json& j, ReuseConfig& c);

}  // namespace kaleido
