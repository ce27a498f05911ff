#include "golden/metrics.hpp"

#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

namespace kaleido {

double psnr_from_mse(double mse, double peak) {
  if (mse <= 0.0) return std::numeric_limits<double>::infinity();
  if (peak <= 0.0) return -std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(peak * peak / mse);
}

double snr_from_energy(double signal, double error) {
  if (error <= 0.0) return std::numeric_limits<double>::infinity();
  if (signal <= 0.0) return -std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / error);
}

void finish_quality(Quality& q, double sum_sq_err, double peak, double dot, double norm_a, double norm_b) {
  q.mse = q.elements ? sum_sq_err / static_cast<double>(q.elements) : 0.0;
  q.peak = peak;
  q.psnr_db = psnr_from_mse(q.mse, peak);
  q.snr_db = snr_from_energy(norm_b, sum_sq_err);
  if (sum_sq_err <= 0.0)
    q.rel_l2 = 0.0;
  else
    q.rel_l2 = norm_b > 0.0 ? std::sqrt(sum_sq_err / norm_b) : std::numeric_limits<double>::infinity();
  if (norm_a <= 0.0 && norm_b <= 0.0)
    q.cosine = 1.0;
  else if (norm_a <= 0.0 || norm_b <= 0.0)
    q.cosine = 0.0;
  else
    q.cosine = dot / (std::sqrt(norm_a) * std::sqrt(norm_b));
}

nlohmann::json quality_json(const Quality& q) {
  return {{"snr_db", q.snr_db}, {"rel_l2", q.rel_l2}, {"cosine", q.cosine},   {"psnr_db", q.psnr_db},
          {"psnr_peak", q.peak}, {"mse", q.mse},       {"max_abs_err", q.max_abs_err}, {"elements", q.elements}};
}

std::string quality_line(const Quality& q) {
  return fmt::format("SNR {:.2f} dB, rel. L2 {:.4g}, cosine {:.6f}, PSNR {:.2f} dB (peak {:.6g})", q.snr_db, q.rel_l2,
                     q.cosine, q.psnr_db, q.peak);
}

}  // namespace kaleido
