#include "workload/latent.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "common/error.hpp"
#include "golden/random.hpp"

namespace kaleido::workload {

namespace {

// Area-average resampling weights from a source interval [x0, x0 + len) of a
// line of n samples onto m output samples: output k covers
// [x0 + k len/m, x0 + (k+1) len/m), each source sample weighted by overlap.
struct Taps {
  std::vector<int> start;
  std::vector<std::vector<float>> w;
};

Taps area_taps(double x0, double len, int n, int m) {
  Taps t;
  const double step = len / m;
  for (int k = 0; k < m; ++k) {
    double a = x0 + k * step, b = a + step;
    // Upsampling (step < 1) still covers at least the sample under the centre.
    if (b - a < 1.0) {
      const double c = (a + b) / 2.0;
      a = std::floor(c);
      b = a + 1.0;
    }
    const int i0 = std::clamp(static_cast<int>(std::floor(a)), 0, n - 1);
    const int i1 = std::clamp(static_cast<int>(std::ceil(b)) - 1, i0, n - 1);
    std::vector<float> w;
    double sum = 0.0;
    for (int i = i0; i <= i1; ++i) {
      const double ov = std::min(b, i + 1.0) - std::max(a, static_cast<double>(i));
      w.push_back(static_cast<float>(std::max(0.0, ov)));
      sum += std::max(0.0, ov);
    }
    for (auto& x : w) x = static_cast<float>(x / (sum > 0 ? sum : 1.0));
    t.start.push_back(i0);
    t.w.push_back(std::move(w));
  }
  return t;
}

// Resamples the crop [cx, cx+cw) x [cy, cy+ch) of an 8-bit plane (sw x sh) to
// ow x oh floats in [-1, 1].
std::vector<float> resample(const std::vector<uint8_t>& src, int sw, int sh, double cx, double cy, double cw, double ch,
                            int ow, int oh) {
  const Taps tx = area_taps(cx, cw, sw, ow), ty = area_taps(cy, ch, sh, oh);
  std::vector<float> rows(static_cast<size_t>(sh) * static_cast<size_t>(ow));
  for (int y = 0; y < sh; ++y)
    for (int x = 0; x < ow; ++x) {
      float s = 0.0f;
      const auto& w = tx.w[static_cast<size_t>(x)];
      for (size_t k = 0; k < w.size(); ++k)
        s += w[k] * src[static_cast<size_t>(y * sw + tx.start[static_cast<size_t>(x)] + static_cast<int>(k))];
      rows[static_cast<size_t>(y * ow + x)] = s;
    }
  std::vector<float> out(static_cast<size_t>(ow) * static_cast<size_t>(oh));
  for (int y = 0; y < oh; ++y) {
    const auto& w = ty.w[static_cast<size_t>(y)];
    for (int x = 0; x < ow; ++x) {
      float s = 0.0f;
      for (size_t k = 0; k < w.size(); ++k)
        s += w[k] * rows[static_cast<size_t>((ty.start[static_cast<size_t>(y)] + static_cast<int>(k)) * ow + x)];
      out[static_cast<size_t>(y * ow + x)] = s / 127.5f - 1.0f;
    }
  }
  return out;
}

double dct_basis(int k, int n, int len) {
  const double a = k == 0 ? std::sqrt(1.0 / len) : std::sqrt(2.0 / len);
  return a * std::cos(M_PI * (2.0 * n + 1.0) * k / (2.0 * len));
}

}  // namespace

PixelClip to_pixels(const Video& v, int width, int height) {
  if (width <= 0 || height <= 0) throw ConfigError("resolution", std::to_string(height) + "x" + std::to_string(width), "must be positive");
  PixelClip p;
  p.width = width;
  p.height = height;
  // Centre crop of the largest source rectangle with the target's aspect.
  const double sa = static_cast<double>(v.width) / v.height, ta = static_cast<double>(width) / height;
  double cw = v.width, ch = v.height;
  if (sa > ta)
    cw = v.height * ta;
  else
    ch = v.width / ta;
  const double cx = (v.width - cw) / 2.0, cy = (v.height - ch) / 2.0;
  const double fx = static_cast<double>(v.chroma_w()) / v.width, fy = static_cast<double>(v.chroma_h()) / v.height;
  for (const VideoFrame& f : v.frames) {
    std::array<std::vector<float>, 3> planes;
    planes[0] = resample(f.y, v.width, v.height, cx, cy, cw, ch, width, height);
    if (v.chroma == Chroma::Mono) {
      planes[1].assign(planes[0].size(), 0.0f);
      planes[2].assign(planes[0].size(), 0.0f);
    } else {
      planes[1] = resample(f.u, v.chroma_w(), v.chroma_h(), cx * fx, cy * fy, cw * fx, ch * fy, width, height);
      planes[2] = resample(f.v, v.chroma_w(), v.chroma_h(), cx * fx, cy * fy, cw * fx, ch * fy, width, height);
    }
    p.frames.push_back(std::move(planes));
  }
  return p;
}

std::vector<DctCoefficient> latent_basis(int channels, int t_stride, int s_stride) {
  std::vector<std::tuple<int, int, int, int, int>> all;  // key, plane, ft, fy, fx
  for (int p = 0; p < 3; ++p)
    for (int ft = 0; ft < t_stride; ++ft)
      for (int fy = 0; fy < s_stride; ++fy)
        for (int fx = 0; fx < s_stride; ++fx) all.emplace_back(ft + fy + fx + (p > 0 ? 1 : 0), p, ft, fy, fx);
  if (channels < 1 || channels > static_cast<int>(all.size()))
    throw ConfigError("latent channels", std::to_string(channels), "must be 1 to " + std::to_string(all.size()));
  std::sort(all.begin(), all.end());
  std::vector<DctCoefficient> out;
  for (int c = 0; c < channels; ++c) {
    const auto& [key, p, ft, fy, fx] = all[static_cast<size_t>(c)];
    (void)key;
    out.push_back({p, ft, fy, fx});
  }
  return out;
}

Latent encode_latent(const PixelClip& clip, const LatentSpec& spec) {
  if (spec.t_stride < 1 || spec.s_stride < 1) throw ConfigError("latent strides", "", "must be at least 1");
  const int F = static_cast<int>(clip.frames.size());
  if (F < 1 || (F - 1) % spec.t_stride != 0)
    throw ConfigError("frames", std::to_string(F), "must be " + std::to_string(spec.t_stride) + "(T-1)+1 for T latent frames");
  if (clip.width % spec.s_stride || clip.height % spec.s_stride)
    throw ConfigError("resolution", std::to_string(clip.height) + "x" + std::to_string(clip.width),
                      "must be a multiple of the VAE stride " + std::to_string(spec.s_stride));
  const std::vector<DctCoefficient> basis = latent_basis(spec.channels, spec.t_stride, spec.s_stride);
  const int S = spec.s_stride, Tt = spec.t_stride;
  Latent lat;
  lat.grid = {1 + (F - 1) / Tt, clip.height / S, clip.width / S};
  const int C = spec.channels;
  lat.x = FloatMatrix(lat.grid.tokens(), C);
  // Separable basis tables: bt[ft][n], bs[f][n].
  std::vector<std::vector<double>> bt(static_cast<size_t>(Tt), std::vector<double>(static_cast<size_t>(Tt)));
  std::vector<std::vector<double>> bs(static_cast<size_t>(S), std::vector<double>(static_cast<size_t>(S)));
  for (int k = 0; k < Tt; ++k)
    for (int n = 0; n < Tt; ++n) bt[static_cast<size_t>(k)][static_cast<size_t>(n)] = dct_basis(k, n, Tt);
  for (int k = 0; k < S; ++k)
    for (int n = 0; n < S; ++n) bs[static_cast<size_t>(k)][static_cast<size_t>(n)] = dct_basis(k, n, S);
  const int W = clip.width;
  for (int t = 0; t < lat.grid.t; ++t) {
    int frame_of[64];
    for (int n = 0; n < Tt; ++n) frame_of[n] = t == 0 ? 0 : Tt * (t - 1) + 1 + n;
    for (int h = 0; h < lat.grid.h; ++h)
      for (int w = 0; w < lat.grid.w; ++w) {
        float* out = lat.x.row(lat.grid.index(t, h, w));
        for (int c = 0; c < C; ++c) {
          const DctCoefficient& b = basis[static_cast<size_t>(c)];
          double acc = 0.0;
          for (int n = 0; n < Tt; ++n) {
            const std::vector<float>& plane = clip.frames[static_cast<size_t>(frame_of[n])][static_cast<size_t>(b.plane)];
            double fr = 0.0;
            for (int y = 0; y < S; ++y) {
              const float* row = plane.data() + static_cast<size_t>((h * S + y) * W + w * S);
              double r = 0.0;
              for (int x = 0; x < S; ++x) r += bs[static_cast<size_t>(b.fx)][static_cast<size_t>(x)] * row[x];
              fr += bs[static_cast<size_t>(b.fy)][static_cast<size_t>(y)] * r;
            }
            acc += bt[static_cast<size_t>(b.ft)][static_cast<size_t>(n)] * fr;
          }
          out[c] = static_cast<float>(acc);
        }
      }
  }
  if (spec.scaling == LatentScaling::None) return lat;
  // Means removed per channel; one global factor (Global) or one per channel (PerChannel; a constant channel
  // becomes zero).
  std::vector<double> mean(static_cast<size_t>(C)), var(static_cast<size_t>(C));
  for (int c = 0; c < C; ++c) {
    double s = 0.0, s2 = 0.0;
    for (int64_t i = 0; i < lat.x.rows; ++i) {
      const double v = lat.x.at(i, c);
      s += v;
      s2 += v * v;
    }
    const double n = static_cast<double>(lat.x.rows);
    mean[static_cast<size_t>(c)] = s / n;
    var[static_cast<size_t>(c)] = std::max(0.0, s2 / n - (s / n) * (s / n));
  }
  double mean_var = 0.0;
  for (double v : var) mean_var += v / C;
  for (int c = 0; c < C; ++c) {
    const double v = spec.scaling == LatentScaling::Global ? mean_var : var[static_cast<size_t>(c)];
    const double inv = v > 1e-12 ? 1.0 / std::sqrt(v) : 0.0;
    for (int64_t i = 0; i < lat.x.rows; ++i)
      lat.x.at(i, c) = static_cast<float>((lat.x.at(i, c) - mean[static_cast<size_t>(c)]) * inv);
  }
  return lat;
}

LatentScaling parse_latent_scaling(const std::string& s) {
  if (s == "none") return LatentScaling::None;
  if (s == "global") return LatentScaling::Global;
  if (s == "per-channel") return LatentScaling::PerChannel;
  throw ConfigError("latent-scaling", s, "must be global, per-channel or none");
}

const char* scaling_name(LatentScaling s) {
  switch (s) {
    case LatentScaling::None: return "none";
    case LatentScaling::Global: return "global";
    case LatentScaling::PerChannel: return "per-channel";
  }
  return "?";
}

double neighbour_correlation(const Grid& g, const FloatMatrix& x, int axis) {
  if (x.rows != g.tokens() || axis < 0 || axis > 2) throw InternalError("neighbour_correlation: bad grid or axis");
  const int64_t C = x.cols;
  std::vector<double> mean(static_cast<size_t>(C), 0.0);
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t c = 0; c < C; ++c) mean[static_cast<size_t>(c)] += x.at(i, c) / static_cast<double>(x.rows);
  double cov = 0.0, var = 0.0;
  for (int t = 0; t < g.t; ++t)
    for (int h = 0; h < g.h; ++h)
      for (int w = 0; w < g.w; ++w) {
        const int nt = t + (axis == 0), nh = h + (axis == 1), nw = w + (axis == 2);
        if (nt >= g.t || nh >= g.h || nw >= g.w) continue;
        const float* a = x.row(g.index(t, h, w));
        const float* b = x.row(g.index(nt, nh, nw));
        for (int64_t c = 0; c < C; ++c) {
          const double da = a[c] - mean[static_cast<size_t>(c)], db = b[c] - mean[static_cast<size_t>(c)];
          cov += da * db;
          var += 0.5 * (da * da + db * db);
        }
      }
  return var > 0.0 ? cov / var : 0.0;
}

