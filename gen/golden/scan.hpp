// Scan order of tokens: the order in which the model (and the hardware's
// dispatcher) visits tokens. Spatial tiles of tile_h x tile_w in raster order;
// inside a tile, t then h then w. Every reference of a token lies in the same
// tile and comes earlier in this order, at a fixed distance: 1 for w, the
// tile's width for h, the tile's area for t (edge tiles are clipped).
#pragma once

#include <cstdint>
#include <vector>

#include "golden/types.hpp"

namespace kaleido {

struct TokenCoord {
  int t = 0, h = 0, w = 0;
};

class ScanOrder {
 public:
  ScanOrder(const Grid& grid, int tile_h, int tile_w);  // 0 = whole frame

  const Grid& grid() const { return grid_; }
  int64_t size() const { return static_cast<int64_t>(order_.size()); }
  int32_t token_at(int64_t pos) const { return order_[static_cast<size_t>(pos)]; }
  int32_t pos_of(int32_t token) const { return pos_[static_cast<size_t>(token)]; }
  TokenCoord coord(int32_t token) const;

  // The reference of `token` along `axis` inside its tile, or -1 when the
  // neighbour is off the grid or in another tile.
  int32_t reference(int32_t token, Axis axis) const;

  // Largest scan distance of any reference: the window depth that lets every
  // in-tile reference be used.
  int64_t required_window_depth() const { return required_depth_; }

 private:
  Grid grid_;
  int tile_h_;
  int tile_w_;
  std::vector<int32_t> order_;
  std::vector<int32_t> pos_;
  int64_t required_depth_ = 0;
};

}  // namespace kaleido
