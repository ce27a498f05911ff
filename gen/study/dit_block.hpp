// One DiT block as six closed-loop reuse GEMMs Out = Ahat . B (DESIGN.md section 2, "Where it applies"), each with
// its own thresholds, on the study's hidden-state proxy; per-GEMM MAC savings and quality, and the block's
// MAC-weighted savings against the error of the block's output (docs/study.md, "Reuse on every GEMM of a DiT block").
//
// The block (Wan2.1's self-attention block; cross-attention and the adaLN modulation are left out):
//   X0  = f W_e                      hidden-state proxy: the patch embedding of the latent proxy's token features
//   Xn  = LayerNorm(X0)              (no affine, eps 1e-6)
//   [Q' K' V] = Xn [W_q W_k W_v]     GEMM qkv       A = Xn,  B = W_qkv (D x 3D)
//   q_h = g RMSNorm(Q'_h + b u_h), k_h likewise, then 3D RoPE (per head, as workload/qkv.hpp)
//   S_h = q_h k_h^T                  GEMM qk        A = q_h, B = k_h^T, per head
//   P_h = softmax(S_h / sqrt(d))
//   O_h = P_h V_h                    GEMM pv        A = P_h (groups: runs of keys), B = V_h, per head
//   X1  = X0 + O W_o                 GEMM out_proj  A = O = [O_1 .. O_H], B = W_o
//   H   = GELU_tanh(LayerNorm(X1) W_1)  GEMM ffn_up A = LayerNorm(X1), B = W_1 (D x F)
//   Y   = X1 + H W_2                 GEMM ffn_down  A = H, B = W_2; Y is the block output (residual stream)
// Weights are seeded Gaussians of variance 1/fan-in (no model weights are available); W_k = a W_q + sqrt(1-a^2) W'.
//
// Work is never sampled: every reuse decision is made over all tokens of A (thresholds tau_g = knob x RMS of
// group g of the exact A), and MACs are counted from the decisions. Quality is measured on a sample: the
// products of sampled rows (tokens) with sampled columns of B, against the exact ones.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "golden/config.hpp"
#include "golden/threshold.hpp"
#include "golden/metrics.hpp"
#include "golden/reuse.hpp"
#include "study/attention.hpp"
#include "study/progress.hpp"
#include "workload/latent.hpp"
#include "workload/models.hpp"
#include "workload/rope.hpp"

