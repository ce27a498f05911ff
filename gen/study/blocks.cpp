#include "study/blocks.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "common/error.hpp"

namespace kaleido::study {

std::string BlockShape::name() const { return std::to_string(t) + "x" + std::to_string(h) + "x" + std::to_string(w); }

BlockShape parse_block_shape(const std::string& s) {
  BlockShape b;
  int n = 0;
  if (std::sscanf(s.c_str(), "%dx%dx%d%n", &b.t, &b.h, &b.w, &n) != 3 || n != static_cast<int>(s.size()) || b.t < 1 ||
      b.h < 1 || b.w < 1)
    throw ConfigError("block", s, "must be TxHxW with positive sizes, for example 4x4x4");
  return b;
}

std::vector<BlockShape> candidate_shapes_64() {
  return {{4, 4, 4}, {1, 8, 8}, {2, 4, 8}, {2, 8, 4}, {4, 2, 8}, {4, 8, 2}, {1, 4, 16}, {1, 16, 4}, {8, 2, 4}, {8, 4, 2}};
}

BlockLayout::BlockLayout(const Grid& grid, const BlockShape& shape) : grid_(grid), shape_(shape) {
  blocks_ = {(grid.t + shape.t - 1) / shape.t, (grid.h + shape.h - 1) / shape.h, (grid.w + shape.w - 1) / shape.w};
  members_.assign(static_cast<size_t>(blocks_.tokens()), {});
  block_of_.assign(static_cast<size_t>(grid.tokens()), -1);
  for (int t = 0; t < grid.t; ++t)
    for (int h = 0; h < grid.h; ++h)
      for (int w = 0; w < grid.w; ++w) {
        const int32_t b = blocks_.index(t / shape.t, h / shape.h, w / shape.w);
        const int32_t tok = grid.index(t, h, w);
        block_of_[static_cast<size_t>(tok)] = b;
        members_[static_cast<size_t>(b)].push_back(tok);
      }
}

int64_t BlockMask::kept() const { return std::accumulate(keep.begin(), keep.end(), int64_t{0}); }

int BlockMask::kept_in_row(int a) const {
  int n = 0;
  for (int b = 0; b < nk; ++b) n += at(a, b);
  return n;
}

int64_t mask_macs(const BlockLayout& layout, const BlockMask& mask, int head_dim) {
  if (mask.nq != layout.count() || mask.nk != layout.count())
    throw InternalError("mask_macs: mask does not match the layout");
  int64_t macs = 0;
  for (int a = 0; a < mask.nq; ++a) {
    int64_t keys = 0;
    for (int b = 0; b < mask.nk; ++b)
      if (mask.at(a, b)) keys += layout.size(b);
    macs += keys * layout.size(a);
  }
  return macs * head_dim;
}

}  // namespace kaleido::study
