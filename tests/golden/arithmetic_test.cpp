// ACC_W wrap-around against an independent step-by-step two's complement model.
#include <gtest/gtest.h>

#include "golden/gemm.hpp"
#include "golden/intmath.hpp"
#include "golden/quant.hpp"
#include "helpers.hpp"

namespace kaleido {
namespace {

// Reference accumulator: an ACC_W-bit register masked after every MAC, read
// back through its two's complement magnitude (independent of wrap_signed).
int64_t mac_register(const std::vector<int64_t>& x, const std::vector<int64_t>& y, int acc_w) {
  const uint64_t mask = acc_w == 64 ? ~uint64_t{0} : (uint64_t{1} << acc_w) - 1;
  uint64_t acc = 0;
  for (size_t k = 0; k < x.size(); ++k) acc = (acc + static_cast<uint64_t>(x[k] * y[k])) & mask;
  if (((acc >> (acc_w - 1)) & 1u) == 0) return static_cast<int64_t>(acc);
  const uint64_t magnitude = (~acc + 1) & mask;
  return magnitude == (uint64_t{1} << 63) ? INT64_MIN : -static_cast<int64_t>(magnitude);
}

TEST(Arithmetic, WrapMatchesTwosComplementAtTheEdges) {
  for (int data_w : {4, 8, 16}) {
    for (int acc_w : {2 * data_w, 2 * data_w + 1, 32, 48, 64}) {
      if (acc_w > 64) continue;
      const int K = 300;  // a long accumulation
      for (int pattern = 0; pattern < 4; ++pattern) {
        IntMatrix a(1, K), b(K, 1);
        std::vector<int64_t> x(K), y(K);
        for (int k = 0; k < K; ++k) {
          const int64_t lo = signed_min(data_w), hi = signed_max(data_w);
          switch (pattern) {
            case 0: x[k] = lo; y[k] = lo; break;            // most negative squared: largest product
            case 1: x[k] = lo; y[k] = hi; break;            // most negative product
            case 2: x[k] = hi; y[k] = hi; break;
            default: x[k] = (k % 2) ? lo : hi; y[k] = lo; break;
          }
          a.at(0, k) = static_cast<int32_t>(x[k]);
          b.at(k, 0) = static_cast<int32_t>(y[k]);
        }
        const WideMatrix out = gemm_wrap(a, b, acc_w);
        EXPECT_EQ(out.at(0, 0), mac_register(x, y, acc_w)) << "DATA_W " << data_w << " ACC_W " << acc_w << " pattern " << pattern;
      }
    }
  }
}

TEST(Arithmetic, ReuseOutputWrapsLikeTheHardware) {
  ReuseConfig cfg;
  cfg.grid = {2, 2, 2};
  cfg.channels = 64;
  cfg.group_w = 8;
  cfg.out_cols = 2;
  cfg.data_w = 8;
  cfg.acc_w = 16;
  cfg.tau.assign(8, cfg.tau_max());
  IntMatrix a(8, 64, -128), b(64, 2, -128);
  const IntReuse r = run_reuse(cfg, a);
  const WideMatrix out = reuse_output(cfg, a, b, r);
  // 64 * 16384 = 2^20, which wraps to 0 in 16 bits.
  for (int64_t v : out.data) EXPECT_EQ(v, 0);
  EXPECT_EQ(wrap_signed(int64_t{1} << 15, 16), -32768);
  EXPECT_EQ(wrap_signed(int64_t{-32769}, 16), 32767);
}

TEST(Arithmetic, SymmetricQuantisationRoundTripsWithinHalfAStep) {
  SyntheticSpec s;
  s.grid = {2, 5, 5};
  s.channels = 8;
  const FloatMatrix x = make_latent(s);
  for (int bits : {4, 8, 12, 16}) {
    const Quantized q = quantize(x, bits);
    const FloatMatrix back = dequantize(q.q, q.scale);
    const int32_t qmax = (1 << (bits - 1)) - 1;
    for (size_t k = 0; k < x.data.size(); ++k) {
      EXPECT_LE(std::fabs(back.data[k] - x.data[k]), q.scale / 2 + 1e-6);
      EXPECT_LE(std::abs(q.q.data[k]), qmax);  // symmetric: the most negative code is unused
    }
  }
}

}  // namespace
}  // namespace kaleido
