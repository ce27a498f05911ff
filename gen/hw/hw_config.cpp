#include "hw/hw_config.hpp"

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "golden/intmath.hpp"

namespace kaleido::hw {

namespace {
void require(bool ok, const char* param, int64_t value, const std::string& rule) {
  if (!ok) throw ConfigError(param, std::to_string(value), rule);
}
bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
}  // namespace

int HwConfig::window_cap() const {
  if (win_cap > 0) return win_cap;
  int cap = 1;
  while (cap < max_h * max_w) cap *= 2;
  return cap;
}

int HwConfig::token_w() const { return clog2(static_cast<uint64_t>(max_tokens())); }

void HwConfig::validate() const {
  require(rows >= 1 && rows <= 64, "ROWS", rows, "must be 1 to 64");
  require(cols >= 1 && cols <= 64, "COLS", cols, "must be 1 to 64");
  require(data_w >= 4 && data_w <= 16, "DATA_W", data_w, "must be 4 to 16");
  require(acc_w >= 2 * data_w && acc_w <= 64, "ACC_W", acc_w, "must be 2*DATA_W to 64");
  require(is_pow2(group_w), "GROUP_W", group_w, "must be a power of two");
  require(rows % group_w == 0, "ROWS", rows, "must be a multiple of the group width GROUP_W = " + std::to_string(group_w));
  require(max_t >= 1, "MAX_T", max_t, "must be at least 1");
  require(max_h >= 1, "MAX_H", max_h, "must be at least 1");
  require(max_w >= 1, "MAX_W", max_w, "must be at least 1");
  require(max_tokens() <= (1 << 20), "MAX_T*MAX_H*MAX_W", max_tokens(), "must be at most 2^20 tokens");
  require(max_k >= group_w && max_k % group_w == 0, "MAX_K", max_k,
          "must be a positive multiple of GROUP_W = " + std::to_string(group_w));
  require(max_m >= 1, "MAX_M", max_m, "must be at least 1");
  require(lanes >= 0 && lanes <= max_groups(), "LANES", lanes,
          "must be 0 (one per group) to MAX_K/GROUP_W = " + std::to_string(max_groups()));
  require(win_cap == 0 || is_pow2(win_cap), "WIN_CAP", win_cap, "must be 0 (auto) or a power of two");
  require(policies >= 1 && policies <= 7, "POLICIES", policies, "must be a non-empty subset of bits 0..2");
  require(mul_pipe == 0 || mul_pipe == 1, "MUL_PIPE", mul_pipe, "must be 0 or 1");
}

std::string HwConfig::name() const {
  return "r" + std::to_string(rows) + "c" + std::to_string(cols) + "_d" + std::to_string(data_w) + "a" +
         std::to_string(acc_w) + "_g" + std::to_string(group_w);
}

std::vector<std::pair<std::string, std::string>> HwConfig::parameter_list() const {
  return {{"ROWS", std::to_string(rows)},
          {"COLS", std::to_string(cols)},
          {"DATA_W", std::to_string(data_w)},
          {"ACC_W", std::to_string(acc_w)},
          {"GROUP_W", std::to_string(group_w)},
          {"MAX_T", std::to_string(max_t)},
          {"MAX_H", std::to_string(max_h)},
          {"MAX_W", std::to_string(max_w)},
          {"MAX_K", std::to_string(max_k)},
          {"MAX_M", std::to_string(max_m)},
          {"LANES", std::to_string(det_lanes())},
          {"WIN_CAP", std::to_string(window_cap())},
          {"POLICIES", std::to_string(policies)},
          {"MUL_PIPE", std::to_string(mul_pipe)}};
}

void to_json(nlohmann::json& j, const HwConfig& c) {
  j = nlohmann::json{{"rows", c.rows},       {"cols", c.cols},       {"data_w", c.data_w},   {"acc_w", c.acc_w},
                     {"group_w", c.group_w}, {"max_t", c.max_t},     {"max_h", c.max_h},     {"max_w", c.max_w},
                     {"max_k", c.max_k},     {"max_m", c.max_m},     {"lanes", c.det_lanes()}, {"win_cap", c.window_cap()},
                     {"policies", c.policies}, {"mul_pipe", c.mul_pipe}};
}

void from_json(const nlohmann::json& j, HwConfig& c) {
  HwConfig d;
  c.rows = j.value("rows", d.rows);
  c.cols = j.value("cols", d.cols);
  c.data_w = j.value("data_w", d.data_w);
  c.acc_w = j.value("acc_w", d.acc_w);
  c.group_w = j.value("group_w", d.group_w);
  c.max_t = j.value("max_t", d.max_t);
  c.max_h = j.value("max_h", d.max_h);
  c.max_w = j.value("max_w", d.max_w);
  c.max_k = j.value("max_k", d.max_k);
  c.max_m = j.value("max_m", d.max_m);
  c.lanes = j.value("lanes", d.lanes);
  c.win_cap = j.value("win_cap", d.win_cap);
  c.policies = j.value("policies", d.policies);
  c.mul_pipe = j.value("mul_pipe", d.mul_pipe);
}

HwConfig default_config_8x8() { return HwConfig{}; }

HwConfig default_config_16x16() {
  HwConfig c;
  c.rows = 16;
  c.cols = 16;
  return c;
}

}  // namespace kaleido::hw
