// The register map of kld_top, as data: one source of truth for the RTL
// decoder, the generated C++ header the testbench includes, the manifest and
// the documentation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hw/hw_config.hpp"

namespace kaleido::hw {

// RW: written while idle, reads back. RO: the hardware's value (status, counters, constants).
// W1: writing 1 pulses for one cycle (CTRL.START); reads 0.
enum class Access { RW, RO, W1 };
const char* access_name(Access a);  // "rw", "ro", "w1"

struct RegField {
  std::string name;
  int lsb = 0;
  int width = 1;
  Access access = Access::RW;
  uint64_t reset = 0;     // RW: value after reset; RO with `constant`: the value read
  bool constant = false;  // RO: a generator parameter (HW_ID), not a hardware signal
  bool plain = false;     // kld_plain_top implements it too
  std::string doc;
  int msb() const { return lsb + width - 1; }
};

struct Register {
  std::string name;
  uint32_t addr = 0;  // word address of the first element
  int count = 1;      // > 1: an array, one word per element (per group)
  std::vector<RegField> fields;
  std::string doc;
  // RO when every field is RO, W1 when every field is W1, RW otherwise.
  Access access() const;
  bool in_plain_top() const;  // some field is in kld_plain_top
  const RegField& field(const std::string& name) const;  // throws InternalError if absent
};

// Fixed addresses; per-group arrays follow at kGroupBase.
namespace reg {
// Bits of the grid, K and M registers: the software interface, wider than any
// configuration needs, so that the runtime checks at START see every value written.
constexpr int kDimWidth = 16;
// Bits of WIN: a window of up to 2^kDimWidth * 16 positions, for the same reason.
constexpr int kWinWidth = kDimWidth + 4;
// Registers are one bus word wide; 64-bit counters are two registers (_LO, _HI).
constexpr int kWordWidth = 32;
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

// The register map: the single source of the RTL register blocks of both tops
// (register_block.hpp), the C++ header, the manifest and the markdown table.
std::vector<Register> register_map(const HwConfig& c);

// Text of the generated C++ header (namespace kld) used by the testbench.
std::string register_header(const HwConfig& c);
// The register map as a markdown table (kld_regs.md in the RTL folder).
std::string register_markdown(const HwConfig& c);

}  // namespace kaleido::hw
