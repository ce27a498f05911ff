#include "golden/scan.hpp"

#include <algorithm>

namespace kaleido {

ScanOrder::ScanOrder(const Grid& grid, int tile_h, int tile_w)
    : grid_(grid), tile_h_(tile_h > 0 ? tile_h : grid.h), tile_w_(tile_w > 0 ? tile_w : grid.w) {
  order_.reserve(static_cast<size_t>(grid.tokens()));
  pos_.assign(static_cast<size_t>(grid.tokens()), -1);
  for (int h0 = 0; h0 < grid.h; h0 += tile_h_)
    for (int w0 = 0; w0 < grid.w; w0 += tile_w_) {
      const int h1 = std::min(grid.h, h0 + tile_h_);
      const int w1 = std::min(grid.w, w0 + tile_w_);
      for (int t = 0; t < grid.t; ++t)
        for (int h = h0; h < h1; ++h)
          for (int w = w0; w < w1; ++w) {
            const int32_t tok = grid.index(t, h, w);
            pos_[static_cast<size_t>(tok)] = static_cast<int32_t>(order_.size());
            order_.push_back(tok);
          }
    }
  for (int32_t tok = 0; tok < static_cast<int32_t>(order_.size()); ++tok)
    for (int a = 0; a < kNumAxes; ++a) {
      const int32_t r = reference(tok, static_cast<Axis>(a));
      if (r >= 0) required_depth_ = std::max<int64_t>(required_depth_, pos_of(tok) - pos_of(r));
    }
}

TokenCoord ScanOrder::coord(int32_t token) const {
  TokenCoord c;
  c.w = token % grid_.w;
  c.h = (token / grid_.w) % grid_.h;
  c.t = token / (grid_.w * grid_.h);
  return c;
}

int32_t ScanOrder::reference(int32_t token, Axis axis) const {
  const TokenCoord c = coord(token);
  switch (axis) {
    case Axis::T: return c.t > 0 ? grid_.index(c.t - 1, c.h, c.w) : -1;
    case Axis::H: return (c.h % tile_h_) != 0 ? grid_.index(c.t, c.h - 1, c.w) : -1;
    case Axis::W: return (c.w % tile_w_) != 0 ? grid_.index(c.t, c.h, c.w - 1) : -1;
  }
  return -1;
}

}  // namespace kaleido
