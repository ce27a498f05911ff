// Block-sparse attention peers, re-implemented from their public
// descriptions (DESIGN.md section 3) and named "-style": they are not the
// authors' code. Each splits into a plan (statistics of one head's Q and K,
// computed once) and a mask for a value of its knob (cheap), so the study can
// search the knob for a target MAC saving. Interpretations of details the
// descriptions leave open are stated at each function and in docs/study.md.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "golden/types.hpp"
#include "study/blocks.hpp"

namespace kaleido::study {

// Mean pairwise cosine similarity of the rows `rows` of x: (|sum x^|^2 - n) /
// (n (n - 1)) with x^ the unit rows; 1 for a single row (zero rows count as 0).
double mean_pairwise_cosine(const FloatMatrix& x, const std::vector<int32_t>& rows);

// Per-block summaries of Q and K (nb x d, row-major).
struct BlockSummary {
  int blocks = 0, dim = 0;
  std::vector<float> q_mean, k_mean, q_max, q_min, k_max, k_min, q_var, k_var;
  std::vector<double> q_sim, k_sim;  // intra-block mean pairwise cosine
};
BlockSummary summarize_blocks(const FloatMatrix& q, const FloatMatrix& k, const BlockLayout& layout);

// ---- SPADE-style -------------------------------------------------------
// Per head, the 64-token block shape with the highest mean intra-block query
// similarity `sim` is used. Block summaries are the channel-wise max and min
// of q and k; the estimate of tile (a, b) is
//   max((qmax_a + qmin_a) . kmax_b, (qmax_a + qmin_a) . kmin_b)   (dot products).
// Each query block keeps its top-k key blocks by that estimate with
//   k = ceil((1 - sim) (1 - progress) factor Nblocks), clamped to [0, Nblocks],
// plus the sink (key block 0) and its diagonal (key block = query block).
// High-similarity shortcut: when sim >= shortcut_sim the head's queries are
// taken as interchangeable and no estimate is made: each query block keeps
// only the sink and the diagonal.
struct SpadePlan {
  BlockLayout layout;
  double sim = 0.0;
  std::vector<float> estimate;  // nq x nk
};
int spade_topk(double sim, double progress, double factor, int nblocks);
SpadePlan spade_plan(const FloatMatrix& q, const FloatMatrix& k, const Grid& grid, const std::vector<BlockShape>& candidates);
BlockMask spade_mask(const SpadePlan& plan, double factor, double progress, double shortcut_sim, bool* shortcut = nullptr);

// ---- SpargeAttn-style --------------------------------------------------
// Mean-pooled q and k per block; compressed attention p^ = softmax over key
// blocks of (qmean_a . kmean_b / sqrt(d) + ln |b|) (ln |b| weights clipped
// edge blocks by their size). Each query block keeps the fewest key blocks,
// by descending p^, whose cumulative p^ reaches `cdf` (0.9 by default), and at
// least the first.
// Blocks whose pooled vector is unreliable, intra-block cosine below
// `sim_threshold`, are kept whole: such a query block keeps every key block
// and such a key block is kept by every query block. 3D blocks stand in for
// SpargeAttn's Hilbert-curve token order (both make 1D blocks spatially local).
struct SpargePlan {
  BlockLayout layout;
  std::vector<double> p;  // nq x nk
  std::vector<uint8_t> q_whole, k_whole;
};
SpargePlan sparge_plan(const FloatMatrix& q, const FloatMatrix& k, const Grid& grid, const BlockShape& shape,
                       double sim_threshold);
BlockMask sparge_mask(const SpargePlan& plan, double cdf);

// ---- Greedy tile selection under a MAC budget ---------------------------
// Shared by Veda-style and ScalingAttention-style: tiles sorted by `value`
// (attention mass per key token, so that dropping the lowest-valued tiles
// loses the least mass per MAC saved); the diagonal is always kept; tiles are
// added in that order while the kept MACs stay within keep_fraction of dense.
struct GreedyPlan {
  BlockLayout layout;
  std::vector<double> value;    // nq x nk
  std::vector<int32_t> order;   // tile indices a * nk + b, best first
};
GreedyPlan make_greedy_plan(BlockLayout layout, std::vector<double> value);
BlockMask greedy_mask(const GreedyPlan& plan, double keep_fraction);

// ---- Veda-style --------------------------------------------------------
// Head-aware tiling: the 64-token shape with the least within-tile variance of
// q and k (the tiling whose statistics describe its tokens best). Tile scoring
// reconstructs the attention mass of tile (a, b) from statistics: with means
// qm, km and channel variances qv, kv,
//   score = ln|b| + qm . km / sqrt(d) + (sum_c qm_c^2 kv_c + km_c^2 qv_c) / (2 d),
// the second-order (Gaussian) estimate of ln sum_j exp(q . k_j / sqrt(d)),
// capped by the extrema bound ln|b| + sum_c max(qm_c kmax_c, qm_c kmin_c) / sqrt(d);
// a row softmax of the scores is the reconstructed block attention. Tiles are
// then chosen greedily (above) for the MAC budget.
GreedyPlan veda_plan(const FloatMatrix& q, const FloatMatrix& k, const Grid& grid, const std::vector<BlockShape>& candidates);

// ---- ScalingAttention-style --------------------------------------------
// The offline mask: `mass` is the measured block attention mass (nq x nk,
// each query block's row summing to 1) of calibration inputs, not of the
// inputs being run; head-wise sparsity is the keep fraction.
GreedyPlan scaling_plan(const BlockLayout& layout, const std::vector<double>& mass);

// ---- Sliding-tile-style ------------------------------------------------
// A fixed 3D window of tiles: query tile a keeps key tile b when
// |t_a - t_b| <= r_t, |h_a - h_b| <= r_h and |w_a - w_b| <= r_w (tile units).
BlockMask sliding_tile_mask(const BlockLayout& layout, const std::array<int, 3>& radius);
// The window for a scalar size s in [0, 1]: r_axis = round(s * (tiles_axis - 1)).
std::array<int, 3> sliding_tile_radius(const BlockLayout& layout, double s);

}  // namespace kaleido::study
