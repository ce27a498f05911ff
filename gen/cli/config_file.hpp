// Options from a config file: TOML (CLI11's reader) or JSON (nlohmann-json),
// told apart by the first character. Sections name subcommands:
//   TOML: [golden] grid = "4x8x8"     JSON: {"golden": {"grid": "4x8x8"}}
// Command-line values override the file.
#pragma once

#include <CLI/CLI.hpp>

namespace kaleido::cli {

class JsonOrTomlConfig : public CLI::ConfigTOML {
 public:
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;
};

// Adds --config FILE to `app` with the reader above.
void add_config_option(CLI::App& app);

}  // namespace kaleido::cli
