// Block test of kld_array: dense GEMM tiles back to back. Weights are shifted
// in through load_i (last row first) into the buffer of the tile (tile parity);
// the PEs shift a row one cycle after load_i (kld_load_reg), so a tile issues
// from the second cycle after its last row,
// the next tile's while the current one computes; every segment issues its own
// stream of tokens with random gaps, several segments often in the same cycle,
// and the next tile follows without a drain. Each
// tap must show exactly the issued tokens, each ArrayBlock::latency(c, col)
// cycles after its issue, with the partial sum of the segment's GROUP_W
// channels against the stationary weights (a plain dot product wrapped to
// PARTIAL_W = min(ACC_W, 2*DATA_W + clog2(GROUP_W)) bits, exact unless ACC_W is
// narrower), and be idle in every other cycle.
#include <map>
#include <tuple>

#include "Vkld_array.h"
#include "hw/blocks.hpp"
#include "unit_common.hpp"

namespace {

using kaleido::hw::ArrayBlock;
using namespace kld_unit;

struct TapValue {
  uint64_t tag;
  int64_t psum;
};

int run(const Job& job) {
  const kaleido::hw::HwConfig& c = job.hw;
  const int rows = c.rows, cols = c.cols, gw = c.group_w, segs = c.segs(), dw = c.data_w, aw = c.partial_w();
  const int tw = ArrayBlock::tag_width(c, kaleido::hw::partials_banked(c));  // kld_array: with the bank bit
  const int tiles = job.raw.value("tiles", 3);
  Vkld_array dut;
  Clock<Vkld_array> clock(dut);
  Checker chk(job);
  kaleido::Rng rng(job.seed);

  dut.rst_ni = 0;
  dut.load_i = 0;
  dut.sel_i = 0;
  set_bits(dut.seg_valid_i, 0, segs, 0);
  clock.settle();
  dut.rst_ni = 1;

  // Expected tap contents by cycle: (cycle, segment, column) -> value.
  std::map<std::tuple<int64_t, int, int>, TapValue> expect;
  int64_t issued = 0, seen = 0, multi_issue_cycles = 0;

  // Compares every tap of the current cycle with the expectation (settled, before the edge).
  auto check_taps = [&]() {
    clock.settle();
    const int64_t now = clock.cycle();
    for (int s = 0; s < segs; ++s)
      for (int col = 0; col < cols; ++col) {
        const int tap = s * cols + col;
        const bool valid = get_bits(dut.tap_valid_o, tap, 1) != 0;
        const std::string at = "cycle " + std::to_string(now) + " segment " + std::to_string(s) + " column " +
                               std::to_string(col);
        auto it = expect.find({now, s, col});
        chk.equal(valid, it != expect.end(), at + ": tap_valid_o");
        if (it == expect.end() || !valid) continue;
        ++seen;
        chk.equal(static_cast<int64_t>(get_bits(dut.tap_tag_o, tap * tw, tw)), static_cast<int64_t>(it->second.tag),
                  at + ": tap_tag_o");
        chk.equal(sign_extend(get_bits(dut.tap_psum_o, tap * aw, aw), aw), it->second.psum, at + ": tap_psum_o");
        expect.erase(it);
      }
  };

  // Weights of every tile; tile t computes with buffer t mod 2.
  using Tile = std::vector<std::vector<int64_t>>;
  std::vector<Tile> weight(static_cast<size_t>(tiles), Tile(static_cast<size_t>(rows), std::vector<int64_t>(static_cast<size_t>(cols))));
  for (auto& tile : weight)
    for (auto& row : tile)
      for (auto& v : row) v = operand(rng, dw);
  // Drives row k of tile t's load (the bottom row first), or no load.
  auto drive_load = [&](int t, int k) {
    dut.load_i = k >= 0;
    dut.load_sel_i = t % 2;
    if (k < 0) {
      set_bits(dut.w_top_i, 0, cols * dw, rng.next());  // ignored without a load
      return;
    }
    for (int col = 0; col < cols; ++col)
      set_bits(dut.w_top_i, col * dw, dw,
               static_cast<uint64_t>(weight[static_cast<size_t>(t)][static_cast<size_t>(rows - 1 - k)][static_cast<size_t>(col)]));
  };
  // Idle (no issue, no load) until the last row sent, in cycle `last_row`, has shifted into the PEs.
  int64_t last_row = -1;
  auto settle = [&] {
    set_bits(dut.seg_valid_i, 0, segs, 0);
    drive_load(0, -1);
    while (clock.cycle() < last_row + 2) {
      check_taps();
      clock.edge();
    }
  };
  // Tile 0's weights: ROWS + 1 cycles before any issue.
  set_bits(dut.seg_valid_i, 0, segs, 0);
  for (int k = 0; k < rows; ++k) {
    drive_load(0, k);
    last_row = clock.cycle();
    check_taps();
    clock.edge();
  }
  settle();
  for (int tile = 0; tile < tiles; ++tile) {
    // ISSUE: per segment, `tokens` tokens with a segment-specific issue probability,
    // with buffer tile mod 2. Meanwhile the next tile's weights load into the
    // other buffer, once the previous tile's last activation has left the array
    // (GROUP_W + COLS - 1 cycles after its last issue, the cycle before this tile).
    const int64_t tokens = job.iterations;
    const int64_t load_from = clock.cycle() - 1 + gw + cols - 1;
    const bool next = tile + 1 < tiles;
    int loaded = next ? 0 : rows;
    std::vector<int64_t> left(static_cast<size_t>(segs), tokens);
    std::vector<int64_t> percent(static_cast<size_t>(segs));
    for (auto& p : percent) p = std::vector<int64_t>{25, 60, 100}[static_cast<size_t>(rng.range(0, 2))];
    bool any_left = true;
    while (any_left || loaded < rows) {
      any_left = false;
      const bool loading = loaded < rows && clock.cycle() >= load_from;
      drive_load(tile + 1, loading ? loaded : -1);
      if (loading) last_row = clock.cycle();
      loaded += loading;
      dut.sel_i = tile % 2;
      const bool all_together = rng.range(0, 7) == 0;
      int issuing = 0;
      for (int s = 0; s < segs; ++s) {
        const bool go = left[static_cast<size_t>(s)] > 0 && (all_together || rng.range(0, 99) < percent[static_cast<size_t>(s)]);
        set_bits(dut.seg_valid_i, s, 1, go);
        // Tags and data change every cycle, issued or not: gaps must not leak into the sums.
        const uint64_t tag = rng.next() & ((uint64_t{1} << tw) - 1);
        set_bits(dut.seg_tag_i, s * tw, tw, tag);
        std::vector<int64_t> a(static_cast<size_t>(gw));
        for (int j = 0; j < gw; ++j) {
          a[static_cast<size_t>(j)] = operand(rng, dw);
          set_bits(dut.seg_data_i, (s * gw + j) * dw, dw, static_cast<uint64_t>(a[static_cast<size_t>(j)]));
        }
        if (go) {
          ++issuing;
          ++issued;
          --left[static_cast<size_t>(s)];
          for (int col = 0; col < cols; ++col) {
            int64_t dot = 0;  // plain dot product of the group's channels and the segment's weights
            for (int j = 0; j < gw; ++j)
              dot += a[static_cast<size_t>(j)] *
                     weight[static_cast<size_t>(tile)][static_cast<size_t>(s * gw + j)][static_cast<size_t>(col)];
            expect[{clock.cycle() + ArrayBlock::latency(c, col), s, col}] = TapValue{tag, kaleido::wrap_signed(dot, aw)};
          }
        }
        any_left = any_left || left[static_cast<size_t>(s)] > 0;
      }
      if (issuing > 1) ++multi_issue_cycles;
      check_taps();
      clock.edge();
    }
    // No drain between tiles: the next one issues as soon as its last row is in the PEs.
    settle();
  }
  // DRAIN: idle until every expected tap has been seen (or its cycle passed).
  set_bits(dut.seg_valid_i, 0, segs, 0);
  drive_load(0, -1);
  const int64_t until = clock.cycle() + c.group_w + cols + c.mul_pipe + 2;
  while (clock.cycle() < until) {
    check_taps();
    clock.edge();
  }
  for (const auto& [key, v] : expect)
    chk.fail("tap of segment " + std::to_string(std::get<1>(key)) + " column " + std::to_string(std::get<2>(key)) +
             " expected in cycle " + std::to_string(std::get<0>(key)) + " never compared");
  if (seen != issued * cols) chk.fail("taps seen " + std::to_string(seen) + " != issues x COLS " + std::to_string(issued * cols));
  if (segs > 1 && multi_issue_cycles == 0) chk.fail("no cycle had several segments issuing");
  dut.final();
  return chk.finish("kld_array " + std::to_string(rows) + "x" + std::to_string(cols) + " GROUP_W " + std::to_string(gw) +
                    " MUL_PIPE " + std::to_string(c.mul_pipe) + ", " + std::to_string(tiles) + " tiles, " +
                    std::to_string(issued) + " issues (" + std::to_string(multi_issue_cycles) +
                    " cycles with several segments)");
}

}  // namespace

int main(int argc, char** argv) { return harness_main(argc, argv, run); }
