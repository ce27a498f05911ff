// Two's complement helpers shared by the golden model and the generators.
#pragma once

#include <cstdint>

namespace kaleido {

// Wrap an integer to a signed `bits`-wide two's complement value (1..64 bits).
inline int64_t wrap_signed(uint64_t v, int bits) {
  if (bits >= 64) return static_cast<int64_t>(v);
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  v &= mask;
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((v ^ sign) - sign);
}
inline int64_t wrap_signed(int64_t v, int bits) { return wrap_signed(static_cast<uint64_t>(v), bits); }

inline int64_t signed_min(int bits) { return -(int64_t{1} << (bits - 1)); }
inline int64_t signed_max(int bits) { return (int64_t{1} << (bits - 1)) - 1; }
inline bool fits_signed(int64_t v, int bits) { return v >= signed_min(bits) && v <= signed_max(bits); }

// Bits needed to hold values 0..n-1, at least 1 (n <= 2 gives 1): the width
// of an index or address of n items. The one clog2 of the project: the
// generators (vlog, hw), the golden model and the testbench use it.
constexpr int clog2(int64_t n) {
  int b = 1;
  while (b < 63 && (int64_t{1} << b) < n) ++b;
  return b;
}

}  // namespace kaleido
