// Golden vectors on disk: what the testbench compares the RTL against.
// The format is documented in docs/golden-vectors.md; bump kVectorVersion
// on any change to it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "golden/config.hpp"
#include "golden/gemm.hpp"
#include "golden/reuse.hpp"

namespace kaleido {

constexpr uint32_t kVectorVersion = 1;

struct GoldenVectors {
  ReuseConfig config;             // includes the thresholds of this run
  nlohmann::json workload;        // how A and B were made (free-form, recorded)
  IntMatrix a;                    // N x K, token-major (token = (t*H + h)*W + w)
  IntMatrix b;                    // K x M
  std::vector<PairDecision> decisions;  // N x G, token-major
  WideMatrix out;                 // N x M, wrapped to ACC_W, sign-extended
  ReuseCounters counters;
  int64_t window_depth = 0;       // the window depth applied
  int64_t required_window_depth = 0;
};

// Run the golden model on (A, B) and collect everything a testbench checks.
GoldenVectors make_vectors(const ReuseConfig& cfg, const IntMatrix& a, const IntMatrix& b,
                           nlohmann::json workload = nlohmann::json::object());

// Atomic: a failure leaves no file behind. Throws FileError.
void write_vectors(const std::string& path, const GoldenVectors& v);
// Rejects malformed, truncated, corrupt or wrong-version files with FileError.
GoldenVectors read_vectors(const std::string& path);

nlohmann::json counters_json(const ReuseCounters& c);
ReuseCounters counters_from_json(const nlohmann::json& j);

}  // namespace kaleido
