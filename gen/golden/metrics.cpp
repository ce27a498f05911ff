#include "golden/metrics.hpp"

#include <cmath>
#include <limits>

namespace kaleido {

double psnr_from_mse(double mse, double peak) {
  if (mse <= 0.0) return std::numeric_limits<double>::infinity();
  if (peak <= 0.0) return -std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(peak * peak / mse);
}

void finish_quality(Quality& q, double sum_sq_err, double peak, double dot, double norm_a, double norm_b) {
  q.mse = q.elements ? sum_sq_err / static_cast<double>(q.elements) : 0.0;
  q.psnr_db = psnr_from_mse(q.mse, peak);
  if (norm_a <= 0.0 && norm_b <= 0.0)
    q.cosine = 1.0;
  else if (norm_a <= 0.0 || norm_b <= 0.0)
    q.cosine = 0.0;
  else
    q.cosine = dot / (std::sqrt(norm_a) * std::sqrt(norm_b));
}

}  // namespace kaleido
