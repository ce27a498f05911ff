// The closed-loop reuse decision of DESIGN.md section 2, bit exact.
//
// Tokens are visited in scan order. For token i and group g, each allowed
// reference r (same tile, at most window_depth tokens back in scan order)
// has difference d(r) = max_{c in g} |A[i,c] - Ahat[r,c]|. If some r has
// d(r) <= tau_g the pair is REUSE(r) and Ahat[i,g] = Ahat[r,g]; otherwise it
// is COMPUTE and Ahat[i,g] = A[i,g]. Out = Ahat . B then holds exactly.
// cfg.distance = l1 or l2 (float path, the study) replaces d(r) by the mean
// absolute or RMS difference over the group (config.hpp, Distance).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "golden/config.hpp"
#include "golden/scan.hpp"
#include "golden/types.hpp"

namespace kaleido {

enum class PairKind : uint8_t { Compute = 0, Reuse = 1 };

struct PairDecision {
  PairKind kind = PairKind::Compute;
  Axis axis = Axis::T;  // meaningful for Reuse
  int32_t ref = -1;     // reference token for Reuse, -1 for Compute
  int32_t root = -1;    // the token that computed this pair's partial (itself for Compute)
  bool operator==(const PairDecision& o) const {
    return kind == o.kind && ref == o.ref && root == o.root && (kind == PairKind::Compute || axis == o.axis);
  }
};

// Work counters, in the units the hardware counts them.
struct ReuseCounters {
  int64_t pairs = 0;
  int64_t reused_pairs = 0;
  std::vector<int64_t> reused_per_group;
  std::array<int64_t, kNumAxes> reused_per_axis{};
  int64_t tokens_fully_reused = 0;   // every group of the token reused
  int64_t refs_beyond_window = 0;    // in-tile references dropped by the window
  int64_t macs_issued = 0;           // compute pairs * Gw * M
  int64_t macs_skipped = 0;          // reused pairs * Gw * M
  double reuse_ratio() const { return pairs ? static_cast<double>(reused_pairs) / static_cast<double>(pairs) : 0.0; }
  double group_ratio(int g, int64_t tokens) const {
    return tokens ? static_cast<double>(reused_per_group[static_cast<size_t>(g)]) / static_cast<double>(tokens) : 0.0;
  }
};

template <class T>
struct ReuseResult {
  int groups = 0;
  std::vector<PairDecision> decisions;  // token-major: [token * groups + g]
  Matrix<T> a_eff;                      // effective inputs Ahat (N x K)
  ReuseCounters counters;
  int64_t window_depth = 0;             // the depth that was applied
  int64_t required_window_depth = 0;    // the depth the scan order needs
  const PairDecision& at(int32_t token, int g) const {
    return decisions[static_cast<size_t>(token) * static_cast<size_t>(groups) + static_cast<size_t>(g)];
  }
};

using IntReuse = ReuseResult<int32_t>;
using FloatReuse = ReuseResult<float>;

// Integer path: A holds DATA_W-bit signed values (N x K, token-major).
IntReuse run_reuse(const ReuseConfig& cfg, const IntMatrix& a);
// Float path: thresholds from cfg.tau_float.
FloatReuse run_reuse(const ReuseConfig& cfg, const FloatMatrix& a);

// The float path with A streamed: rows are pushed in scan order and only the reference window is stored (a ring of
// window_depth + 1 rows of A, of Ahat and of decisions), so A may be far larger than memory (the study's P of
// every query at 32,760 tokens: 4 GiB whole, 0.4 GiB as the window of a 480p frame). Decisions, Ahat and counters
// are those of run_reuse on the whole matrix.
class StreamedReuse {
 public:
  explicit StreamedReuse(const ReuseConfig& cfg);
  ~StreamedReuse();
  StreamedReuse(const StreamedReuse&) = delete;
  StreamedReuse& operator=(const StreamedReuse&) = delete;

  int64_t size() const;      // tokens
  int64_t pushed() const;    // tokens decided so far
  int32_t next_token() const;  // the token push() takes next (scan order), -1 when all are pushed
  const ScanOrder& scan() const;
  int groups() const;
  int64_t ring_rows() const;  // rows held: min(N, window depth + 1)
  // Decides next_token() from its row of A (K values); returns its Ahat row, valid until the next push.
  const float* push(const float* row);
  // The groups' decisions of the token pushed last, valid until the next push.
  const PairDecision* decisions_of_last();
  // Once every token is pushed.
  ReuseCounters counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The difference d(r) of one (token, group) against one reference, as the
// detector computes it (exposed for block-level tests of the hardware).
int64_t group_difference(const IntMatrix& a, const IntMatrix& a_eff, int32_t token, int32_t ref, int g, int group_w);

}  // namespace kaleido