namespace kaleido::study {

struct DitShape {
  int hidden = 0;  // D
  int heads = 0;
  int head_dim = 0;
  int ffn = 0;  // F
  Rope3d rope;
  static DitShape of(const ModelShape& m);
  void validate() const;  // throws ConfigError
};

enum class DitGemm : int { Qkv = 0, Qk = 1, Pv = 2, OutProj = 3, FfnUp = 4, FfnDown = 5 };
constexpr int kDitGemms = 6;
const char* dit_gemm_name(DitGemm g);      // "qkv", "qk", "pv", "out_proj", "ffn_up", "ffn_down"
const char* dit_gemm_operands(DitGemm g);  // "A = LayerNorm(X0), B = W_qkv", ...
// Real inputs of the GEMMs past the attention (a model's dump, tokens x the GEMM's K): the block uses
// them in place of its own values, in the exact block and the chained one alike: reuse error made
// before a loaded input does not pass through it (the residual stream still carries it). Loadable: out_proj (the
// attention output O, N x hidden), ffn_up (the FFN input LayerNorm(X1), N x hidden), ffn_down (the
// FFN hidden activation GELU(H), N x ffn). The block's input X0 is the qkv GEMM's (--hidden-npy).
using DitRealInputs = std::map<DitGemm, FloatMatrix>;
bool dit_gemm_input_loadable(DitGemm g);
bool dit_gemm_per_head(DitGemm g);         // qk and pv: one GEMM (and one threshold set) per head

struct DitProxySpec {
  uint64_t seed = 1;
  double qk_align = 0.5;  // a, as workload::ProjectionSpec
  double pos_bias = 1.0;  // b
  double qk_gain = 1.5;   // g
};

struct DitWeights {
  FloatMatrix embed;     // features x D (the patch embedding)
  FloatMatrix qkv;       // D x 3D
  FloatMatrix bias_u;    // 1 x D: b u_h of every head, added to q and k before their RMSNorm
  FloatMatrix out;       // D x D
  FloatMatrix up;        // D x F
  FloatMatrix down;      // F x D
  double qk_gain = 1.0;  // g: the q/k RMSNorm weight
};
DitWeights make_dit_weights(const DitShape& s, int64_t features, const DitProxySpec& p);

// The block input of the proxy: X0 = f W_e (tokens x D).
FloatMatrix dit_hidden_states(const Tokens& tokens, const DitWeights& w, int threads);

// C = A . B, rows on `threads` threads (deterministic: each row is computed by one thread in a fixed order).
FloatMatrix matmul(const FloatMatrix& a, const FloatMatrix& b, int threads);

// Quality of Ahat . B against A . B on the products of rows `rows` with the columns `cols` of B.
Quality sampled_gemm_quality(const FloatMatrix& a, const FloatMatrix& a_hat, const FloatMatrix& b,
                             const std::vector<int32_t>& rows, const std::vector<int32_t>& cols);

// Knobs (tau / RMS of the group) per GEMM; qk and pv have one per head, the others one.
using DitKnobs = std::array<std::vector<double>, kDitGemms>;
DitKnobs uniform_knobs(const DitShape& s, double knob);

struct GemmWork {
  int64_t rows = 0, k = 0, m = 0;  // A: rows x k, B: k x m (summed over heads: rows and m per head, k per head)
  int64_t macs = 0;                // dense MACs (all heads)
  int64_t skipped = 0;             // MACs not executed (REUSE pairs x their channels x m)
  int64_t pairs = 0, reused = 0;   // (token, group) pairs of A
  QualitySums quality;             // Ahat . B against A . B on the sample
  double savings() const { return macs ? static_cast<double>(skipped) / static_cast<double>(macs) : 0.0; }
  double reuse_ratio() const { return pairs ? static_cast<double>(reused) / static_cast<double>(pairs) : 0.0; }
};

struct DitBlockRun {
  std::array<GemmWork, kDitGemms> gemms;  // work in the chained block (quality fields unused)
  Quality block;                          // Y against the exact block output, sampled rows x sampled columns
  Quality update;                         // Y - X0 (what the block adds to the residual stream) against exact
  // MAC-weighted savings over the six GEMMs.
  double savings() const;
};

struct DitSample {
  std::vector<int32_t> rows;         // tokens
  std::vector<int32_t> qkv_cols;     // of 3D
  std::vector<int32_t> keys;         // of N (qk)
  std::vector<int32_t> hidden_cols;  // of D (out_proj, ffn_down, block output)
  std::vector<int32_t> ffn_cols;     // of F
  std::string describe(const DitShape& s, int64_t tokens) const;
};
// `rows` tokens and `cols` columns of each output (all when larger), seeded.
DitSample make_dit_sample(const DitShape& s, int64_t tokens, int rows, int cols, uint64_t seed);

struct DitReuse {
  int group_w = 8;
  int tile_h = 0, tile_w = 0;
  Policy policy = Policy::Adaptive;  // no-RoPE GEMMs: every axis; qk: the rope-orthogonal set
};

// The block study holds every activation of the block on all tokens and P of one head whole (N x N floats).
constexpr int64_t kMaxDitBlockTokens = 8192;

// The exact block on all tokens, kept to evaluate each GEMM with reuse on its exact input and the whole block
// with reuse on every GEMM. At most kMaxDitBlockTokens tokens.
class DitBlock {
 public:
  DitBlock(const DitShape& s, const Grid& grid, FloatMatrix x0, DitWeights w, const DitReuse& r, DitSample sample,
           int threads, DitRealInputs real = {});
  const DitShape& shape() const { return s_; }
  int64_t tokens() const { return grid_.tokens(); }
  int64_t macs(DitGemm g) const;
  int64_t total_macs() const;
  // The exact block output Y on the sample (sampled rows x hidden_cols).
  const FloatMatrix& exact_output() const { return y_exact_; }

  // GEMM g (head `head` for qk, pv; ignored otherwise) on its exact input, knob x RMS thresholds.
  GemmWork isolated(DitGemm g, int head, double knob) const;
  // The same for every head at its knob, work and quality summed over heads.
  GemmWork isolated_all(DitGemm g, const std::vector<double>& knobs) const;
  // The largest knob in [0, kMaxKnob] whose isolated output SNR is >= snr_db (bisection, 12 steps), and the
  // GEMM's work and quality there.
  struct Calibrated {
    double knob = 0.0;
    GemmWork work;
  };
  Calibrated calibrate(DitGemm g, int head, double snr_db) const;
  static constexpr double kMaxKnob = 4.0;

