// Products of the golden model. Output tiles are computed on request (a row
// and column range), so a real grid never needs the full dense product.
#pragma once

#include <cstdint>

#include "golden/config.hpp"
#include "golden/reuse.hpp"
#include "golden/types.hpp"

namespace kaleido {

struct Tile {
  int64_t row0 = 0, rows = -1;  // rows = -1: to the end
  int64_t col0 = 0, cols = -1;
};

using WideMatrix = Matrix<int64_t>;

// Out = A . B with every product and sum wrapped to ACC_W bits (two's
// complement), the hardware's arithmetic. Values are sign-extended.
WideMatrix gemm_wrap(const IntMatrix& a, const IntMatrix& b, int acc_w, Tile tile = {});

// The same product without wrap-around (exact integers, for metrics).
WideMatrix gemm_exact(const IntMatrix& a, const IntMatrix& b, Tile tile = {});

FloatMatrix gemm(const FloatMatrix& a, const FloatMatrix& b, Tile tile = {});

// The reuse output as the accelerator forms it: for every (token, group) the
// partial P_g[root] = A[root,g] . B[g,:] of the token that computed it,
// summed over groups with ACC_W wrap-around. Equals gemm_wrap(Ahat, B).
WideMatrix reuse_output(const ReuseConfig& cfg, const IntMatrix& a, const IntMatrix& b, const IntReuse& r,
                        Tile tile = {});
FloatMatrix reuse_output(const ReuseConfig& cfg, const FloatMatrix& a, const FloatMatrix& b, const FloatReuse& r,
                         Tile tile = {});

// Per output column m: sum_g tau_g * sum_{c in g} |B[c,m]|, the bound on
// |Ahat.B - A.B| that closed-loop reuse guarantees.
std::vector<double> error_bound_per_column(const ReuseConfig& cfg, const IntMatrix& b);

}  // namespace kaleido
