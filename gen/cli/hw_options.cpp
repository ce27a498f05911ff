#include "cli/hw_options.hpp"

#include "common/error.hpp"

namespace kaleido::cli {

void HwOptions::add_to(CLI::App& cmd, const hw::HwConfig& defaults) {
  const auto& fields = hw::hw_fields();
  values.clear();
  for (const hw::HwField& f : fields) values.push_back(static_cast<int>(f.get(defaults)));
  cmd.add_option("--preset", preset, "Start from a default configuration: 8x8 or 16x16");
  for (size_t i = 0; i < fields.size(); ++i) cmd.add_option(fields[i].option, values[i], fields[i].help)->capture_default_str();
}

hw::HwConfig HwOptions::config() const {
  hw::HwConfig c = config_to_fit();
  c.validate();
  return c;
}

hw::HwConfig HwOptions::config_to_fit() const {
  hw::HwConfig c;
  const auto& fields = hw::hw_fields();
  for (size_t i = 0; i < fields.size() && i < values.size(); ++i) fields[i].set(c, values[i]);
  if (!preset.empty()) {
    const hw::HwConfig d = preset == "8x8" ? hw::default_config_8x8()
                           : preset == "16x16" ? hw::default_config_16x16()
                                               : throw ConfigError("preset", preset, "must be 8x8 or 16x16");
    // A preset fixes the array size; other options keep their values.
    c.rows = d.rows;
    c.cols = d.cols;
  }
  hw::HwConfig without_lanes = c;  // LANES' upper bound is MAX_K/GROUP_W after the fit
  without_lanes.lanes = 0;
  without_lanes.validate();
  return c;
}

void HwOptions::default_unless_given(const CLI::App& cmd, const std::string& option, int value) {
  const auto& fields = hw::hw_fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (option != fields[i].option) continue;
    if (!option_given(cmd, option)) values[i] = value;
    return;
  }
  throw Error("internal: " + option + " is not a hardware option");
}

std::set<std::string> HwOptions::given_keys(const CLI::App& cmd) const {
  std::set<std::string> keys;
  for (const hw::HwField& f : hw::hw_fields())
    if (option_given(cmd, f.option)) keys.insert(f.key);
  return keys;
}

bool option_given(const CLI::App& cmd, const std::string& option) {
  const CLI::Option* o = cmd.get_option_no_throw(option);
  return o != nullptr && o->count() > 0;
}

void derive_algorithm_widths(const CLI::App& cmd, const hw::HwConfig& hw, int& data_w, int& acc_w, int& group_w) {
  auto given = [&](const char* option) { return option_given(cmd, option); };
  if (!given("--data-w")) data_w = hw.data_w;
  if (!given("--acc-w")) acc_w = hw.acc_w;
  if (!given("--group-w")) group_w = hw.group_w;
}

}  // namespace kaleido::cli
