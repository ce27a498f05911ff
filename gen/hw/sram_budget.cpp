#include "hw/sram_budget.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "hw/blocks.hpp"

namespace kaleido::hw {

std::vector<SramRole> sram_roles(const HwConfig& c, const std::string& top) {
  const int64_t n = token_memory_depth(c), g = c.max_groups(), tw = c.token_w();
  const int64_t a_width = static_cast<int64_t>(c.group_w) * c.data_w;
  const SramRole a{"A scratchpad (one bank per channel group)", "MAX_G x MAX_N x GROUP_W*DATA_W", g, n, a_width};
  const SramRole b{"B scratchpad (row of B, m-tile)", "2^(clog2(MAX_KT*ROWS)+clog2(MAX_MT)) x COLS*DATA_W", 1,
                   b_memory_depth(c), static_cast<int64_t>(c.cols) * c.data_w};
  if (top == "kld_plain_top")
    return {a, b, {"output accumulators (one per column)", "COLS x MAX_N x OUT_SUM_W", c.cols, n, c.out_sum_w()}};
  if (top != "kld_top") throw InternalError("no memory budget for top " + top);
  const bool banked = partials_banked(c);
  return {a,
          b,
          {"detector window (Ahat and root per slot, one per lane)",
           "LANES x LANE_GROUPS*WIN_CAP x (GROUP_W*DATA_W + TW)",
           c.det_lanes(), DetectorBlock::window_depth(c), a_width + tw},
          {"compute lists (one per group)", "MAX_G x MAX_N x TW", g, n, tw},
          {"root tables (one per group)", "MAX_G x MAX_N x TW", g, n, tw},
          {"partial sums (one per group and column)",
           banked ? "MAX_G*COLS x 2*MAX_N x PARTIAL_W (two m-tile banks)" : "MAX_G*COLS x MAX_N x PARTIAL_W",
           g * c.cols, static_cast<int64_t>(partial_memory_depth(c)), c.partial_w()}};
}

int64_t sram_bits_total(const std::vector<SramRole>& roles) {
  int64_t total = 0;
  for (const SramRole& r : roles) total += r.bits();
  return total;
}

nlohmann::json sram_json(const HwConfig& c) {
  nlohmann::json j;
  for (const char* top : {"kld_top", "kld_plain_top"}) {
    const std::vector<SramRole> roles = sram_roles(c, top);
    nlohmann::json rs = nlohmann::json::array();
    for (const SramRole& r : roles)
      rs.push_back({{"role", r.role}, {"formula", r.formula}, {"banks", r.banks}, {"depth", r.depth},
                    {"width", r.width}, {"bits", r.bits()}});
    j[top] = {{"roles", rs}, {"sram_bits_total", sram_bits_total(roles)}};
  }
  return j;
}

}  // namespace kaleido::hw
