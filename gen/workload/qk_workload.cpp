#include "workload/qk_workload.hpp"

#include "common/error.hpp"
#include "golden/gemm.hpp"
#include "golden/quant.hpp"
#include "workload/denoise.hpp"
#include "workload/latent.hpp"
#include "workload/models.hpp"
#include "workload/qkv.hpp"
#include "workload/video.hpp"

namespace kaleido::workload {

void QkWorkloadSpec::validate() const {
  if (grid.t < 1 || grid.h < 1 || grid.w < 1) throw ConfigError("grid", "", "T, H and W must be at least 1");
  if (proxy != "raw" && proxy != "denoised") throw ConfigError("proxy", proxy, "must be raw or denoised");
  if (data_w < 4 || data_w > 16) throw ConfigError("data-w", std::to_string(data_w), "must be 4 to 16");
  if (step < 0 || step > steps) throw ConfigError("step", std::to_string(step), "must be 0 to " + std::to_string(steps));
}

QkWorkload make_qk_workload(const QkWorkloadSpec& s) {
  s.validate();
  const ModelShape& model = find_model(s.model);
  LatentSpec ls{model.latent_channels, model.vae_t_stride, model.vae_s_stride};
  const int width = s.grid.w * model.patch_w * ls.s_stride, height = s.grid.h * model.patch_h * ls.s_stride;
  FrameSelection sel;
  sel.start = s.start_frame;
  sel.count = frames_for_latent(s.grid.t, ls.t_stride);
  const Video video = load_clip(s.clip, sel);
  const Latent lat = encode_latent(to_pixels(video, width, height), ls);
  FlowSchedule sched;
  sched.steps = s.steps;
  sched.shift = s.shift;
  const double sigma = sched.sigma(s.step);
  FloatMatrix x = add_noise(lat.x, sigma, s.noise_seed);
  std::string spectrum_from;
  if (s.proxy == "denoised") {
    // Never the spectrum of the latent being estimated: another clip, or other frames of the same one.
    FrameSelection other = sel;
    if (s.spectrum_clip == s.clip) other.start = s.start_frame + sel.count;
    const Latent sl = encode_latent(to_pixels(load_clip(s.spectrum_clip, other), width, height), ls);
    x = wiener_denoise(lat.grid, x, sigma, estimate_spectrum(sl.grid, sl.x, 1));
    spectrum_from = s.spectrum_clip + " frames " + std::to_string(other.start) + ".." +
                    std::to_string(other.start + other.count - 1);
  }
  ProjectionSpec proj;  // the study's defaults (docs/study.md)
  proj.seed = static_cast<uint64_t>(s.head) + 1;
  proj.qk_align = 0.5;
  proj.pos_bias = 1.0;
  proj.qk_gain = 1.5;
  const AttentionInputs in = project_head(patchify(lat.grid, x, model.patch_h, model.patch_w), model, proj);
  if (in.grid.t != s.grid.t || in.grid.h != s.grid.h || in.grid.w != s.grid.w)
    throw InternalError("make_qk_workload: token grid differs from the requested one");

  FloatMatrix kt(in.k.cols, in.k.rows);
  for (int64_t i = 0; i < in.k.rows; ++i)
    for (int64_t c = 0; c < in.k.cols; ++c) kt.at(c, i) = in.k.at(i, c);
  const Quantized qa = quantize(in.q, s.data_w), qb = quantize(kt, s.data_w);
  QkWorkload w;
  w.a = qa.q;
  w.b = qb.q;
  w.a_scale = qa.scale;
  w.b_scale = qb.scale;
  // Float Q K^T against the dequantised integer product.
  const WideMatrix prod = gemm_exact(w.a, w.b);
  FloatMatrix exact(in.q.rows, kt.cols), approx(in.q.rows, kt.cols);
  for (int64_t i = 0; i < in.q.rows; ++i)
    for (int64_t j = 0; j < kt.cols; ++j) {
      double acc = 0.0;
      for (int64_t c = 0; c < in.q.cols; ++c) acc += static_cast<double>(in.q.at(i, c)) * in.k.at(j, c);
      exact.at(i, j) = static_cast<float>(acc);
      approx.at(i, j) = static_cast<float>(static_cast<double>(prod.at(i, j)) * qa.scale * qb.scale);
    }
  w.quantisation = compare(approx, exact);
  w.description = {{"kind", "qk"},
                   {"what", "S = Q K^T of one attention head, A = Q, B = K^T"},
                   {"model", model.title},
                   {"head", s.head},
                   {"head_dim", model.head_dim},
                   {"rope_band", {model.rope_band[0], model.rope_band[1], model.rope_band[2]}},
                   {"clip", video.source.empty() ? s.clip : video.source},
                   {"frames", sel.count},
                   {"start_frame", s.start_frame},
                   {"pixels", std::to_string(width) + "x" + std::to_string(height)},
                   {"token_grid", {s.grid.t, s.grid.h, s.grid.w}},
                   {"proxy", s.proxy},
                   {"spectrum_from", spectrum_from},
                   {"diffusion_step", s.step},
                   {"steps", s.steps},
                   {"shift", s.shift},
                   {"sigma", sigma},
                   {"inputs", in.source + "; latent: 4x8x8 DCT-II proxy encoder, global scaling (no VAE or model "
                                          "weights are available here)"},
                   {"data_w", s.data_w},
                   {"a_scale", qa.scale},
                   {"b_scale", qb.scale},
                   {"quantisation_quality", quality_json(w.quantisation)}};
  return w;
}

}  // namespace kaleido::workload
