// Drift check: does a folder of generated RTL still equal what the generator
// produces for the parameters recorded in its manifest?
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kaleido::hw {

struct DriftReport {
  std::string config_name;
  std::vector<std::string> differences;  // "kld_pe.v: differs at line 12", "x.v: not generated", ...
  bool clean() const { return differences.empty(); }
};

// Reads DIR/manifest.json for the parameters; throws FileError when it is
// missing or malformed.
DriftReport check_drift(const std::filesystem::path& dir);

// The checked-in folders of the default configurations (rtl/<name>).
std::vector<std::filesystem::path> default_rtl_dirs();

}  // namespace kaleido::hw
