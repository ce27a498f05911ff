// Quality metrics of an approximate output against the exact one.
//
// SNR and cosine are the headline figures: SNR = 10 log10(sum exact^2 / sum
// (approx - exact)^2), i.e. signal power over MSE, independent of the data's
// range. PSNR depends on the peak it is taken against, so it is always
// reported with that peak (here max |exact|).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "golden/types.hpp"

namespace kaleido {

struct Quality {
  int64_t elements = 0;
  double mse = 0.0;
  double snr_db = 0.0;       // 10 log10(mean exact^2 / MSE); +inf when identical
  double rel_l2 = 0.0;       // |approx - exact|_2 / |exact|_2
  double cosine = 1.0;       // cosine similarity of the flattened outputs
  double psnr_db = 0.0;      // 10 log10(peak^2 / MSE), peak below; +inf when identical
  double peak = 0.0;         // max |exact|, the PSNR's peak
  double max_abs_err = 0.0;
};

// Fills every field but `elements` and `max_abs_err` from the sums over all
// elements: squared error, peak, approx . exact, approx . approx, exact . exact.
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
// SNR in dB: signal energy over error energy (both sums, or both means).
double snr_from_energy(double signal, double error);

// Every field, for JSON reports (peak named beside PSNR).
nlohmann::json quality_json(const Quality& q);
// One line for reports: "SNR 31.20 dB, rel. L2 0.0275, cosine 0.999622, PSNR 45.10 dB (peak 812)".
std::string quality_line(const Quality& q);

}  // namespace kaleido
