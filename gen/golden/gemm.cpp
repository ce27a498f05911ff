#include "golden/gemm.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "golden/intmath.hpp"

namespace kaleido {

namespace {

struct Range {
  int64_t r0, r1, c0, c1;
};

Range resolve(Tile t, int64_t rows, int64_t cols) {
  Range r{t.row0, t.rows < 0 ? rows : t.row0 + t.rows, t.col0, t.cols < 0 ? cols : t.col0 + t.cols};
  if (r.r0 < 0 || r.r1 > rows || r.r0 > r.r1 || r.c0 < 0 || r.c1 > cols || r.c0 > r.c1)
    throw Error("output tile out of range: rows [" + std::to_string(r.r0) + "," + std::to_string(r.r1) + ") of " +
                std::to_string(rows) + ", cols [" + std::to_string(r.c0) + "," + std::to_string(r.c1) + ") of " +
                std::to_string(cols));
  return r;
}

void check_shapes(int64_t a_cols, int64_t b_rows) {
  if (a_cols != b_rows)
    throw Error("GEMM shapes do not agree: A has " + std::to_string(a_cols) + " columns, B has " +
                std::to_string(b_rows) + " rows");
}

// Modular sum of A[i, c0:c1] . B[c0:c1, m] in 64-bit unsigned arithmetic;
// wrapping to ACC_W afterwards equals wrapping every step (mod 2^ACC_W).
uint64_t dot_mod(const IntMatrix& a, const IntMatrix& b, int64_t i, int64_t m, int64_t c0, int64_t c1) {
  uint64_t s = 0;
  const int32_t* x = a.row(i);
  for (int64_t c = c0; c < c1; ++c)
    s += static_cast<uint64_t>(static_cast<int64_t>(x[c]) * b.at(c, m));
  return s;
}

}  // namespace

WideMatrix gemm_wrap(const IntMatrix& a, const IntMatrix& b, int acc_w, Tile tile) {
  check_shapes(a.cols, b.rows);
  const Range r = resolve(tile, a.rows, b.cols);
  WideMatrix out(r.r1 - r.r0, r.c1 - r.c0);
  for (int64_t i = r.r0; i < r.r1; ++i)
    for (int64_t m = r.c0; m < r.c1; ++m) out.at(i - r.r0, m - r.c0) = wrap_signed(dot_mod(a, b, i, m, 0, a.cols), acc_w);
  return out;
}

WideMatrix gemm_exact(const IntMatrix& a, const IntMatrix& b, Tile tile) {
  // 16-bit operands and K < 2^31 keep every exact sum inside int64.
  return gemm_wrap(a, b, 64, tile);
}

FloatMatrix gemm(const FloatMatrix& a, const FloatMatrix& b, Tile tile) {
  check_shapes(a.cols, b.rows);
  const Range r = resolve(tile, a.rows, b.cols);
  FloatMatrix out(r.r1 - r.r0, r.c1 - r.c0);
  for (int64_t i = r.r0; i < r.r1; ++i) {
    const float* x = a.row(i);
    for (int64_t c = 0; c < a.cols; ++c) {
      const float xc = x[c];
      const float* brow = b.row(c);
      float* o = out.row(i - r.r0);
      for (int64_t m = r.c0; m < r.c1; ++m) o[m - r.c0] += xc * brow[m];
    }
  }
  return out;
}

WideMatrix reuse_output(const ReuseConfig& cfg, const IntMatrix& a, const IntMatrix& b, const IntReuse& res,
                        Tile tile) {
  check_shapes(a.cols, b.rows);
  const Range r = resolve(tile, a.rows, b.cols);
  WideMatrix out(r.r1 - r.r0, r.c1 - r.c0);
  const int G = cfg.groups();
  for (int64_t i = r.r0; i < r.r1; ++i)
    for (int64_t m = r.c0; m < r.c1; ++m) {
      uint64_t s = 0;
      for (int g = 0; g < G; ++g) {
        const int32_t root = res.at(static_cast<int32_t>(i), g).root;
        s += dot_mod(a, b, root, m, static_cast<int64_t>(g) * cfg.group_w, static_cast<int64_t>(g + 1) * cfg.group_w);
      }
      out.at(i - r.r0, m - r.c0) = wrap_signed(s, cfg.acc_w);
    }
  return out;
}

FloatMatrix reuse_output(const ReuseConfig& cfg, const FloatMatrix& a, const FloatMatrix& b, const FloatReuse& res,
                         Tile tile) {
  check_shapes(a.cols, b.rows);
  const Range r = resolve(tile, a.rows, b.cols);
  FloatMatrix out(r.r1 - r.r0, r.c1 - r.c0);
  const int G = cfg.groups();
  for (int64_t i = r.r0; i < r.r1; ++i)
    for (int64_t m = r.c0; m < r.c1; ++m) {
      float s = 0.0f;
      for (int g = 0; g < G; ++g) {
        const float* x = a.row(res.at(static_cast<int32_t>(i), g).root);
        for (int c = g * cfg.group_w; c < (g + 1) * cfg.group_w; ++c) s += x[c] * b.at(c, m);
      }
      out.at(i - r.r0, m - r.c0) = s;
    }
  return out;
}

std::vector<double> error_bound_per_column(const ReuseConfig& cfg, const IntMatrix& b) {
  std::vector<double> bound(static_cast<size_t>(b.cols), 0.0);
  for (int g = 0; g < cfg.groups(); ++g) {
    const double tau = cfg.tau_of(g);
    for (int c = g * cfg.group_w; c < (g + 1) * cfg.group_w; ++c)
      for (int64_t m = 0; m < b.cols; ++m) bound[static_cast<size_t>(m)] += tau * std::abs(b.at(c, m));
  }
  return bound;
}

}  // namespace kaleido