void FlowSchedule::validate() const {
  if (steps < 1) throw ConfigError("num-steps", std::to_string(steps), "must be at least 1");
  if (!(shift > 0.0)) throw ConfigError("shift", std::to_string(shift), "must be positive");
}

double FlowSchedule::sigma(int step) const {
  validate();
  if (step < 0 || step > steps) throw ConfigError("step", std::to_string(step), "must be 0 to " + std::to_string(steps));
  const double t = 1.0 - static_cast<double>(step) / steps;
  return shift * t / (1.0 + (shift - 1.0) * t);
}

FloatMatrix add_noise(const FloatMatrix& x0, double sigma, uint64_t seed) {
  if (!(sigma >= 0.0 && sigma <= 1.0)) throw ConfigError("sigma", std::to_string(sigma), "must be in [0, 1]");
  FloatMatrix x = x0;
  Rng rng(seed);
  for (auto& v : x.data) v = static_cast<float>((1.0 - sigma) * v + sigma * rng.normal());
  return x;
}

Tokens patchify(const Grid& g, const FloatMatrix& x, int ph, int pw) {
  if (ph < 1 || pw < 1 || g.h % ph || g.w % pw)
    throw ConfigError("patch", std::to_string(ph) + "x" + std::to_string(pw),
                      "must divide the latent grid " + std::to_string(g.h) + "x" + std::to_string(g.w));
  if (x.rows != g.tokens()) throw InternalError("patchify: latent rows do not match its grid");
  Tokens tk;
  tk.grid = {g.t, g.h / ph, g.w / pw};
  const int64_t C = x.cols, P = static_cast<int64_t>(ph) * pw;
  tk.f = FloatMatrix(tk.grid.tokens(), C * P);
  for (int t = 0; t < tk.grid.t; ++t)
    for (int h = 0; h < tk.grid.h; ++h)
      for (int w = 0; w < tk.grid.w; ++w) {
        float* out = tk.f.row(tk.grid.index(t, h, w));
        for (int dy = 0; dy < ph; ++dy)
          for (int dx = 0; dx < pw; ++dx) {
            const float* in = x.row(g.index(t, h * ph + dy, w * pw + dx));
            for (int64_t c = 0; c < C; ++c) out[c * P + dy * pw + dx] = in[c];
          }
      }
  return tk;
}

}  // namespace kaleido::workload
