// 3D token blocks and block masks: the unit of block-sparse attention.
// A block is bt x bh x bw tokens of the grid (edge blocks are clipped);
// blocks are numbered in raster order of block coordinates (t, h, w), so block
// 0 holds token (0,0,0): the "sink" of the peers that keep one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "golden/types.hpp"

namespace kaleido::study {

struct BlockShape {
  int t = 4, h = 4, w = 4;
  int tokens() const { return t * h * w; }
  std::string name() const;  // "4x4x4"
};
BlockShape parse_block_shape(const std::string& s);  // "TxHxW"

// 64-token block shapes the head-aware peers choose from.
std::vector<BlockShape> candidate_shapes_64();

class BlockLayout {
 public:
  BlockLayout() = default;
  BlockLayout(const Grid& grid, const BlockShape& shape);

  const Grid& grid() const { return grid_; }
  const BlockShape& shape() const { return shape_; }
  const Grid& blocks() const { return blocks_; }  // block counts per axis
  int count() const { return static_cast<int>(members_.size()); }
  int32_t block_of(int32_t token) const { return block_of_[static_cast<size_t>(token)]; }
  const std::vector<int32_t>& members(int b) const { return members_[static_cast<size_t>(b)]; }
  int size(int b) const { return static_cast<int>(members_[static_cast<size_t>(b)].size()); }
  // Block coordinates of block b.
  int bt(int b) const { return b / (blocks_.h * blocks_.w); }
  int bh(int b) const { return (b / blocks_.w) % blocks_.h; }
  int bw(int b) const { return b % blocks_.w; }

 private:
  Grid grid_;
  BlockShape shape_;
  Grid blocks_;
  std::vector<int32_t> block_of_;
  std::vector<std::vector<int32_t>> members_;
};

// Which (query block, key block) tiles are computed.
struct BlockMask {
  int nq = 0, nk = 0;
  std::vector<uint8_t> keep;  // nq x nk
  BlockMask() = default;
  BlockMask(int q, int k, bool value = false) : nq(q), nk(k), keep(static_cast<size_t>(q) * static_cast<size_t>(k), value) {}
  bool at(int a, int b) const { return keep[static_cast<size_t>(a) * static_cast<size_t>(nk) + static_cast<size_t>(b)] != 0; }
  void set(int a, int b, bool v = true) { keep[static_cast<size_t>(a) * static_cast<size_t>(nk) + static_cast<size_t>(b)] = v; }
  int64_t kept() const;
  int kept_in_row(int a) const;
};

// MACs of the kept tiles of one product (Q K^T or P V): sum |a| |b| d.
int64_t mask_macs(const BlockLayout& layout, const BlockMask& mask, int head_dim);

}  // namespace kaleido::study
