// Thresholds per group and per diffusion step, and their calibration.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "golden/config.hpp"
#include "golden/types.hpp"

namespace kaleido {

// A table of integer thresholds: one row per diffusion step, one column per
// group. Read from CSV (a row per line, values separated by commas; '#'
// starts a comment) or JSON ({"tau": [[...], ...]}).
class ThresholdSchedule {
 public:
  ThresholdSchedule() = default;
  explicit ThresholdSchedule(std::vector<std::vector<uint32_t>> table) : table_(std::move(table)) {}
  static ThresholdSchedule load(const std::string& path);

  int steps() const { return static_cast<int>(table_.size()); }
  // Thresholds of step s; throws when s is out of range.
  const std::vector<uint32_t>& at_step(int s) const;
  // Throws ConfigError unless every row has `groups` values fitting DATA_W+1 bits.
  void validate(int groups, int data_w) const;

 private:
  std::vector<std::vector<uint32_t>> table_;
};

struct Calibration {
  std::vector<uint32_t> tau;
  double achieved = 0.0;  // reuse ratio, or SNR / PSNR in dB reached
};

// Per group, the smallest threshold whose reuse ratio reaches `target`
// (groups decide independently, so each is searched on its own).
Calibration calibrate_reuse_ratio(const ReuseConfig& cfg, const IntMatrix& a, double target);

// One threshold shared by all groups, the largest whose output PSNR (on
// Out = Ahat . B against A . B) stays at or above `target_db`.
Calibration calibrate_psnr(const ReuseConfig& cfg, const IntMatrix& a, const IntMatrix& b, double target_db);
// The same against the output SNR (10 log10 of signal power over MSE).
Calibration calibrate_snr(const ReuseConfig& cfg, const IntMatrix& a, const IntMatrix& b, double target_db);

}  // namespace kaleido
