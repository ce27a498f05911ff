// FNV-1a (64 bit): the one content hash of kaleido, for cache folder names
// (Verilator builds, generated RTL), configuration names and RTL digests.
// Not cryptographic: it tells versions apart, nothing more.
#pragma once

#include <cstdint>
#include <string_view>

namespace kaleido {

constexpr uint64_t kFnv1aOffset = 0xcbf29ce484222325ull;

// Continues the hash `h` (start from kFnv1aOffset) over `bytes`.
inline uint64_t fnv1a(uint64_t h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace kaleido
