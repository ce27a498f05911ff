// Symmetric quantisation of float tensors to DATA_W-bit signed integers.
//
// scale s = max|x| / (2^(DATA_W-1) - 1) (s = 1 for an all-zero tensor);
// q = clamp(round_half_away(x / s), -(2^(DATA_W-1) - 1), 2^(DATA_W-1) - 1);
// x ~= q * s. The most negative code is not produced, so the range is
// symmetric. A product of tensors with scales sa and sb has scale sa * sb.
#pragma once

#include "golden/types.hpp"

namespace kaleido {

struct Quantized {
  IntMatrix q;
  double scale = 1.0;
};

Quantized quantize(const FloatMatrix& x, int bits);
double symmetric_scale(const FloatMatrix& x, int bits);
IntMatrix quantize_with_scale(const FloatMatrix& x, int bits, double scale);
FloatMatrix dequantize(const IntMatrix& q, double scale);

}  // namespace kaleido
