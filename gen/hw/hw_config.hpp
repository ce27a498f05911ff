// Generator parameters of one accelerator configuration (docs/hardware.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace kaleido::hw {

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
  int lanes = 0;        // detector lanes; 0 = max_groups() (all groups in one round)
  int win_cap = 0;      // window capacity (power of two); 0 = covers max_h * max_w
  uint32_t policies = 7;  // bit 0 fixed, bit 1 rope-orthogonal, bit 2 adaptive
  int mul_pipe = 0;

  // Derived values.
  int segs() const { return rows / group_w; }
  int max_groups() const { return max_k / group_w; }
  int64_t max_tokens() const { return static_cast<int64_t>(max_t) * max_h * max_w; }
  int det_lanes() const { return lanes > 0 ? lanes : max_groups(); }
  int window_cap() const;
  int token_w() const;      // bits of a token index (0..max_tokens-1)
  int max_kt() const { return (max_k + rows - 1) / rows; }
  int max_mt() const { return (max_m + cols - 1) / cols; }
  int tau_w() const { return data_w + 1; }

  // Throws ConfigError naming the parameter and the rule.
  void validate() const;
  // A short name of the configuration for folders and reports, e.g. "r8c8_d8a32_g8".
  std::string name() const;
  // All parameters as (name, value) in a fixed order, for file headers.
  std::vector<std::pair<std::string, std::string>> parameter_list() const;
};

void to_json(nlohmann::json& j, const HwConfig& c);
void from_json(const nlohmann::json& j, HwConfig& c);

// The two default configurations whose RTL is checked in under rtl/.
HwConfig default_config_8x8();
HwConfig default_config_16x16();

}  // namespace kaleido::hw
