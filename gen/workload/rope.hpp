// 3D rotary position embedding as the video DiTs apply it: a head's channels
// are cut into t, h and w bands; inside a band, adjacent channel pairs
// (2k, 2k+1) rotate by the angle pos_axis * theta^(-2k / band_size).
// (Wan2.1: 44/42/42, theta 1e4; HunyuanVideo: 16/56/56, theta 256;
// CogVideoX-5B: 16/24/24, theta 1e4.)
#pragma once

#include <array>

#include "golden/types.hpp"

namespace kaleido::workload {

struct Rope3d {
  std::array<int, 3> band{44, 42, 42};
  double theta = 10000.0;
  int head_dim() const { return band[0] + band[1] + band[2]; }
  void validate() const;  // bands even and positive, theta > 1
};

// Rotates one head vector (head_dim floats) for the position (t, h, w).
void rope_rotate(float* v, const Rope3d& rope, int t, int h, int w);

// Rotates every row of x (tokens of `grid`, raster order) by its token's
// position; x has head_dim columns.
void apply_rope(FloatMatrix& x, const Grid& grid, const Rope3d& rope);

}  // namespace kaleido::workload
