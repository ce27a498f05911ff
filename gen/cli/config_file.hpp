// Options from a config file: TOML (CLI11's reader) or JSON (nlohmann-json),
// told apart by the first character. Sections name subcommands:
//   TOML: [golden] grid = "4x8x8"     JSON: {"golden": {"grid": "4x8x8"}}
// Command-line values override the file.
//
// The file is read strictly: a syntax error, an unknown section or key, or a
// value of the wrong type is a ConfigError naming the file, the line (where
// known), the key and the nearest valid key; nothing is silently ignored.
#pragma once

#include <CLI/CLI.hpp>

namespace kaleido::cli {

class JsonOrTomlConfig : public CLI::ConfigTOML {
 public:
  // `app` is the whole command line: keys are checked against its
  // subcommands and options when the file is read.
  explicit JsonOrTomlConfig(const CLI::App* app) : app_(app) {}
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;

 private:
  const CLI::App* app_;
};

// Adds --config FILE to `app` with the reader above.
void add_config_option(CLI::App& app);

}  // namespace kaleido::cli
