// On-chip memory of a configuration, by role: the formula of each role in the
// generator's parameters, and its bits. Recorded in the manifest
// (`sram.<top>.roles`, `sram.<top>.sram_bits_total`); a test checks the totals
// against the memories instantiated in the generated RTL.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hw/hw_config.hpp"

namespace kaleido::hw {

struct SramRole {
  std::string role;     // what the memory holds
  std::string formula;  // banks x depth x width, in the generator's parameters
  int64_t banks = 0, depth = 0, width = 0;
  int64_t bits() const { return banks * depth * width; }
};

// Both tops name their A banks <prefix><group> (u_a_0, u_a_1, ...): the generator instantiates them by this
// name and the flow finds their accesses in a gate-level replay by it.
inline constexpr const char* kABankInstancePrefix = "u_a_";

// The memories of "kld_top" or "kld_plain_top".
std::vector<SramRole> sram_roles(const HwConfig& c, const std::string& top);
int64_t sram_bits_total(const std::vector<SramRole>& roles);
// {"kld_top": {"roles": [...], "sram_bits_total": n}, "kld_plain_top": {...}}
nlohmann::json sram_json(const HwConfig& c);

}  // namespace kaleido::hw
