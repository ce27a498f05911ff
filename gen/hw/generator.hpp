// The RTL generator: every block of one configuration, the manifest and the
// register-map header, written as a folder all-or-nothing.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/hw_config.hpp"
#include "vlog/design.hpp"

namespace kaleido::hw {

// All modules of the configuration, leaves first; tops are kld_top and kld_plain_top.
vlog::Design build_design(const HwConfig& c);

// Files, parameters, ports, register map, waivers and deliberately unused bits.
nlohmann::json manifest(const HwConfig& c, const vlog::Design& d);

struct GeneratedFile {
  std::string name;
  std::string text;
};
// Everything that `kaleido gen` writes, in memory, in a fixed order.
std::vector<GeneratedFile> generate_files(const HwConfig& c);

// Writes generate_files(c) into `dir` (created or replaced as a whole).
// Nothing is left behind on failure. Throws ConfigError / FileError.
void write_rtl(const HwConfig& c, const std::filesystem::path& dir);

}  // namespace kaleido::hw
