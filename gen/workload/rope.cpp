#include "workload/rope.hpp"

#include <cmath>
#include <vector>

#include "common/error.hpp"

namespace kaleido::workload {

void Rope3d::validate() const {
  for (int b : band)
    if (b <= 0 || b % 2) throw ConfigError("rope band", std::to_string(b), "band sizes must be positive and even");
  if (!(theta > 1.0)) throw ConfigError("rope theta", std::to_string(theta), "must be greater than 1");
}

namespace {

void rotate_band(float* v, int size, double theta, int pos) {
  for (int k = 0; k < size / 2; ++k) {
    const double angle = pos * std::pow(theta, -2.0 * k / size);
    const double c = std::cos(angle), s = std::sin(angle);
    const double x = v[2 * k], y = v[2 * k + 1];
    v[2 * k] = static_cast<float>(x * c - y * s);
    v[2 * k + 1] = static_cast<float>(x * s + y * c);
  }
}

}  // namespace

void rope_rotate(float* v, const Rope3d& rope, int t, int h, int w) {
  rotate_band(v, rope.band[0], rope.theta, t);
  rotate_band(v + rope.band[0], rope.band[1], rope.theta, h);
  rotate_band(v + rope.band[0] + rope.band[1], rope.band[2], rope.theta, w);
}

void apply_rope(FloatMatrix& x, const Grid& grid, const Rope3d& rope) {
  rope.validate();
  if (x.cols != rope.head_dim() || x.rows != grid.tokens())
    throw InternalError("apply_rope: matrix is " + std::to_string(x.rows) + "x" + std::to_string(x.cols) +
                        ", expected " + std::to_string(grid.tokens()) + "x" + std::to_string(rope.head_dim()));
  for (int t = 0; t < grid.t; ++t)
    for (int h = 0; h < grid.h; ++h)
      for (int w = 0; w < grid.w; ++w) rope_rotate(x.row(grid.index(t, h, w)), rope, t, h, w);
}

}  // namespace kaleido::workload
