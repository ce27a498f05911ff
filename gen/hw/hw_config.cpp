#include "hw/hw_config.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/hash.hpp"
#include "common/suggest.hpp"
#include "golden/intmath.hpp"

namespace kaleido::hw {

namespace {

void require(bool ok, const char* param, int64_t value, const std::string& rule) {
  if (!ok) throw ConfigError(param, std::to_string(value), rule);
}
bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

constexpr int64_t kNoMax = std::numeric_limits<int32_t>::max();

// Accessors of a plain int member: the table's get/resolved/set.
#define KALEIDO_HW_INT(member)                                            \
  [](const HwConfig& c) -> int64_t { return c.member; },                  \
      [](const HwConfig& c) -> int64_t { return c.member; },              \
      [](HwConfig& c, int64_t v) { c.member = static_cast<int>(v); }

}  // namespace

const std::vector<HwField>& hw_fields() {
  static const std::vector<HwField> fields = {
      {"rows", "ROWS", "--rows", "ROWS of the PE array", 1, 64, nullptr, "r", KALEIDO_HW_INT(rows)},
      {"cols", "COLS", "--cols", "COLS of the PE array", 1, 64, nullptr, "c", KALEIDO_HW_INT(cols)},
      {"data_w", "DATA_W", "--hw-data-w", "DATA_W of the hardware", 4, 16, nullptr, "_d", KALEIDO_HW_INT(data_w)},
      {"acc_w", "ACC_W", "--hw-acc-w", "ACC_W of the hardware", 8, 64, "must be 2*DATA_W to 64", "a",
       KALEIDO_HW_INT(acc_w)},
      {"group_w", "GROUP_W", "--hw-group-w", "GROUP_W: channel group width (power of two dividing ROWS)", 1, 64,
       "must be a power of two", "_g", KALEIDO_HW_INT(group_w)},
      {"max_t", "MAX_T", "--max-t", "largest T", 1, kNoMax, nullptr, nullptr, KALEIDO_HW_INT(max_t)},
      {"max_h", "MAX_H", "--max-h", "largest H", 1, kNoMax, nullptr, nullptr, KALEIDO_HW_INT(max_h)},
      {"max_w", "MAX_W", "--max-w", "largest W", 1, kNoMax, nullptr, nullptr, KALEIDO_HW_INT(max_w)},
      {"max_k", "MAX_K", "--max-k", "largest K", 1, kNoMax, "must be a positive multiple of GROUP_W", nullptr,
       KALEIDO_HW_INT(max_k)},
      {"max_m", "MAX_M", "--max-m", "largest M", 1, kNoMax, nullptr, nullptr, KALEIDO_HW_INT(max_m)},
      {"lanes", "LANES", "--lanes",
       "detector lanes (0 = sized by the schedule: min(ceil(MAX_K/GROUP_W / LANE_GROUPS), 4*ROWS/GROUP_W))", 0,
       kNoMax, "must be 0 (sized by the schedule) to MAX_K/GROUP_W (half that, rounded up, with LANE_GROUPS 2)",
       nullptr,
       [](const HwConfig& c) -> int64_t { return c.lanes; }, [](const HwConfig& c) -> int64_t { return c.det_lanes(); },
       [](HwConfig& c, int64_t v) { c.lanes = static_cast<int>(v); }},
      {"win_cap", "WIN_CAP", "--win-cap", "reference window capacity, power of two (0 = MAX_H*MAX_W rounded up)", 0,
       kNoMax, "must be 0 (auto) or a power of two", nullptr, [](const HwConfig& c) -> int64_t { return c.win_cap; },
       [](const HwConfig& c) -> int64_t { return c.window_cap(); },
       [](HwConfig& c, int64_t v) { c.win_cap = static_cast<int>(v); }},
      {"policies", "POLICIES", "--policies", "policies built in: bit 0 fixed, 1 rope-orthogonal, 2 adaptive", 1, 7,
       "must be a non-empty subset of bits 0..2", nullptr, [](const HwConfig& c) -> int64_t { return c.policies; },
       [](const HwConfig& c) -> int64_t { return c.policies; },
       [](HwConfig& c, int64_t v) { c.policies = static_cast<uint32_t>(v); }},
      {"mul_pipe", "MUL_PIPE", "--mul-pipe", "pipeline register after each PE multiplier (0 or 1)", 0, 1,
       "must be 0 or 1", nullptr, KALEIDO_HW_INT(mul_pipe)},
      {"gather_w", "GATHER_W", "--gather-w",
       "tokens the gather emits per cycle (output words per beat; partial and root memories get as many read "
       "ports)",
       1, 8, nullptr, nullptr, KALEIDO_HW_INT(gather_w), 1},
      {"lane_groups", "LANE_GROUPS", "--lane-groups",
       "groups each detector lane decides in turn: 1 (a position per cycle, four speculative distance trees "
       "for the w reference) or 2 (alternate cycles, half the trees and twice the window)",
       1, 2, nullptr, nullptr, KALEIDO_HW_INT(lane_groups), 1},
  };
  return fields;
}

#undef KALEIDO_HW_INT

const HwField* find_hw_field(const std::string& key) {
  for (const HwField& f : hw_fields())
    if (key == f.key) return &f;
  return nullptr;
}

std::vector<std::string> hw_field_keys() {
  std::vector<std::string> keys;
  for (const HwField& f : hw_fields()) keys.push_back(f.key);
  return keys;
}

int HwConfig::window_cap() const {
  if (win_cap > 0) return win_cap;
  int cap = 1;
  while (cap < max_h * max_w) cap *= 2;
  return cap;
}

int HwConfig::token_w() const { return clog2(static_cast<uint64_t>(max_tokens())); }

int HwConfig::sum_w(int64_t terms) const {
  // clog2(1) is 1 (an index width): one product then gets a spare bit, still exact.
  return std::min(acc_w, 2 * data_w + clog2(terms));
}

void HwConfig::validate() const {
  for (const HwField& f : hw_fields()) {
    const int64_t v = f.get(*this);
    const std::string rule = f.range_rule ? f.range_rule
                             : f.max == kNoMax ? "must be at least " + std::to_string(f.min)
                                               : "must be " + std::to_string(f.min) + " to " + std::to_string(f.max);
    require(v >= f.min && v <= f.max, f.param, v, rule);
  }
  // Rules that tie parameters together.
  require(acc_w >= 2 * data_w, "ACC_W", acc_w, "must be 2*DATA_W to 64");
  require(is_pow2(group_w), "GROUP_W", group_w, "must be a power of two");
  require(rows % group_w == 0, "ROWS", rows, "must be a multiple of the group width GROUP_W = " + std::to_string(group_w));
  require(max_tokens() <= (1 << 20), "MAX_T*MAX_H*MAX_W", max_tokens(), "must be at most 2^20 tokens");
  require(max_k >= group_w && max_k % group_w == 0, "MAX_K", max_k,
          "must be a positive multiple of GROUP_W = " + std::to_string(group_w));
  require(lanes <= max_lanes(), "LANES", lanes,
          lane_groups == 1 ? "must be 0 (sized by the schedule) to MAX_K/GROUP_W = " + std::to_string(max_lanes())
                           : "must be 0 (sized by the schedule) to ceil(MAX_K/GROUP_W / 2) = " +
                                 std::to_string(max_lanes()) + " (each lane decides two groups)");
  require(win_cap == 0 || is_pow2(win_cap), "WIN_CAP", win_cap, "must be 0 (auto) or a power of two");
}

std::string HwConfig::name() const {
  std::string prefix;
  // FNV-1a over "PARAM=value;" of every parameter (resolved), in table order.
  uint64_t h = kFnv1aOffset;
  for (const HwField& f : hw_fields()) {
    if (f.name_tag) prefix += f.name_tag + std::to_string(f.get(*this));
    if (f.hashed_unless != HwField::kAlwaysHashed && f.resolved(*this) == f.hashed_unless) continue;
    h = fnv1a(h, std::string(f.param) + "=" + std::to_string(f.resolved(*this)) + ";");
  }
  return prefix + "_" + fmt::format("{:08x}", (h ^ (h >> 32)) & 0xffffffffull);
}

std::vector<std::pair<std::string, std::string>> HwConfig::parameter_list() const {
  std::vector<std::pair<std::string, std::string>> list;
  for (const HwField& f : hw_fields()) list.emplace_back(f.param, std::to_string(f.resolved(*this)));
  return list;
}

void to_json(nlohmann::json& j, const HwConfig& c) {
  j = nlohmann::json::object();
  for (const HwField& f : hw_fields()) j[f.key] = f.resolved(c);
}

void from_json(const nlohmann::json& j, HwConfig& c) {
  if (!j.is_object()) throw ConfigError("hardware configuration", j.dump(), "must be a JSON object of parameters");
  c = HwConfig{};
  for (const auto& [key, value] : j.items()) {
    const HwField* f = find_hw_field(key);
    if (!f) throw ConfigError(key, value.dump(), "unknown hardware parameter" + suggestion(key, hw_field_keys()));
    if (!value.is_number_integer())
      throw ConfigError(key, value.dump(), std::string("must be an integer (") + f->param + ")");
    f->set(c, value.get<int64_t>());
  }
}

void check_algorithm_widths(const HwConfig& hw, int data_w, int acc_w, int group_w) {
  const struct {
    const char* param;
    int hardware, algorithm;
    const char* options;
  } widths[] = {{"DATA_W", hw.data_w, data_w, "--hw-data-w / --data-w"},
                {"ACC_W", hw.acc_w, acc_w, "--hw-acc-w / --acc-w"},
                {"GROUP_W", hw.group_w, group_w, "--hw-group-w / --group-w"}};
  for (const auto& w : widths)
    if (w.hardware != w.algorithm)
      throw ConfigError(w.param, std::to_string(w.hardware) + " in the hardware",
                        "the algorithm's value is " + std::to_string(w.algorithm) + " (" + w.options +
                            "); they must be equal");
}

HwConfig default_config_8x8() { return HwConfig{}; }

HwConfig default_config_16x16() {
  HwConfig c;
  c.rows = 16;
  c.cols = 16;
  return c;
}

}  // namespace kaleido::hw
