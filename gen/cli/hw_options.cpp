#include "cli/hw_options.hpp"

#include "common/error.hpp"

namespace kaleido::cli {

void HwOptions::add_to(CLI::App& cmd) {
  hw::HwConfig& c = cfg;
  cmd.add_option("--preset", preset, "Start from a default configuration: 8x8 or 16x16");
  cmd.add_option("--rows", c.rows, "ROWS of the PE array")->capture_default_str();
  cmd.add_option("--cols", c.cols, "COLS of the PE array")->capture_default_str();
  cmd.add_option("--hw-data-w", c.data_w, "DATA_W of the hardware")->capture_default_str();
  cmd.add_option("--hw-acc-w", c.acc_w, "ACC_W of the hardware")->capture_default_str();
  cmd.add_option("--hw-group-w", c.group_w, "GROUP_W: channel group width (power of two dividing ROWS)")
      ->capture_default_str();
  cmd.add_option("--max-t", c.max_t, "largest T")->capture_default_str();
  cmd.add_option("--max-h", c.max_h, "largest H")->capture_default_str();
  cmd.add_option("--max-w", c.max_w, "largest W")->capture_default_str();
  cmd.add_option("--max-k", c.max_k, "largest K")->capture_default_str();
  cmd.add_option("--max-m", c.max_m, "largest M")->capture_default_str();
  cmd.add_option("--lanes", c.lanes, "detector lanes (0 = one per group)")->capture_default_str();
  cmd.add_option("--win-cap", c.win_cap, "reference window capacity, power of two (0 = MAX_H*MAX_W rounded up)")
      ->capture_default_str();
  cmd.add_option("--policies", c.policies, "policies built in: bit 0 fixed, 1 rope-orthogonal, 2 adaptive")
      ->capture_default_str();
  cmd.add_option("--mul-pipe", c.mul_pipe, "pipeline register after each PE multiplier (0 or 1)")->capture_default_str();
}

hw::HwConfig HwOptions::config() const {
  hw::HwConfig c = cfg;
  if (!preset.empty()) {
    const hw::HwConfig d = preset == "8x8" ? hw::default_config_8x8()
                           : preset == "16x16" ? hw::default_config_16x16()
                                               : throw ConfigError("preset", preset, "must be 8x8 or 16x16");
    // A preset fixes the array size; other options keep their values.
    c.rows = d.rows;
    c.cols = d.cols;
  }
  c.validate();
  return c;
}

}  // namespace kaleido::cli
