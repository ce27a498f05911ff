// Basic types of the golden model: token grids, axes, dense matrices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kaleido {

// The three reference axes of a token (t, h, w) on the latent grid.
enum class Axis : uint8_t { T = 0, H = 1, W = 2 };
constexpr int kNumAxes = 3;
using AxisMask = uint8_t;  // bit a set <=> Axis(a) is in the set
constexpr AxisMask kAllAxes = 0x7;

inline AxisMask axis_bit(Axis a) { return static_cast<AxisMask>(1u << static_cast<unsigned>(a)); }
const char* axis_name(Axis a);                // "t", "h", "w"
Axis parse_axis(const std::string& s);        // throws ConfigError
std::string mask_name(AxisMask m);            // "th", "-" for empty

// Latent token grid T x H x W. Token index = (t * H + h) * W + w (raster).
struct Grid {
  int t = 1;
  int h = 1;
  int w = 1;
  int64_t tokens() const { return static_cast<int64_t>(t) * h * w; }
  int32_t index(int tt, int hh, int ww) const { return (tt * h + hh) * w + ww; }
};

// Row-major dense matrix.
template <class T>
struct Matrix {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<T> data;

  Matrix() = default;
  Matrix(int64_t r, int64_t c, T fill = T{}) : rows(r), cols(c), data(static_cast<size_t>(r * c), fill) {}
  T& at(int64_t r, int64_t c) { return data[static_cast<size_t>(r * cols + c)]; }
  const T& at(int64_t r, int64_t c) const { return data[static_cast<size_t>(r * cols + c)]; }
  T* row(int64_t r) { return data.data() + r * cols; }
  const T* row(int64_t r) const { return data.data() + r * cols; }
};

using IntMatrix = Matrix<int32_t>;
using FloatMatrix = Matrix<float>;

}  // namespace kaleido
