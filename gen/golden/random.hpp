// A small seeded generator with the same output on every platform and
// standard library (std::normal_distribution is not portable), so workloads
// and golden vectors are reproducible from their seed.
#pragma once

#include <cmath>
#include <cstdint>

namespace kaleido {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed ^ 0x9E3779B97F4A7C15ull) {}
  uint64_t next() {  // splitmix64
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  int64_t range(int64_t lo, int64_t hi) {  // inclusive
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  double normal() {  // Box-Muller
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u = 0.0;
    while (u <= 0.0) u = uniform();
    const double v = uniform();
    const double r = std::sqrt(-2.0 * std::log(u));
    spare_ = r * std::sin(2.0 * M_PI * v);
    has_spare_ = true;
    return r * std::cos(2.0 * M_PI * v);
  }

 private:
  uint64_t s_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace kaleido
