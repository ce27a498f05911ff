// Attention inputs of one head: Q, K, V (N x d, token-major on the token
// grid), with Q and K rotated by the model's 3D RoPE.
//
// Proxy (no model weights are available offline): the DiT token features f
// (4C values per token, workload/latent.hpp) go through fixed seeded Gaussian
// projections, f -> f W (W has 4C x d entries of variance 1/(4C)). Q and K
// are RMS-normalised per token, as Wan2.1, HunyuanVideo and CogVideoX
// normalise q and k before RoPE, then rotated. W_k = a W_q + sqrt(1 - a^2) W'
// with the "q-k alignment" a: a = 0 gives unrelated Q and K (diffuse
// attention), a = 1 makes each token attend most to tokens of similar content
// nearby. Positional locality comes from a shared bias: q and k both get
// b * u (u a seeded unit-variance vector, b the "positional bias"), as the
// biases of real q/k projections do; RoPE turns the shared component into a
// score that peaks at zero relative position and falls with distance along
// each axis. After RMS normalisation q and k are scaled by the gain g (the
// learned RMSNorm weight of real models), which sets the softmax temperature.
// Real activations can replace all of this (load_npy_head).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "golden/types.hpp"
#include "workload/latent.hpp"
#include "workload/models.hpp"
#include "workload/rope.hpp"

namespace kaleido::workload {

struct AttentionInputs {
  Grid grid;
  int head_dim = 0;
  FloatMatrix q, k, v;  // N x head_dim; q and k after RoPE
  Rope3d rope;
  std::string source;   // how they were made, for reports
};

struct ProjectionSpec {
  uint64_t seed = 1;      // the head's weights
  double qk_align = 0.5;  // a in [0, 1]
  double pos_bias = 0.0;  // b >= 0
  double qk_gain = 1.0;   // g > 0: the q/k RMSNorm weight, sets how sharp softmax is
  bool qk_norm = true;
  void validate() const;
};

Rope3d model_rope(const ModelShape& m);

AttentionInputs project_head(const Tokens& tokens, const ModelShape& m, const ProjectionSpec& spec);

// Real activations from .npy files: shape (N, d) or (heads, N, d) (then
// `head` picks one), N = grid tokens in raster order (t, h, w), d the model's
// head dim. `rope_applied`: the dump was taken after RoPE (else it is applied here).
AttentionInputs load_npy_head(const std::string& q_path, const std::string& k_path, const std::string& v_path,
                              const Grid& grid, const ModelShape& m, int head, bool rope_applied);

}  // namespace kaleido::workload
