// Reading and writing bit fields of Verilated ports of any width (CData,
// SData, IData, QData or VlWide), so the harness works for every configuration.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>

#include "verilated.h"

namespace kld_tb {

template <class P>
void set_bits(P& port, int lsb, int width, uint64_t value) {
  if constexpr (std::is_integral_v<P>) {
    const uint64_t mask = width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
    uint64_t v = static_cast<uint64_t>(port);
    v = (v & ~(mask << lsb)) | ((value & mask) << lsb);
    port = static_cast<P>(v);
  } else {
    for (int b = 0; b < width; ++b) {
      const int pos = lsb + b;
      const uint32_t bit = 1u << (pos % 32);
      if ((value >> b) & 1u)
        port[pos / 32] |= bit;
      else
        port[pos / 32] &= ~bit;
    }
  }
}

template <class P>
uint64_t get_bits(const P& port, int lsb, int width) {
  if constexpr (std::is_integral_v<P>) {
    const uint64_t mask = width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
    return (static_cast<uint64_t>(port) >> lsb) & mask;
  } else {
    uint64_t v = 0;
    for (int b = 0; b < width; ++b) {
      const int pos = lsb + b;
      if ((port[pos / 32] >> (pos % 32)) & 1u) v |= uint64_t{1} << b;
    }
    return v;
  }
}

// Hexadecimal text of a port value (most significant digit first).
template <class P>
std::string hex(const P& port) {
  char buf[24];
  if constexpr (std::is_integral_v<P>) {
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(port));
    return buf;
  } else {
    std::string s;
    bool lead = true;
    for (int w = static_cast<int>(sizeof(port) / sizeof(port[0])) - 1; w >= 0; --w) {
      if (lead && port[w] == 0 && w > 0) continue;
      std::snprintf(buf, sizeof buf, lead ? "%x" : "%08x", port[w]);
      s += buf;
      lead = false;
    }
    return s;
  }
}

inline int64_t sign_extend(uint64_t v, int width) {
  if (width >= 64) return static_cast<int64_t>(v);
  const uint64_t sign = uint64_t{1} << (width - 1);
  v &= (uint64_t{1} << width) - 1;
  return static_cast<int64_t>((v ^ sign) - sign);
}

}  // namespace kld_tb
