// The register map of kld_top, as data: one source of truth for the RTL
// decoder, the generated C++ header the testbench includes, the manifest and
// the documentation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hw/hw_config.hpp"

namespace kaleido::hw {

enum class Access { RW, RO, WO };

struct RegField {
  std::string name;
  int lsb = 0;
  int width = 1;
  std::string doc;
};

struct Register {
  std::string name;
  uint32_t addr = 0;   // word address of the first element
  int count = 1;       // > 1: an array, one word per element (per group)
  Access access = Access::RW;
  std::vector<RegField> fields;
  std::string doc;
};

// Fixed addresses; per-group arrays follow at kGroupBase.
namespace reg {
constexpr uint32_t kCtrl = 0;
constexpr uint32_t kStatus = 1;
constexpr uint32_t kDimT = 2;
constexpr uint32_t kDimH = 3;
constexpr uint32_t kDimW = 4;
constexpr uint32_t kDimK = 5;
constexpr uint32_t kDimM = 6;
constexpr uint32_t kTileH = 7;
constexpr uint32_t kTileW = 8;
constexpr uint32_t kWin = 9;
constexpr uint32_t kPolicy = 10;
constexpr uint32_t kCyclesLo = 11;
constexpr uint32_t kCyclesHi = 12;
constexpr uint32_t kBusyLo = 13;
constexpr uint32_t kBusyHi = 14;
constexpr uint32_t kStallLo = 15;
constexpr uint32_t kStallHi = 16;
constexpr uint32_t kMacsIssuedLo = 17;
constexpr uint32_t kMacsIssuedHi = 18;
constexpr uint32_t kMacsSkippedLo = 19;
constexpr uint32_t kMacsSkippedHi = 20;
constexpr uint32_t kHwId = 21;
constexpr uint32_t kStallOut = 22;
constexpr uint32_t kStallTrace = 23;
constexpr uint32_t kWaitGather = 24;
constexpr uint32_t kLoadWCycles = 25;
constexpr uint32_t kStarved = 26;
constexpr uint32_t kGroupBase = 32;
}  // namespace reg

// Per-group arrays: TAU at kGroupBase, GROUP_CFG after it, REUSED after that.
inline uint32_t tau_addr(const HwConfig&, int g) { return reg::kGroupBase + static_cast<uint32_t>(g); }
inline uint32_t group_cfg_addr(const HwConfig& c, int g) {
  return reg::kGroupBase + static_cast<uint32_t>(c.max_groups() + g);
}
inline uint32_t reused_addr(const HwConfig& c, int g) {
  return reg::kGroupBase + static_cast<uint32_t>(2 * c.max_groups() + g);
}
int reg_addr_width(const HwConfig& c);

std::vector<Register> register_map(const HwConfig& c);

// Text of the generated C++ header (namespace kld) used by the testbench.
std::string register_header(const HwConfig& c);

}  // namespace kaleido::hw
