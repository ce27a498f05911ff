#include "golden/quant.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"

namespace kaleido {

double symmetric_scale(const FloatMatrix& x, int bits) {
  if (bits < 2 || bits > 31) throw ConfigError("bits", std::to_string(bits), "must be 2 to 31");
  double peak = 0.0;
  for (float v : x.data) peak = std::max(peak, static_cast<double>(std::fabs(v)));
  const double qmax = std::ldexp(1.0, bits - 1) - 1.0;
  return peak > 0.0 ? peak / qmax : 1.0;
}

IntMatrix quantize_with_scale(const FloatMatrix& x, int bits, double scale) {
  if (!(scale > 0.0) || !std::isfinite(scale)) throw ConfigError("scale", std::to_string(scale), "must be positive");
  const double qmax = std::ldexp(1.0, bits - 1) - 1.0;
  IntMatrix q(x.rows, x.cols);
  for (size_t k = 0; k < x.data.size(); ++k) {
    const double v = std::round(static_cast<double>(x.data[k]) / scale);  // half away from zero
    q.data[k] = static_cast<int32_t>(std::clamp(v, -qmax, qmax));
  }
  return q;
}

Quantized quantize(const FloatMatrix& x, int bits) {
  Quantized r;
  r.scale = symmetric_scale(x, bits);
  r.q = quantize_with_scale(x, bits, r.scale);
  return r;
}

FloatMatrix dequantize(const IntMatrix& q, double scale) {
  FloatMatrix x(q.rows, q.cols);
  for (size_t k = 0; k < q.data.size(); ++k) x.data[k] = static_cast<float>(q.data[k] * scale);
  return x;
}

}  // namespace kaleido
