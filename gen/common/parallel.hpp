// Work split over std::threads, with the first exception rethrown to the caller.
#pragma once

#include <cstdint>
#include <functional>

namespace kaleido {

// Runs fn(begin, end) over [0, n) in chunks of `chunk` on up to `threads` threads (the caller's
// included). After an exception no further chunk starts; the first one is rethrown.
void parallel_for(int64_t n, int threads, int64_t chunk, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace kaleido
