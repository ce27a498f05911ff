#include "sim/clip_workload.hpp"

#include "common/error.hpp"
#include "golden/quant.hpp"
#include "golden/workload.hpp"
#include "workload/latent.hpp"
#include "workload/video.hpp"

namespace kaleido::sim {

ClipWorkload make_clip_workload(const ClipWorkloadSpec& s) {
  std::string path = s.clip;
  if (path == "cockatoo") {
    path = workload::find_cockatoo();
    if (path.empty()) throw Error("cockatoo.mp4 not found: install Debian's python3-imageio (scripts/setup.sh)");
  }
  workload::LatentSpec ls;
  ls.channels = s.channels;
  workload::FrameSelection sel;
  sel.start = s.start_frame;
  sel.count = workload::frames_for_latent(s.grid.t, ls.t_stride);
  const workload::Video video = workload::read_video(path, sel);
  const workload::PixelClip pixels = workload::to_pixels(video, s.grid.w * ls.s_stride, s.grid.h * ls.s_stride);
  const workload::Latent latent = workload::encode_latent(pixels, ls);
  workload::FlowSchedule sched;
  sched.steps = s.steps;
  sched.validate();
  if (s.step < 0 || s.step >= s.steps)
    throw ConfigError("step", std::to_string(s.step), "must be 0 to " + std::to_string(s.steps - 1));
  const double sigma = sched.sigma(s.step);
  const FloatMatrix noisy = workload::add_noise(latent.x, sigma, s.seed);
  const Quantized q = quantize(noisy, s.data_w);
  ClipWorkload w;
  w.a = q.q;
  w.b = make_int_uniform(s.channels, s.out_cols, s.data_w, s.seed + 1);
  w.description = {{"kind", "clip"},
                   {"clip", video.source.empty() ? path : video.source},
                   {"frames", sel.count},
                   {"start_frame", s.start_frame},
                   {"pixels", std::to_string(s.grid.w * ls.s_stride) + "x" + std::to_string(s.grid.h * ls.s_stride)},
                   {"latent", "study proxy encoder: 4x8x8 DCT-II, " + std::to_string(s.channels) +
                                  " channels (no VAE or model weights are available here)"},
                   {"diffusion_step", s.step},
                   {"steps", s.steps},
                   {"sigma", sigma},
                   {"a_scale", q.scale},
                   {"b", {{"kind", "uniform"}, {"seed", s.seed + 1}}}};
  return w;
}

}  // namespace kaleido::sim
