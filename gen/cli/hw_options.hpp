// Generator parameters on the command line (shared by gen, sim, synth, flow):
// one option per row of hw::hw_fields().
#pragma once

#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hw/hw_config.hpp"

namespace kaleido::cli {

struct HwOptions {
  std::string preset;  // "8x8" or "16x16": the checked-in defaults
  std::vector<int> values;  // one per hw::hw_fields() row, as given (defaults: add_to's)

  void add_to(CLI::App& cmd, const hw::HwConfig& defaults = hw::HwConfig{});
  hw::HwConfig config() const;  // validated
  // Validated but for LANES' upper bound: for `kaleido sim`, which sizes MAX_T/H/W/K/M to the
  // workload first and then validates all (so `--lanes 16` holds against the fitted MAX_K).
  hw::HwConfig config_to_fit() const;
  // A default that depends on the workload: `value` for `option` (e.g. "--max-k") unless the
  // command received it. Throws on an option that is not a hardware field.
  void default_unless_given(const CLI::App& cmd, const std::string& option, int value);
  // The hw_fields() keys of the options the command received.
  std::set<std::string> given_keys(const CLI::App& cmd) const;
};

// The command received `option` (on the command line or in a config file); false for an option
// the command does not have.
bool option_given(const CLI::App& cmd, const std::string& option);

// One configuration: the algorithm's widths follow the hardware's unless the
// command received --data-w, --acc-w or --group-w (on the command line or in a
// config file); then sim/flow check that both agree (a ConfigError otherwise).
void derive_algorithm_widths(const CLI::App& cmd, const hw::HwConfig& hw, int& data_w, int& acc_w, int& group_w);

}  // namespace kaleido::cli
