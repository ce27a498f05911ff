// Quality metrics on hand-computed cases.
#include <gtest/gtest.h>

#include <cmath>

#include "golden/metrics.hpp"

namespace kaleido {
namespace {

TEST(Metrics, SnrRelativeL2CosineAndPsnrOnAHandCase) {
  // exact (3, 4, 0, 0): signal energy 25, peak 4; approx (3, 4, 1, 0): error energy 1.
  FloatMatrix exact(1, 4), approx(1, 4);
  exact.data = {3, 4, 0, 0};
  approx.data = {3, 4, 1, 0};
  const Quality q = compare(approx, exact);
  EXPECT_EQ(q.elements, 4);
  EXPECT_DOUBLE_EQ(q.mse, 0.25);
  EXPECT_NEAR(q.snr_db, 10.0 * std::log10(25.0), 1e-12);  // 13.98 dB
  EXPECT_NEAR(q.rel_l2, 1.0 / 5.0, 1e-12);
  EXPECT_NEAR(q.cosine, 25.0 / (5.0 * std::sqrt(26.0)), 1e-12);
  EXPECT_DOUBLE_EQ(q.peak, 4.0);
  EXPECT_NEAR(q.psnr_db, 10.0 * std::log10(16.0 / 0.25), 1e-12);  // 18.06 dB
  EXPECT_DOUBLE_EQ(q.max_abs_err, 1.0);
  const nlohmann::json j = quality_json(q);
  EXPECT_DOUBLE_EQ(j["psnr_peak"].get<double>(), 4.0);
  EXPECT_NE(quality_line(q).find("SNR 13.98 dB"), std::string::npos) << quality_line(q);
  EXPECT_NE(quality_line(q).find("(peak 4)"), std::string::npos) << quality_line(q);
}

TEST(Metrics, SnrDoesNotDependOnThePeakButPsnrDoes) {
  // Same relative error, one outlier raising the peak: SNR barely moves, PSNR jumps.
  FloatMatrix exact(1, 100), approx(1, 100);
  for (int i = 0; i < 100; ++i) {
    exact.data[static_cast<size_t>(i)] = 1.0f;
    approx.data[static_cast<size_t>(i)] = 1.1f;
  }
  const Quality flat = compare(approx, exact);
  exact.data[0] = 10.0f;
  approx.data[0] = 10.0f;
  const Quality spiky = compare(approx, exact);
  EXPECT_NEAR(flat.snr_db, 20.0, 1e-4);
  EXPECT_NEAR(flat.psnr_db, 20.0, 1e-4);
  EXPECT_GT(spiky.psnr_db - flat.psnr_db, 19.0);
  EXPECT_GT(spiky.snr_db, flat.snr_db);
  EXPECT_LT(spiky.snr_db - flat.snr_db, 3.1);  // 10 log10(199 / 99) = 3.03 dB
}

TEST(Metrics, IdenticalAndZeroCases) {
  FloatMatrix a(2, 2);
  a.data = {1, -2, 3, 0};
  const Quality same = compare(a, a);
  EXPECT_TRUE(std::isinf(same.snr_db) && same.snr_db > 0);
  EXPECT_TRUE(std::isinf(same.psnr_db) && same.psnr_db > 0);
  EXPECT_EQ(same.rel_l2, 0.0);
  EXPECT_DOUBLE_EQ(same.cosine, 1.0);
  FloatMatrix zero(2, 2);
  const Quality z = compare(a, zero);  // no signal: SNR -inf, cosine 0
  EXPECT_TRUE(std::isinf(z.snr_db) && z.snr_db < 0);
  EXPECT_EQ(z.cosine, 0.0);
}

}  // namespace
}  // namespace kaleido
