// `kaleido lint`: Verilator --lint-only -Wall over a matrix of configurations
// (or over given RTL folders). Waivers can only be per line, justified, and
// are listed in the report from each folder's manifest.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/hw_config.hpp"

namespace kaleido::checks {

struct LintResult {
  std::string name;               // configuration or folder
  std::string top;
  bool clean = false;
  std::string output;             // Verilator's messages (empty when clean)
  nlohmann::json waivers = nlohmann::json::array();
  double seconds = 0.0;
};

// The built-in matrix: ROWS/COLS from 1 to 32, DATA_W 4/8/16, several group
// widths, MUL_PIPE, detector lanes and policy subsets.
std::vector<hw::HwConfig> default_lint_matrix();

// Lints kld_top and kld_plain_top of an RTL folder.
std::vector<LintResult> lint_folder(const std::filesystem::path& dir);
// Generates each configuration into a temporary folder and lints it.
std::vector<LintResult> lint_matrix(const std::vector<hw::HwConfig>& configs,
                                    const std::function<void(const std::string&)>& progress = {});

nlohmann::json lint_report_json(const std::vector<LintResult>& results);
std::string lint_report_markdown(const std::vector<LintResult>& results);

}  // namespace kaleido::checks
