// A sweep described as data (docs/sweep.md): a base configuration and axes
// whose cartesian product (or the union of several products) gives the
// points; each point is one hardware configuration on one Liberty library at
// one target clock, synthesised for every listed top module.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/hw_config.hpp"
#include "ppa/yosys_flow.hpp"

namespace kaleido::sweep {

struct LibrarySpec {
  std::string label;                         // "generic", "sky130_hd", or a file's stem
  std::vector<std::filesystem::path> files;  // empty = the project's generic library
  // Non-empty when an alias names PDK files that are not installed: the
  // point is skipped with this reason (never silently).
  std::string unavailable;
};

struct SweepPoint {
  std::string id;  // unique folder name, e.g. r4c4_d8a32_g8_generic_2ns
  hw::HwConfig config;
  double clock_ns = 0;
  LibrarySpec library;
  int pes() const { return config.rows * config.cols; }
  // "r4c4_d8a32_g8 generic 2ns" for progress lines.
  std::string label() const;
};

struct SweepSpec {
  std::string name;
  std::string description;
  std::vector<std::string> tops;
  double activity = 0.1;  // vectorless activity, transitions per cycle
  std::string recipe = ppa::kDefaultSynthRecipe;  // synthesis recipe (ppa::synth_recipes())
  std::vector<SweepPoint> points;  // in definition order, duplicates removed
  int duplicates_removed = 0;
  nlohmann::ordered_json source;  // the file's content, recorded in sweep.json
};

// Library aliases and the files they stand for (under shared_dir()/pdk,
// except "generic"), for documentation and error messages.
std::vector<std::string> library_aliases();

// Parses and validates a sweep; `base_dir` resolves relative Liberty paths;
// `origin` names the file in error messages. Throws ConfigError / Error.
// Axes combine in the order they are written (last axis fastest).
SweepSpec parse_sweep(const nlohmann::ordered_json& j, const std::filesystem::path& base_dir, const std::string& origin);
// Reads a JSON sweep file. Throws FileError / ConfigError.
SweepSpec load_sweep(const std::filesystem::path& file);

// Shortest text of a clock period for ids and labels: 2 -> "2", 2.5 -> "2.5".
std::string clock_text(double ns);

}  // namespace kaleido::sweep
