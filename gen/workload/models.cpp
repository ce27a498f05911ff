#include "workload/models.hpp"

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace kaleido::workload {

const std::vector<ModelShape>& model_shapes() {
  static const std::vector<ModelShape> shapes = [] {
    std::vector<ModelShape> v;
    ModelShape wan13;
    wan13.name = "wan2.1-1.3b";
    wan13.title = "Wan2.1-1.3B";
    wan13.hidden = 1536;
    wan13.heads = 12;
    wan13.head_dim = 128;
    wan13.layers = 30;
    wan13.ffn = 8960;
    wan13.rope_band = {44, 42, 42};
    wan13.rope_theta = 10000.0;
    wan13.band_preset = "wan2.1";
    wan13.frames = 81;
    wan13.resolutions = {{"480p", 480, 832, true}, {"720p", 720, 1280, false}};
    wan13.notes = "Wan2.1 t2v-1.3B config; 720p is not a released resolution of the 1.3B model";
    v.push_back(wan13);

    ModelShape wan14 = wan13;
    wan14.name = "wan2.1-14b";
    wan14.title = "Wan2.1-14B";
    wan14.hidden = 5120;
    wan14.heads = 40;
    wan14.layers = 40;
    wan14.ffn = 13824;
    wan14.resolutions = {{"480p", 480, 832, true}, {"720p", 720, 1280, true}};
    wan14.notes = "Wan2.1 t2v-14B config";
    v.push_back(wan14);

    ModelShape hy;
    hy.name = "hunyuanvideo";
    hy.title = "HunyuanVideo";
    hy.hidden = 3072;
    hy.heads = 24;
    hy.head_dim = 128;
    hy.layers = 60;  // 20 dual-stream + 40 single-stream blocks
    hy.ffn = 12288;  // mlp_width_ratio 4
    hy.rope_band = {16, 56, 56};
    hy.rope_theta = 256.0;
    hy.band_preset = "hunyuan";
    hy.frames = 129;
    hy.resolutions = {{"480p", 480, 848, false}, {"544p", 544, 960, true}, {"720p", 720, 1280, true}};
    hy.notes = "HunyuanVideo-T2V-13B; 20 dual-stream and 40 single-stream blocks; 480p is not a released resolution";
    v.push_back(hy);

    ModelShape cog;
    cog.name = "cogvideox-5b";
    cog.title = "CogVideoX-5B";
    cog.hidden = 3072;
    cog.heads = 48;
    cog.head_dim = 64;
    cog.layers = 42;
    cog.ffn = 12288;
    cog.rope_band = {16, 24, 24};
    cog.rope_theta = 10000.0;
    cog.band_preset = "cogvideox";
    cog.frames = 49;
    cog.resolutions = {{"480p", 480, 720, true}, {"720p", 720, 1280, false}};
    cog.notes = "CogVideoX-5B (diffusers config); 720p is not a released resolution (CogVideoX1.5 is)";
    v.push_back(cog);
    return v;
  }();
  return shapes;
}

const ModelShape& find_model(const std::string& name) {
  std::string known;
  for (const ModelShape& m : model_shapes()) {
    if (m.name == name) return m;
    known += (known.empty() ? "" : ", ") + m.name;
  }
  throw ConfigError("model", name, "must be one of " + known);
}

Resolution parse_resolution(const ModelShape& m, const std::string& spec) {
  for (const Resolution& r : m.resolutions)
    if (r.name == spec) return r;
  const auto x = spec.find('x');
  if (x != std::string::npos) {
    char* e1 = nullptr;
    char* e2 = nullptr;
    const std::string hs = spec.substr(0, x), ws = spec.substr(x + 1);
    const long h = std::strtol(hs.c_str(), &e1, 10), w = std::strtol(ws.c_str(), &e2, 10);
    const int cell = m.vae_s_stride * m.patch_h;
    if (!hs.empty() && !ws.empty() && *e1 == '\0' && *e2 == '\0' && h > 0 && w > 0) {
      if (h % cell || w % cell)
        throw ConfigError("resolution", spec, "height and width must be multiples of " + std::to_string(cell) +
                                                  " (VAE stride x patch size)");
      return {spec, static_cast<int>(h), static_cast<int>(w), false};
    }
  }
  std::string names;
  for (const Resolution& r : m.resolutions) names += r.name + ", ";
  throw ConfigError("resolution", spec, "must be " + names + "or HxW in pixels");
}

Grid token_grid(const ModelShape& m, const Resolution& res, int frames) {
  if (frames < 1 || (frames - 1) % m.vae_t_stride)
    throw ConfigError("frames", std::to_string(frames),
                      "must be " + std::to_string(m.vae_t_stride) + "k+1 (the VAE's causal temporal stride)");
  return {1 + (frames - 1) / m.vae_t_stride, res.height / (m.vae_s_stride * m.patch_h),
          res.width / (m.vae_s_stride * m.patch_w)};
}

nlohmann::json to_json(const ModelShape& m) {
  nlohmann::json res = nlohmann::json::array();
  for (const Resolution& r : m.resolutions) {
    const Grid g = token_grid(m, r, m.frames);
    res.push_back({{"name", r.name},
                   {"pixels", std::to_string(r.height) + "x" + std::to_string(r.width)},
                   {"native", r.native},
                   {"tokens", {g.t, g.h, g.w}},
                   {"token_count", g.tokens()}});
  }
  return {{"name", m.name},         {"title", m.title},          {"hidden", m.hidden},
          {"heads", m.heads},       {"head_dim", m.head_dim},    {"layers", m.layers},
          {"ffn", m.ffn},           {"rope_band", m.rope_band},  {"rope_theta", m.rope_theta},
          {"vae_strides", {m.vae_t_stride, m.vae_s_stride, m.vae_s_stride}},
          {"latent_channels", m.latent_channels}, {"patch", {1, m.patch_h, m.patch_w}},
          {"frames", m.frames},     {"resolutions", res},        {"notes", m.notes}};
}

}  // namespace kaleido::workload