  // The block with reuse on every GEMM (each on the output of the reused GEMMs before it).
  DitBlockRun run(const DitKnobs& knobs) const;

 private:
  struct Operand;
  Operand operand(DitGemm g, int head) const;
  GemmWork evaluate(const Operand& op, double knob) const;
  struct Forward;
  using RmsTable = std::array<std::vector<std::vector<float>>, kDitGemms>;  // [gemm][head][group]
  Forward forward(const DitKnobs* knobs, RmsTable* rms_out) const;

  DitShape s_;
  Grid grid_;
  FloatMatrix x0_;
  DitRealInputs real_;
  DitWeights w_;
  DitReuse r_;
  DitSample sample_;
  int threads_;
  // Exact activations (all tokens).
  FloatMatrix xn_, q_, k_, v_, o_, x1n_, h_;
  FloatMatrix y_exact_, x0_sample_;  // sampled rows x hidden_cols
  RmsTable rms_;                     // of each group of each GEMM's exact A
};

// One row of the block table (block_gemms.csv).
struct BlockRecord {
  std::string clip, proxy;
  int step = 0;
  double sigma = 0.0;
  double snr_target = 0.0;  // per-GEMM output SNR the thresholds were calibrated for
  std::string gemm;         // a GEMM name, "block" (the output Y) or "block_update" (Y - X0)
  std::string operands;
  int64_t rows = 0, k = 0, m = 0;  // per head for qk and pv
  int heads = 1;
  int64_t macs = 0;
  double mac_share = 0.0;
  double knob = 0.0;              // tau / RMS; the mean over heads for qk and pv
  std::vector<double> knobs;      // tau / RMS per head (one for the GEMMs without heads)
  int group_w = 0;                // what the knobs mean: tau_j = knob x RMS of group j of A, decided with
  std::string policy, distance;   // this policy and group distance
  double reuse_ratio = 0.0;       // on the exact input
  double savings = 0.0;           // on the exact input (block rows: MAC-weighted, in the block)
  double savings_in_block = 0.0;  // with every GEMM reused before it
  Quality quality;                // of this GEMM on its exact input, or of the block output
  std::string sampled;            // what the quality was measured on
};

struct BlockStudySpec {
  std::vector<double> snr_targets{30.0};
  // When set, no calibration: the block runs at the schedule's knobs, every entry of the study's step
  // (the records' SNR target is then the one the file's knobs were calibrated for).
  std::shared_ptr<const KnobSchedule> schedule;
  int rows = 512;
  int cols = 256;
  uint64_t seed = 11;
  DitReuse reuse;
  DitProxySpec proxy;
  int threads = 1;
};

// The block table of one (clip, proxy, step): the exact block, per-GEMM (per-head) thresholds calibrated to each
// SNR target (or taken from spec.schedule), the chained block at those thresholds. Progress: 1 + 7 x targets units.
std::vector<BlockRecord> run_block_study(const Tokens& tokens, const ModelShape& m, const BlockStudySpec& spec,
                                         const std::string& clip, const std::string& proxy, int step, double sigma,
                                         Progress& progress);
int64_t block_study_units(const BlockStudySpec& spec);
// The same on given hidden states X0 (tokens of `grid` in t, h, w scan order x the model's hidden size).
// `real`: inputs of later GEMMs loaded as well (DitRealInputs).
std::vector<BlockRecord> run_block_study(const Grid& grid, FloatMatrix x0, const ModelShape& m,
                                         const BlockStudySpec& spec, const std::string& clip,
                                         const std::string& proxy, int step, double sigma, Progress& progress,
                                         DitRealInputs real = {});

// Real hidden states for the block: a .npy of shape (N, D) or (1, N, D), N the tokens of `grid` in t, h, w scan
// order, D = `hidden`. Throws FileError (unreadable) or ConfigError (shape) naming what was expected.
FloatMatrix load_hidden_states(const std::string& path, const Grid& grid, int hidden);
// The input of GEMM `g` (dit_gemm_input_loadable) from `spec` = "<gemm>=<file.npy>": shape (N, K) or
// (1, N, K), K = the GEMM's input width of shape `s`. ConfigError (option `gemm-npy`) names the
// GEMMs that load, or the shape expected.
std::pair<DitGemm, FloatMatrix> load_gemm_input(const std::string& spec, const Grid& grid, const DitShape& s);

}  // namespace kaleido::study
