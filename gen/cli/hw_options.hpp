// Generator parameters on the command line (shared by gen, sim, synth, flow).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "hw/hw_config.hpp"

namespace kaleido::cli {

struct HwOptions {
  std::string preset;  // "8x8" or "16x16": the checked-in defaults
  hw::HwConfig cfg;

  void add_to(CLI::App& cmd);
  hw::HwConfig config() const;  // validated
};

}  // namespace kaleido::cli
