// The methods the study compares on one attention head, behind one
// interface: a knob, the work executed at a knob value (counted over all
// tokens), and the quality of the attention output there.
//
// MAC accounting, identical for every method (DESIGN.md sections 2-3):
//   dense       Q K^T: N_q N_k d MACs, P V: N_q N_k d MACs.
//   reuse       Q K^T: every COMPUTE (token, group) pair costs Gw N_k MACs, a
//               REUSE pair 0 (its partial row is copied). With K reused too, a
//               (query, key, group) partial is computed only when both the
//               query and the key compute that group. P V: a query row is
//               skipped only when all its groups reuse the same reference
//               token r, because then Qhat_i = Qhat_r and O_i = O_r exactly;
//               every other row costs N_k d.
//   block-sparse  Q K^T and P V: |a| |b| d MACs per kept tile (a, b).
// Savings = fraction of Q K^T + P V MACs not executed. The methods' own
// overheads (mask estimation MACs, reuse detector comparisons) are reported
// separately and are not subtracted.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "golden/config.hpp"
#include "golden/reuse.hpp"
#include "study/attention.hpp"
#include "study/peers.hpp"
#include "workload/qkv.hpp"

namespace kaleido::study {

struct Execution {
  int64_t dense = 0;  // MACs of one dense product (N_q N_k d)
  int64_t qk = 0;     // Q K^T MACs executed
  int64_t pv = 0;     // P V MACs executed
  int64_t overhead = 0;
  std::string overhead_kind;
  double savings() const { return dense ? 1.0 - static_cast<double>(qk + pv) / (2.0 * static_cast<double>(dense)) : 0.0; }
  double qk_savings() const { return dense ? 1.0 - static_cast<double>(qk) / static_cast<double>(dense) : 0.0; }
  double pv_savings() const { return dense ? 1.0 - static_cast<double>(pv) / static_cast<double>(dense) : 0.0; }
};

class Method {
 public:
  virtual ~Method() = default;
  virtual std::string name() const = 0;
  virtual std::string family() const = 0;  // "dense", "reuse", "block-sparse"
  virtual std::string knob() const = 0;
  virtual double knob_min() const = 0;
  virtual double knob_max() const = 0;
  virtual bool savings_rise_with_knob() const = 0;
  virtual bool continuous() const { return true; }
  // Savings tolerance of the knob search: methods whose every execution costs a full attention (reuse on P V)
  // stop at 0.3 percentage points instead of 0.02.
  virtual double knob_tolerance() const { return 2e-4; }
  // Knob values for a quality-versus-savings curve.
  virtual std::vector<double> sweep(int points) const;
  // Decisions or mask at this knob, and the work they execute.
  virtual Execution execute(double knob) = 0;
  // Quality at the knob of the last execute().
  virtual AttentionQuality evaluate(const AttentionEvaluator& ev) const = 0;
  // Method-specific facts at the last execute() (reuse ratios, block shape, ...).
  virtual nlohmann::json detail() const { return nlohmann::json::object(); }
};

struct ReuseMethodSpec {
  std::string name = "channel-reuse";
  int group_w = 8;
  Policy policy = Policy::RopeOrthogonal;
  Mode mode = Mode::ChannelReuse;
  bool reuse_keys = false;  // reuse K too (S = Qhat Khat^T)
  // Reuse on P V as well: Out = Phat V with A = P (rows: queries on the grid; groups: runs of Gw keys, keys
  // padded with zeros to a multiple of Gw), P = softmax(Qhat K^T / sqrt d) of every query, thresholds
  // knob x RMS of each P group. P is streamed in scan order (golden StreamedReuse): memory is the reference
  // window's rows, not N x N, at the cost of computing P twice per knob (the groups' RMS, then the decisions).
  bool reuse_p = false;
  // reuse_p: the query tokens whose Phat rows are kept for evaluate() (the evaluator's rows); empty: every token.
  std::vector<int32_t> kept_rows;
  // Group distance (golden/config.hpp: max, the hardware's; l1 = mean |d|; l2 = RMS of d; tau in data units).
  Distance distance = Distance::Max;
  // Every axis allowed for every group, RoPE band or not (with Policy::Adaptive: the passing reference with the
  // smallest distance among t, h, w). The golden model is run as if Q had no RoPE band; reports still name each
  // group's RoPE axes.
  bool all_axes = false;
  int tile_h = 0, tile_w = 0;
  int threads = 1;  // for P of every query (reuse_p)
};

// RMS of each group of `group_w` consecutive columns over all rows: the unit of the study's thresholds.
std::vector<float> group_rms(const FloatMatrix& x, int group_w);

// Channel-wise reuse (golden model, float path) on Q (and K), thresholds
// tau_g = knob * rms_g with rms_g the RMS of group g's values over all tokens.
// Mode::TokenReuse gives the token-level baseline.
std::unique_ptr<Method> make_reuse_method(const AttentionInputs& in, const ReuseMethodSpec& spec);
std::unique_ptr<Method> make_dense_method(const AttentionInputs& in);

struct PeerParams {
  double progress = 0.0;       // denoising progress of the step, for SPADE-style
  double spade_shortcut = 0.95;
  double sparge_sim = 0.0;     // intra-block cosine below which a block is kept whole
  BlockShape block{4, 4, 4};   // fixed-shape peers (SpargeAttn, ScalingAttention, sliding tile)
  const AttentionInputs* calibration = nullptr;  // ScalingAttention-style's offline inputs
  // The exact tile mass of the inputs (exact_block_attention_mass with `block`), computed once per step and shared
  // by oracle-block and oracle-block-reuse; null: computed by each.
  const std::vector<double>* oracle_mass = nullptr;
  int calibration_rows_per_block = 1;
  uint64_t seed = 1;
  int threads = 1;
};

std::unique_ptr<Method> make_spade_method(const AttentionInputs& in, const PeerParams& p);
std::unique_ptr<Method> make_sparge_method(const AttentionInputs& in, const PeerParams& p);
std::unique_ptr<Method> make_veda_method(const AttentionInputs& in, const PeerParams& p);
std::unique_ptr<Method> make_scaling_method(const AttentionInputs& in, const PeerParams& p);
std::unique_ptr<Method> make_sliding_tile_method(const AttentionInputs& in, const PeerParams& p);
// The oracle block mask: the exact tile mass of the inputs being run (every query), tiles kept greedily by mass
// per MAC under the budget (diagonal always kept). No real method can know it before computing attention: it is
// an upper bound for block-sparse masks of that tile shape, not a competitor with a cost.
std::unique_ptr<Method> make_oracle_block_method(const AttentionInputs& in, const PeerParams& p);
// The combined method (issue 11 item 6), "oracle-block-reuse": the oracle block mask at the knob `keep` picks the
// computed tiles; inside them, channel-wise reuse on Q (golden model, `reuse`'s policy and distance, thresholds
// tau_g = tau_over_rms x RMS_g; decisions over all tokens, independent of the mask) skips further MACs:
//   Q K^T  a COMPUTE (query i, group g) pair costs Gw |K(i)| MACs, K(i) the keys of the tiles kept for i's query
//          block; a REUSE pair copies the partial products of its reference r, which hold at least K(r) (r computed
//          them, or copied and completed them in turn), and computes only K(i) \ K(r): Gw |K(i) \ K(r)| MACs.
//   P V    |K(i)| d MACs per query row, except a row whose every group reuses one and the same reference whose
//          query block keeps the same tiles: its output is a copy.
// Overhead column: the detector's comparisons, as for reuse (the oracle's mask costs nothing to estimate; it is not
// a real method's). At tau 0 the output equals oracle-block's at the same keep.
std::unique_ptr<Method> make_oracle_block_reuse_method(const AttentionInputs& in, const PeerParams& p,
                                                       const ReuseMethodSpec& reuse, double tau_over_rms);

// The knob whose savings (attention, or Q K^T only when qk_basis) is closest
// to `target`, by bisection for continuous methods and by scanning the sweep
// otherwise. Leaves the method executed at the returned knob.
struct KnobSearch {
  double knob = 0.0;
  Execution exec;
  double achieved = 0.0;
};
KnobSearch find_knob(Method& m, double target, bool qk_basis, int sweep_points = 64);

}  // namespace kaleido::study
