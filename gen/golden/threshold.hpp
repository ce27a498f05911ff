// Thresholds per group and per diffusion step, and their calibration.
#pragma once

#include <cstdint>
#include <map>
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

// Thresholds relative to each group's RMS, per diffusion step, GEMM and head, as `kaleido study --dit-block`
// calibrates them for every GEMM of a DiT block (block_schedule_<clip>_<proxy>.json): at a step, GEMM g (head h
// for the per-head GEMMs qk and pv) uses tau_j = knob x RMS of group j of its A. The file also names the group
// width, policy and distance the knobs were calibrated with; a reader using other ones is refused.
struct KnobStep {
  int step = 0;
  double sigma = 0.0;
  double snr_target_db = 0.0;  // the per-GEMM output SNR the knobs were calibrated for
  std::map<std::string, std::vector<double>> knobs;  // GEMM name -> one knob per head (one for GEMMs without heads)
};
struct KnobSchedule {
  static constexpr const char* kFormat = "kaleido block threshold schedule 1";
  std::string source;  // what calibrated it (clip, proxy, model)
  int group_w = 0;
  std::string policy, distance;
  std::vector<KnobStep> steps;

  static KnobSchedule load(const std::string& path);  // throws FileError naming the path and the problem
  std::string to_json() const;
  // The knob of `gemm`, head `head`, at diffusion step `step`; `snr_target_db` picks among the targets of the
  // step (negative: the step must have one). Throws ConfigError naming what is missing and what there is.
  double knob(const std::string& gemm, int head, int step, double snr_target_db) const;
  // Knobs mean the same thresholds only with the grouping, policy and distance they were calibrated with:
  // throws ConfigError naming the option (--group-w, --policy, --distance), its value and the file's.
  void check_decisions(int group_w, const std::string& policy, const std::string& distance,
                       const std::string& path) const;
};

// tau_j = round(knob x RMS of group j of a), at most cfg.tau_max(): a relative threshold on an integer operand.
std::vector<uint32_t> thresholds_from_knob(const ReuseConfig& cfg, const IntMatrix& a, double knob);

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
