// Wall-clock seconds for progress lines and run-time records (never for test assertions).
#pragma once

#include <chrono>

namespace kaleido {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace kaleido
