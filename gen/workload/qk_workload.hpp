// The main job's attention GEMM: S = Q K^T of one head of a real model shape
// (Wan2.1-1.3B by default: head dim K = 128), Q and K from the study's proxy
// on a real clip at a late diffusion step, quantised to DATA_W, as the
// hardware's operands A = Q (tokens x 128, token-major on the grid) and
// B = K^T (128 x tokens, so M = the number of keys).
//
// The pixel size follows the token grid (16 x 16 pixels per token: the VAE's
// 8 x 8 cells and the DiT's 2 x 2 patch), the whole frame resampled, no crop.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "golden/metrics.hpp"
#include "golden/types.hpp"

namespace kaleido::workload {

struct QkWorkloadSpec {
  std::string clip = "cockatoo";  // a name load_clip knows, or a path
  Grid grid{2, 8, 8};             // token grid T x H x W
  std::string model = "wan2.1-1.3b";
  std::string proxy = "denoised";  // "denoised" (Wiener estimate of the clean latent) or "raw" (x_t)
  // The denoised proxy's spectrum: this clip; when it is the evaluated clip, the frames after the evaluated ones.
  std::string spectrum_clip = "cockatoo";
  int step = 47;                  // of `steps`: sigma 0.24 with shift 5 (a late step, sigma <= 0.3)
  int steps = 50;
  double shift = 5.0;
  int data_w = 8;
  int head = 0;                   // seeds the head's projections
  uint64_t noise_seed = 7;
  int start_frame = 0;
  void validate() const;
};

struct QkWorkload {
  IntMatrix a;  // Q, quantised: N x head_dim
  IntMatrix b;  // K^T, quantised: head_dim x N
  double a_scale = 1.0, b_scale = 1.0;
  Quality quantisation;  // (a_scale b_scale) A.B against the float Q K^T
  nlohmann::json description;
};

QkWorkload make_qk_workload(const QkWorkloadSpec& spec);

}  // namespace kaleido::workload
