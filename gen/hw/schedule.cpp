#include "hw/schedule.hpp"

#include <algorithm>

namespace kaleido::hw {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// One (mt, kt) pass: LOADW, then ISSUE for the longest list, then DRAIN
// unless nothing was issued.
int64_t pass_cycles(const HwConfig& hw, int64_t longest) {
  int64_t c = hw.rows;
  if (longest > 0) c += longest + hw.group_w + hw.cols - 1 + hw.mul_pipe;
  return c;
}

}  // namespace

std::vector<int64_t> compute_list_lengths(const ReuseConfig& cfg, const std::vector<PairDecision>& decisions) {
  const int G = cfg.groups();
  std::vector<int64_t> len(static_cast<size_t>(G), 0);
  for (size_t k = 0; k < decisions.size(); ++k)
    if (decisions[k].kind == PairKind::Compute) ++len[k % static_cast<size_t>(G)];
  return len;
}

ScheduleCycles dense_cycles(const HwConfig& hw, const ReuseConfig& cfg) {
  const int64_t N = cfg.grid.tokens();
  std::vector<int64_t> all(static_cast<size_t>(cfg.groups()), N);
  ScheduleCycles s = reuse_cycles(hw, cfg, all);
  s.total -= s.detect;
  s.detect = 0;
  return s;
}

ScheduleCycles reuse_cycles(const HwConfig& hw, const ReuseConfig& cfg, const std::vector<int64_t>& len) {
  const int64_t N = cfg.grid.tokens();
  const int G = cfg.groups();
  const int64_t KT = ceil_div(cfg.channels, hw.rows), MT = ceil_div(cfg.out_cols, hw.cols);
  ScheduleCycles s;
  s.detect = ceil_div(G, hw.det_lanes()) * N;
  for (int64_t kt = 0; kt < KT; ++kt) {
    int64_t longest = 0;
    for (int seg = 0; seg < hw.segs(); ++seg) {
      const int64_t g = kt * hw.segs() + seg;
      if (g < G) longest = std::max(longest, len[static_cast<size_t>(g)]);
    }
    s.passes += MT * pass_cycles(hw, longest);
    s.busy += MT * longest;
  }
  s.gather = MT * N;
  s.total = s.detect + s.passes + s.gather;
  return s;
}

}  // namespace kaleido::hw
