// A real-video workload for the hardware: latent tokens of a clip (the
// study's documented proxy encoder, no model weights) as the token-major left
// operand A, and seeded weights B, quantised to DATA_W.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "golden/types.hpp"

namespace kaleido::sim {

struct ClipWorkloadSpec {
  std::string clip;     // a path, or "cockatoo" for Debian's python3-imageio clip
  Grid grid{2, 8, 8};   // latent cells T x H x W (pixels: W*8 x H*8, frames 4(T-1)+1)
  int channels = 16;    // K = latent channels
  int out_cols = 16;    // M
  int data_w = 8;
  int step = 25;        // diffusion step of a 50-step flow schedule (shift 5)
  int steps = 50;
  uint64_t seed = 1;
  int start_frame = 0;
};

struct ClipWorkload {
  IntMatrix a, b;
  nlohmann::json description;
};

ClipWorkload make_clip_workload(const ClipWorkloadSpec& s);

}  // namespace kaleido::sim
