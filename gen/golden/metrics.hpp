// Quality metrics of an approximate output against the exact one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "golden/types.hpp"

namespace kaleido {

struct Quality {
  int64_t elements = 0;
  double mse = 0.0;
  double psnr_db = 0.0;      // 10 log10(peak^2 / MSE), peak = max |exact|; +inf when identical
  double cosine = 1.0;       // cosine similarity of the flattened outputs
  double max_abs_err = 0.0;
};

void finish_quality(Quality& q, double sum_sq_err, double peak, double dot, double norm_a, double norm_b);

// Any two equally shaped matrices of arithmetic types.
template <class A, class B>
Quality compare(const Matrix<A>& approx, const Matrix<B>& exact) {
  Quality q;
  q.elements = static_cast<int64_t>(exact.data.size());
  double se = 0.0, peak = 0.0, dot = 0.0, na = 0.0, nb = 0.0;
  for (size_t k = 0; k < exact.data.size(); ++k) {
    const double x = static_cast<double>(approx.data[k]);
    const double y = static_cast<double>(exact.data[k]);
    const double e = x - y;
    se += e * e;
    peak = std::max(peak, y < 0 ? -y : y);
    q.max_abs_err = std::max(q.max_abs_err, e < 0 ? -e : e);
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  finish_quality(q, se, peak, dot, na, nb);
  return q;
}

// PSNR in dB of a mean squared error against a peak value.
double psnr_from_mse(double mse, double peak);

}  // namespace kaleido
