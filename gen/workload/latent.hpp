// Latent-like tensors from real frames (DESIGN.md section 4).
//
// No VAE weights are available offline, so the "encoder" is a fixed,
// documented transform with the strides of the vDiT VAEs:
//  1. Frames are centre-cropped to the model's aspect ratio and resampled
//     (area average) to its pixel size; Y, U, V become floats in [-1, 1],
//     chroma resampled to full resolution.
//  2. Causal temporal grouping as in the Wan/Hunyuan/CogVideoX VAEs: latent
//     frame 0 is pixel frame 0 alone (repeated 4 times), latent frame t >= 1
//     covers pixel frames 4t-3 .. 4t. So F = 4(T-1) + 1 frames give T latent frames.
//  3. Each 4 x 8 x 8 block of each plane goes through an orthonormal 3D
//     DCT-II; the C lowest-frequency coefficients are the C channels, taken in
//     the order of the key (ft + fy + fx + [plane is U or V], plane, ft, fy, fx).
//     For C = 16 that is Y: 12 coefficients of total frequency <= 2, U: DC and
//     the three first AC, V: DC and the temporal first AC (latent_basis()).
//  4. Scaling (LatentScaling): by default each channel's mean over the clip is
//     removed and ONE global factor brings the mean channel variance to 1, so
//     the latent keeps the image's spectrum (low frequencies carry most
//     energy) as a VAE latent does. Z-scoring each channel (PerChannel, the
//     v1 proxy) whitens it: most AC channels become near-white high-pass
//     signals and neighbouring tokens look far less alike than in a VAE latent.
//  5. Diffusion noise of a step, rectified flow: x_s = (1 - sigma_s) x_0 + sigma_s eps.
//  6. The DiT patchifies 1 x 2 x 2 latent cells into one token of 4C features
//     (feature index = c * 4 + dy * 2 + dx).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "golden/types.hpp"
#include "workload/video.hpp"

namespace kaleido::workload {

// Frames as float planes Y, U, V in [-1, 1], all at width x height.
struct PixelClip {
  int width = 0;
  int height = 0;
  std::vector<std::array<std::vector<float>, 3>> frames;
};

// Centre crop to the target aspect ratio, then area resampling.
PixelClip to_pixels(const Video& v, int width, int height);

enum class LatentScaling { None, Global, PerChannel };
LatentScaling parse_latent_scaling(const std::string& s);  // "none", "global", "per-channel"
const char* scaling_name(LatentScaling s);

struct LatentSpec {
  int channels = 16;  // C
  int t_stride = 4;   // pixel frames per latent frame (frame 0 alone)
  int s_stride = 8;   // pixels per latent cell along h and w
  LatentScaling scaling = LatentScaling::Global;  // step 4
};

struct DctCoefficient {
  int plane = 0;  // 0 Y, 1 U, 2 V
  int ft = 0, fy = 0, fx = 0;
};
// The coefficients that become the C channels, in channel order.
std::vector<DctCoefficient> latent_basis(int channels, int t_stride, int s_stride);

// Latent: grid T x H x W cells (token order of golden/types.hpp), C channels.
struct Latent {
  Grid grid;
  FloatMatrix x;  // grid.tokens() x C
};

// Pixel frames needed for t latent frames.
inline int frames_for_latent(int t_latent, int t_stride) { return t_stride * (t_latent - 1) + 1; }

// Neighbour correlation along an axis (0 t, 1 h, 2 w), pooled over channels
// by energy: sum_c cov_c(x_i, x_next(i)) / sum_c var_c, over all pairs of
// adjacent cells, with each channel's mean removed. 1 for a constant field
// along the axis, about 0 for white noise.
double neighbour_correlation(const Grid& grid, const FloatMatrix& x, int axis);

// Steps 2-4 above. Needs 4(T-1)+1 frames and sizes divisible by s_stride.
Latent encode_latent(const PixelClip& clip, const LatentSpec& spec);

// Flow-matching sampling schedule of Wan2.1 (and HunyuanVideo): steps
// k = 0 .. steps-1 at t_k = 1 - k / steps, shifted sigma = shift t / (1 + (shift - 1) t).
struct FlowSchedule {
  int steps = 50;
  double shift = 5.0;
  double sigma(int step) const;
  double progress(int step) const { return static_cast<double>(step) / steps; }  // 0 at the first step
  void validate() const;
};

// x_s = (1 - sigma) x0 + sigma eps, eps standard normal from `seed`.
FloatMatrix add_noise(const FloatMatrix& x0, double sigma, uint64_t seed);

// DiT patch embedding input: 1 x ph x pw latent cells per token.
struct Tokens {
  Grid grid;
  FloatMatrix f;  // tokens x (C * ph * pw)
};
Tokens patchify(const Grid& latent_grid, const FloatMatrix& x, int ph = 2, int pw = 2);

}  // namespace kaleido::workload
