// Generator parameters of one accelerator configuration (docs/hardware.md).
// Every parameter is one row of hw_fields(): validation, parameter_list(),
// JSON, the command line (cli/hw_options), sweep axes (sweep/sweep_spec) and
// name() all walk that table, so a new parameter is added in one place.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace kaleido::hw {

// Rounds of N cycles the detector takes for `groups` groups with `lanes` lanes that decide
// `lane_groups` groups each in turn: the rounds (LANES groups each) come in sets of LANE_GROUPS,
// and a set presents every position once per round.
inline int detection_rounds(int groups, int lanes, int lane_groups) {
  const int per_set = lanes * lane_groups;
  return lane_groups * ((groups + per_set - 1) / per_set);
}

struct HwConfig {
  int rows = 8;
  int cols = 8;
  int data_w = 8;
  int acc_w = 32;
  int group_w = 8;
  int max_t = 4;
  int max_h = 16;
  int max_w = 16;
  int max_k = 64;
  int max_m = 64;
  int lanes = 0;        // detector lanes; 0 = sized by the schedule (default_lanes())
  int win_cap = 0;      // window capacity (power of two); 0 = covers max_h * max_w
  uint32_t policies = 7;  // bit 0 fixed, bit 1 rope-orthogonal, bit 2 adaptive
  int mul_pipe = 0;
  int gather_w = 1;     // tokens the gather emits per cycle (output words of one beat)
  int lane_groups = 1;  // groups a detector lane decides in turn: 1, or 2 (half the distance trees)

  // Derived values.
  int segs() const { return rows / group_w; }
  int max_groups() const { return max_k / group_w; }
  int64_t max_tokens() const { return static_cast<int64_t>(max_t) * max_h * max_w; }
  // Lanes sized by the schedule (docs/hardware.md, "Detector lanes sized by the schedule"): the
  // detection, detection_rounds(G, L, LANE_GROUPS) * N cycles, fits in the first m-tile's passes,
  // about (G / SEGS) * (1 - r) * N cycles, up to a reuse ratio r of 3/4, so L = 4 * SEGS (at most
  // max_lanes(): every lane has all its groups).
  static constexpr int kLanesPerSegment = 4;
  int max_lanes() const { return (max_groups() + lane_groups - 1) / lane_groups; }
  int default_lanes() const { return std::min(max_lanes(), kLanesPerSegment * segs()); }
  int det_lanes() const { return lanes > 0 ? lanes : default_lanes(); }
  int window_cap() const;
  int token_w() const;      // bits of a token index (0..max_tokens-1)
  int max_kt() const { return (max_k + rows - 1) / rows; }
  int max_mt() const { return (max_m + cols - 1) / cols; }
  int tau_w() const { return data_w + 1; }
  // Exact widths of sums (docs/hardware.md "Widths"): n signed DATA_W x DATA_W products sum to
  // at most n * 2^(2*DATA_W-2) in magnitude, which 2*DATA_W + clog2(n) bits hold; past ACC_W the
  // sum wraps modulo 2^ACC_W as the golden model's does, so min(ACC_W, ...) is bit-exact.
  int sum_w(int64_t terms) const;
  int psum_w() const { return sum_w(rows); }         // partial sums inside the array (ROWS deep)
  // A segment's tap: GROUP_W products (kld_plain_array's one segment: ROWS, at most MAX_K of them).
  int partial_w() const { return sum_w(group_w < max_k ? group_w : max_k); }
  int out_sum_w() const { return sum_w(max_k); }     // a whole dot product (gather sum, accumulators)

  // Throws ConfigError naming the parameter and the rule.
  void validate() const;
  // The name of the configuration for folders and reports: a readable prefix
  // of the array and widths and a short hash of every parameter (as resolved
  // by parameter_list(), so lanes = 0 and lanes = default_lanes() name the same
  // hardware), e.g. "r8c8_d8a32_g8_27531cf5". Deterministic across runs.
  std::string name() const;
  // All parameters as (NAME, value) in table order, with lanes and the window
  // capacity resolved, for file headers and reports.
  std::vector<std::pair<std::string, std::string>> parameter_list() const;
};

// One parameter of HwConfig.
struct HwField {
  const char* key;     // JSON and sweep key: "data_w"
  const char* param;   // RTL parameter name: "DATA_W"
  const char* option;  // command-line option: "--hw-data-w"
  const char* help;
  int64_t min, max;    // plain range, checked by validate(); cross-parameter rules live there too
  const char* range_rule;  // the rule in words when the range alone is not clear, else nullptr
  const char* name_tag;    // prefix of the value in name() ("r", "c", "_d", ...), or nullptr
  int64_t (*get)(const HwConfig&);       // the value as set (0 = auto where that applies)
  int64_t (*resolved)(const HwConfig&);  // the value the hardware has (auto resolved)
  void (*set)(HwConfig&, int64_t);
  // Parameters added after configurations were named enter name()'s hash only when they differ
  // from this value, so earlier names stay valid (kAlwaysHashed: always hashed).
  int64_t hashed_unless = kAlwaysHashed;
  static constexpr int64_t kAlwaysHashed = INT64_MIN;
};

const std::vector<HwField>& hw_fields();
// The field with this JSON/sweep key, or nullptr.
const HwField* find_hw_field(const std::string& key);
// The JSON/sweep keys in table order.
std::vector<std::string> hw_field_keys();

// JSON with every key of hw_fields() (resolved values). from_json is strict:
// an unknown key (with the nearest valid one) or a non-integer value is a
// ConfigError; missing keys keep their defaults.
void to_json(nlohmann::json& j, const HwConfig& c);
void from_json(const nlohmann::json& j, HwConfig& c);

// One configuration: the golden model must compute with the widths of the
// hardware it is compared with and reported as. Throws ConfigError naming
// both values when DATA_W, ACC_W or GROUP_W differ.
void check_algorithm_widths(const HwConfig& hw, int data_w, int acc_w, int group_w);

// The two default configurations whose RTL is checked in under rtl/.
HwConfig default_config_8x8();
HwConfig default_config_16x16();

}  // namespace kaleido::hw
