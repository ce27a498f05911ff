// Options that describe one reuse GEMM and its synthetic workload, shared by
// the subcommands that run the golden model (golden, sim, ...).
#pragma once

#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/hw_options.hpp"
#include "golden/config.hpp"
#include "golden/workload.hpp"
#include "workload/qk_workload.hpp"

namespace kaleido::cli {

// With no threshold option at all, thresholds are calibrated for this output
// SNR, so that the defaults show reuse at work at a quality worth having.
constexpr double kDefaultTargetSnrDb = 30.0;

struct WorkloadOptions {
  std::string grid = "4x8x8";
  int channels = 32;
  int out_cols = 16;
  int data_w = 8;
  int acc_w = 32;
  int group_w = 8;
  std::string band = "none";
  std::string policy = "rope-orthogonal";
  std::string axes = "t,h,w";
  std::string mode = "channel";
  std::string distance = "max";  // only max drives hardware; the option names why l1/l2 are refused
  std::string tile = "0x0";
  int window = 0;
  std::string tau;  // "" and no other source: calibrated for kDefaultTargetSnrDb
  std::string tau_schedule;
  std::string block_schedule;  // knobs per step, GEMM and head (`kaleido study --dit-block`)
  std::string schedule_gemm = "qk";
  int schedule_head = 0;
  double schedule_snr = -1.0;  // negative: the step's only target
  int step = 0;
  double target_reuse = -1.0;
  double target_psnr = -1.0;
  double target_snr = -1.0;
  uint64_t seed = 1;
  // The default synthetic workload looks like a late diffusion step of a static-camera shot: smooth fields,
  // little noise, the left half of every frame a static background. With the default SNR-calibrated
  // thresholds about half the pairs reuse (docs/golden-model.md).
  double spatial_corr = 0.97;
  double temporal_corr = 0.99;
  double noise = 0.02;
  int static_w = -1;  // -1: half the grid width

  void add_to(CLI::App& cmd);
  // The reuse configuration without thresholds (apply_thresholds sets them).
  ReuseConfig config() const;
  SyntheticSpec synthetic() const;
  // Fills cfg.tau from --tau, --tau-schedule/--step, --block-schedule/--step, or calibration.
  // Returns a line saying where the thresholds came from.
  std::string apply_thresholds(ReuseConfig& cfg, const IntMatrix& a, const IntMatrix& b) const;
};

// One GEMM workload ready to run: a real clip through the proxy encoder
// (`clip` non-empty: a path or "cockatoo") or the synthetic generator, with
// the thresholds applied.
struct PreparedWorkload {
  ReuseConfig cfg;
  IntMatrix a, b;
  std::vector<IntMatrix> more_b;  // further key tiles (qk with key_tiles > 1), each the shape of b
  nlohmann::json description;
};
PreparedWorkload prepare_workload(const WorkloadOptions& w, const std::string& clip, int diffusion_step);

// The attention GEMM S = Q K^T of one head (workload/qk_workload.hpp) as key tiles: A = Q of every
// token on spec.grid, B = the first `keys` columns of K^T (keys in scan order), more_b the next
// `tiles` - 1 tiles of `keys` columns (tiles 0: every whole tile). K is the model's head dimension
// and M = keys; w's other fields (policy, band, thresholds, calibrated on the first tile) apply.
PreparedWorkload prepare_qk_workload(WorkloadOptions w, const workload::QkWorkloadSpec& spec, int keys,
                                     int tiles = 1);

// Where a hardware run's operands come from (`kaleido sim` and `kaleido flow`), with the options
// that pick them: one key tile of an attention head's Q K^T (qk), a clip's proxy latent times
// random weights (latent), or the synthetic generator. Options the chosen kind does not use are
// refused, not ignored.
struct WorkloadSource {
  std::string kind;  // the command's default: qk (flow) or synthetic (sim)
  std::string clip = "cockatoo";
  int diffusion_step = 47;  // of a 50-step flow schedule with shift 5: sigma 0.24, a late step
  std::string proxy = "denoised";
  std::string model = "wan2.1-1.3b";
  int key_tiles = 1;  // qk: key tiles to run (0: every whole tile); the option is the command's to offer
  // Thresholds of the latent and synthetic kinds when no threshold option is given (negative: the
  // shared default, calibrated for kDefaultTargetSnrDb).
  double untuned_target_reuse = -1.0;

  explicit WorkloadSource(std::string default_kind) : kind(std::move(default_kind)) {}
  void add_to(CLI::App& cmd);
  // The kind actually chosen: without --workload, `--clip ''` means synthetic and a clip given to a
  // command whose default is synthetic means latent. Throws ConfigError on options that do not
  // apply. With qk, MAX_K follows the model's head dimension unless --max-k is given.
  std::string resolve(const CLI::App& cmd, HwOptions& hw) const;
  // The operands with thresholds applied; `w` is completed (K, M, band) for the qk kind.
  PreparedWorkload prepare(const CLI::App& cmd, WorkloadOptions& w, const hw::HwConfig& hw,
                           const std::string& kind) const;
};

// The command received a threshold option (--tau, --tau-schedule, --block-schedule or a --target-*);
// without one, WorkloadOptions::apply_thresholds calibrates for kDefaultTargetSnrDb.
bool threshold_option_given(const CLI::App& cmd);

// "TxHxW" -> Grid; "HxW" -> pair. Throws ConfigError.
// Integers separated by `sep` ("4x8x8", "256,512"); ConfigError naming option `what` otherwise.
std::vector<long> parse_list(const std::string& s, char sep, const char* what);
Grid parse_grid(const std::string& s);
std::pair<int, int> parse_pair(const std::string& s, const char* what);

}  // namespace kaleido::cli
