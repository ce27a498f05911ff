// Attention of one head, O = softmax(S / sqrt(d)) V with S = Q K^T, exact
// and approximate, for the quality side of the study.
//
// Quality is measured on a sample of query rows (all rows when the sample is
// at least N): each sampled row's exact scores S_i and output O_i are
// computed once per input and kept, then every method point is compared with
// them row by row. The work of a method is not sampled: reuse decisions and
// block masks are made over all tokens, and MACs are counted over all tokens.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "common/parallel.hpp"
#include "golden/metrics.hpp"
#include "golden/types.hpp"
#include "study/blocks.hpp"
#include "workload/qkv.hpp"

namespace kaleido::study {

// Clips, the latent proxy and the model shapes live in gen/workload (shared with the simulator).
using namespace kaleido::workload;

// `count` distinct rows of [0, n), sorted; seeded. All rows when count >= n.
std::vector<int32_t> sample_rows(int64_t n, int64_t count, uint64_t seed);

// Sums for a Quality (golden/metrics.hpp), mergeable across threads.
struct QualitySums {
  int64_t n = 0;
  double se = 0, peak = 0, dot = 0, na = 0, nb = 0, max_err = 0;
  void add(double approx, double exact);
  void merge(const QualitySums& o);
  Quality finish() const;
};

struct AttentionQuality {
  Quality out;     // softmax(S / sqrt(d)) V against exact
  Quality scores;  // S = Q K^T against exact (skipped tiles count as 0)
  int64_t rows = 0;
};

class AttentionEvaluator {
 public:
  // Computes the exact rows; `in` must outlive the evaluator.
  AttentionEvaluator(const AttentionInputs& in, std::vector<int32_t> rows, int threads);

  const std::vector<int32_t>& rows() const { return rows_; }
  const FloatMatrix& exact_scores() const { return s_exact_; }  // R x N
  const FloatMatrix& exact_out() const { return o_exact_; }     // R x d

  // Queries (and optionally keys and values) replaced, e.g. by reuse's effective inputs.
  AttentionQuality with_inputs(const FloatMatrix& q_eff, const FloatMatrix* k_eff = nullptr,
                               const FloatMatrix* v_eff = nullptr) const;
  // Scores from q_eff; the output from given probabilities instead of their softmax: O_i = sum_j p(i, j) V_j,
  // p_row(i) the probability row of query token i (at least N values; values past N are padding and ignored),
  // asked for the evaluator's rows only. For reuse on P V, where the rows are the effective (reused) ones.
  AttentionQuality with_probabilities(const FloatMatrix& q_eff,
                                      const std::function<const float*(int32_t)>& p_row) const;
  // Only the kept (query block, key block) tiles computed; scores from q_eff when given (reuse inside the kept
  // tiles), else the exact scores.
  AttentionQuality with_mask(const BlockLayout& layout, const BlockMask& mask,
                             const FloatMatrix* q_eff = nullptr) const;

 private:
  const AttentionInputs& in_;
  std::vector<int32_t> rows_;
  int threads_;
  FloatMatrix s_exact_, o_exact_;
};

// Exact attention probabilities of the given query rows, handed to fn(row position, probabilities over all
// N keys) one row at a time in the order of `rows` (computed in parallel blocks), so that what fn accumulates
// is the same for any number of threads.
void attention_probabilities(const AttentionInputs& in, const std::vector<int32_t>& rows, int threads,
                             const std::function<void(size_t, const float*)>& fn);

// Block attention mass of exact attention: mass[a][b] = mean over `per_block`
// sampled queries of block a of the probability they give to key block b.
std::vector<double> block_attention_mass(const AttentionInputs& in, const BlockLayout& layout, int per_block,
                                         uint64_t seed, int threads);
// The same over every query of every block (no sampling): the exact tile mass, mean over the queries of block a.
std::vector<double> exact_block_attention_mass(const AttentionInputs& in, const BlockLayout& layout, int threads);

}  // namespace kaleido::study
