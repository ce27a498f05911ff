// Shapes of real video DiTs, as data: what the study needs to build
// attention inputs of the right size with the model's own 3D RoPE.
// Sources: the models' public configuration files (Wan2.1 wan/configs,
// HunyuanVideo hyvideo/config.py and its README, diffusers'
// CogVideoXTransformer3DModel for CogVideoX-5B). No weights are used.
#pragma once

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "golden/types.hpp"

namespace kaleido::workload {

struct Resolution {
  std::string name;  // "480p"
  int height = 0;    // pixels
  int width = 0;
  bool native = true;  // a resolution the model was released for
};

struct ModelShape {
  std::string name;   // CLI name, e.g. "wan2.1-1.3b"
  std::string title;  // e.g. "Wan2.1-1.3B"
  int hidden = 0;
  int heads = 0;
  int head_dim = 0;
  int layers = 0;
  int ffn = 0;
  std::array<int, 3> rope_band{};  // channels of the t, h, w bands of a head
  double rope_theta = 10000.0;
  std::string band_preset;  // golden's parse_band_split name
  int vae_t_stride = 4;
  int vae_s_stride = 8;
  int latent_channels = 16;
  int patch_h = 2;
  int patch_w = 2;
  int frames = 81;  // pixel frames of a default clip
  std::vector<Resolution> resolutions;
  std::string notes;
};

const std::vector<ModelShape>& model_shapes();
// Throws ConfigError listing the known names.
const ModelShape& find_model(const std::string& name);

// "480p", "720p" (from the model's table) or an explicit "HxW" in pixels.
Resolution parse_resolution(const ModelShape& m, const std::string& spec);

// Token grid of a clip of `frames` pixel frames at `res`.
Grid token_grid(const ModelShape& m, const Resolution& res, int frames);

nlohmann::json to_json(const ModelShape& m);

}  // namespace kaleido::workload
