#include "workload/denoise.hpp"

#include <cmath>
#include <complex>

#include "common/error.hpp"

namespace kaleido::workload {

namespace {

using Cplx = std::complex<double>;

// In-place DFT of every line of a T x H x W complex field along one axis
// (0 t, 1 h, 2 w); inverse with the conjugate twiddles and a 1/L scale.
// Direct O(L^2) per line: the latent grids here are at most ~100 long.
void dft_axis(std::vector<Cplx>& f, const Grid& g, int axis, bool inverse) {
  const int L = axis == 0 ? g.t : axis == 1 ? g.h : g.w;
  if (L == 1) return;
  const int64_t stride = axis == 0 ? int64_t{g.h} * g.w : axis == 1 ? g.w : 1;
  std::vector<Cplx> tw(static_cast<size_t>(L)), line(static_cast<size_t>(L)), out(static_cast<size_t>(L));
  const double sign = inverse ? 1.0 : -1.0;
  for (int k = 0; k < L; ++k) tw[static_cast<size_t>(k)] = std::polar(1.0, sign * 2.0 * M_PI * k / L);
  const int64_t lines = g.tokens() / L;
  for (int64_t li = 0; li < lines; ++li) {
    // The line's first element: li enumerates the other two axes in raster order.
    int64_t base;
    if (axis == 2) base = li * g.w;
    else if (axis == 1) base = (li / g.w) * int64_t{g.h} * g.w + li % g.w;
    else base = li;
    for (int n = 0; n < L; ++n) line[static_cast<size_t>(n)] = f[static_cast<size_t>(base + n * stride)];
    for (int k = 0; k < L; ++k) {
      Cplx s = 0.0;
      for (int n = 0, j = 0; n < L; ++n, j = j + k >= L ? j + k - L : j + k)  // j = k n mod L
        s += line[static_cast<size_t>(n)] * tw[static_cast<size_t>(j)];
      out[static_cast<size_t>(k)] = inverse ? s / static_cast<double>(L) : s;
    }
    for (int k = 0; k < L; ++k) f[static_cast<size_t>(base + k * stride)] = out[static_cast<size_t>(k)];
  }
}

void dft3(std::vector<Cplx>& f, const Grid& g, bool inverse) {
  for (int axis = 0; axis < 3; ++axis) dft_axis(f, g, axis, inverse);
}

std::vector<Cplx> channel(const FloatMatrix& x, int c) {
  std::vector<Cplx> f(static_cast<size_t>(x.rows));
  for (int64_t i = 0; i < x.rows; ++i) f[static_cast<size_t>(i)] = x.at(i, c);
  return f;
}

}  // namespace

double wiener_gain(double power, double sigma) {
  const double a = 1.0 - sigma, den = a * a * power + sigma * sigma;
  return den > 0.0 ? a * power / den : 1.0;  // sigma = 0 and no power: pass through
}

LatentSpectrum estimate_spectrum(const Grid& g, const FloatMatrix& x, int r) {
  if (x.rows != g.tokens()) throw InternalError("estimate_spectrum: rows do not match the grid");
  if (r < 0) throw ConfigError("spectrum smoothing", std::to_string(r), "must be >= 0");
  LatentSpectrum s;
  s.grid = g;
  s.channels = static_cast<int>(x.cols);
  const int64_t N = g.tokens();
  s.power.assign(static_cast<size_t>(N * x.cols), 0.0);
  std::vector<double> raw(static_cast<size_t>(N));
  for (int c = 0; c < s.channels; ++c) {
    std::vector<Cplx> f = channel(x, c);
    dft3(f, g, false);
    for (int64_t i = 0; i < N; ++i) raw[static_cast<size_t>(i)] = std::norm(f[static_cast<size_t>(i)]) / static_cast<double>(N);
    const int rt = std::min(r, (g.t - 1) / 2), rh = std::min(r, (g.h - 1) / 2), rw = std::min(r, (g.w - 1) / 2);
    for (int t = 0; t < g.t; ++t)
      for (int h = 0; h < g.h; ++h)
        for (int w = 0; w < g.w; ++w) {
          double acc = 0.0;
          int n = 0;
          for (int dt = -rt; dt <= rt; ++dt)
            for (int dh = -rh; dh <= rh; ++dh)
              for (int dw = -rw; dw <= rw; ++dw) {
                acc += raw[static_cast<size_t>(g.index((t + dt + g.t) % g.t, (h + dh + g.h) % g.h, (w + dw + g.w) % g.w))];
                ++n;
              }
          s.power[static_cast<size_t>(c * N + g.index(t, h, w))] = acc / n;
        }
  }
  return s;
}

FloatMatrix wiener_denoise(const Grid& g, const FloatMatrix& xt, double sigma, const LatentSpectrum& s) {
  if (!(sigma >= 0.0 && sigma <= 1.0)) throw ConfigError("sigma", std::to_string(sigma), "must be in [0, 1]");
  if (s.grid.t != g.t || s.grid.h != g.h || s.grid.w != g.w || s.channels != xt.cols || xt.rows != g.tokens())
    throw ConfigError("spectrum", std::to_string(s.grid.t) + "x" + std::to_string(s.grid.h) + "x" + std::to_string(s.grid.w),
                      "the spectrum clip must give the grid and channels of the evaluated latent");
  if (sigma == 0.0) return xt;
  FloatMatrix out(xt.rows, xt.cols);
  const int64_t N = g.tokens();
  for (int c = 0; c < s.channels; ++c) {
    std::vector<Cplx> f = channel(xt, c);
    dft3(f, g, false);
    for (int64_t i = 0; i < N; ++i) f[static_cast<size_t>(i)] *= wiener_gain(s.at(c, i), sigma);
    dft3(f, g, true);
    for (int64_t i = 0; i < N; ++i) out.at(i, c) = static_cast<float>(f[static_cast<size_t>(i)].real());
  }
  return out;
}

}  // namespace kaleido::workload
