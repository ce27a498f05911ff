// Seeded synthetic workloads: latent-like token grids with controllable
// spatial and temporal correlation and a diffusion noise level.
//
// Per channel, a frame is a separable AR(1) field (coefficient rho_s along w,
// then along h; unit variance); frame t = rho_t * frame(t-1) +
// sqrt(1 - rho_t^2) * new field. Then diffusion noise of level sigma in
// [0, 1] as rectified flow: x = (1 - sigma) * x0 + sigma * eps. Columns
// [0, static_w) keep frame 0 at every t (a static background), noise included.
#pragma once

#include <cstdint>

#include <nlohmann/json_fwd.hpp>

#include "golden/types.hpp"

namespace kaleido {

struct SyntheticSpec {
  Grid grid{2, 4, 4};
  int channels = 16;
  uint64_t seed = 1;
  double spatial_corr = 0.9;   // rho_s in [0, 1)
  double temporal_corr = 0.95; // rho_t in [0, 1]
  double noise = 0.0;          // sigma in [0, 1]
  int static_w = 0;            // columns of static background
  void validate() const;
};

FloatMatrix make_latent(const SyntheticSpec& spec);

// Weights for B (K x M): uniform signed integers of `bits` bits, seeded.
IntMatrix make_int_weights(int rows, int cols, int bits, uint64_t seed);
// Uniform random signed integers of `bits` bits (any shape), seeded.
IntMatrix make_int_uniform(int64_t rows, int64_t cols, int bits, uint64_t seed);
// Gaussian float weights with standard deviation 1/sqrt(rows).
FloatMatrix make_float_weights(int rows, int cols, uint64_t seed);

void to_json(nlohmann::json& j, const SyntheticSpec& s);
void from_json(const nlohmann::json& j, SyntheticSpec& s);

}  // namespace kaleido
