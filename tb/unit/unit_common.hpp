// Shared by the block harnesses of tb/unit/ (built by tests/hw with
// sim::build_model): the job file, clocking, random operands and the
// comparison log. A harness prints "PASS: ..." and exits 0 only when every
// comparison held and something was compared; otherwise it prints "FAIL"
// with the first differences (cycle, port, expected, got) and exits 1.
#pragma once

#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "golden/intmath.hpp"
#include "golden/random.hpp"
#include "hw/hw_config.hpp"
#include "port_bits.hpp"
#include "verilated.h"

namespace kld_unit {

using kld_tb::get_bits;
using kld_tb::set_bits;
using kld_tb::sign_extend;

// The job: configuration of the generated block, seed, size of the run, and
// `corrupt` (negative test: one expected value is altered, so the harness
// must report FAIL). Block-specific options stay in `raw`.
struct Job {
  kaleido::hw::HwConfig hw;
  uint64_t seed = 1;
  int64_t iterations = 100;
  bool corrupt = false;
  nlohmann::json raw;
};

inline Job read_job(int argc, char** argv) {
  if (argc != 2) throw std::runtime_error("usage: harness JOB.json");
  Job j;
  j.raw = nlohmann::json::parse(kaleido::read_file(argv[1]));
  j.hw = j.raw.at("hw").get<kaleido::hw::HwConfig>();
  j.seed = j.raw.value("seed", j.seed);
  j.iterations = j.raw.value("iterations", j.iterations);
  j.corrupt = j.raw.value("corrupt", false);
  return j;
}

// Counts comparisons and keeps the first differences.
class Checker {
 public:
  explicit Checker(const Job& job) : corrupt_(job.corrupt), seed_(job.seed) {}

  void equal(int64_t got, int64_t want, const std::string& what) {
    if (corrupt_ && compared_ == kCorruptAt) want ^= 1;  // the deliberately wrong expectation
    ++compared_;
    if (got == want) return;
    ++failed_;
    if (messages_.size() < 20)
      messages_.push_back(what + ": expected " + std::to_string(want) + ", got " + std::to_string(got));
  }
  void fail(const std::string& what) {
    ++failed_;
    if (messages_.size() < 20) messages_.push_back(what);
  }
  int64_t compared() const { return compared_; }
  bool ok() const { return failed_ == 0; }

  int finish(const std::string& summary) const {
    if (failed_ == 0 && compared_ > 0) {
      std::printf("PASS: %s, seed %llu (%lld comparisons)\n", summary.c_str(), static_cast<unsigned long long>(seed_),
                  static_cast<long long>(compared_));
      return 0;
    }
    std::printf("FAIL: %s, seed %llu (%lld of %lld comparisons differ)\n", summary.c_str(),
                static_cast<unsigned long long>(seed_), static_cast<long long>(failed_), static_cast<long long>(compared_));
    if (compared_ == 0) std::printf("  nothing was compared\n");
    for (const auto& m : messages_) std::printf("  %s\n", m.c_str());
    return 1;
  }

 private:
  static constexpr int64_t kCorruptAt = 10;
  bool corrupt_;
  uint64_t seed_;
  int64_t compared_ = 0, failed_ = 0;
  std::vector<std::string> messages_;
};

// A signed DATA_W-bit operand, with the extremes (most negative, most
// positive, -1, 0) far more often than uniform sampling would give them.
inline int64_t operand(kaleido::Rng& r, int bits) {
  if (bits >= 64) {  // the full int64_t range (signed_min/max and range() need fewer bits)
    switch (r.range(0, 9)) {
      case 0: return INT64_MIN;
      case 1: return INT64_MAX;
      case 2: return -1;
      case 3: return 0;
      default: return static_cast<int64_t>(r.next());
    }
  }
  switch (r.range(0, 9)) {
    case 0: return kaleido::signed_min(bits);
    case 1: return kaleido::signed_max(bits);
    case 2: return -1;
    case 3: return 0;
    default: return r.range(kaleido::signed_min(bits), kaleido::signed_max(bits));
  }
}

// Drives the clock of a Verilated model: settle() evaluates with the clock
// low (combinational outputs of the current inputs and state); edge() is
// one rising edge, after which the outputs show the new state.
template <class Model>
class Clock {
 public:
  explicit Clock(Model& m) : m_(m) {}
  void settle() {
    m_.clk_i = 0;
    m_.eval();
  }
  void edge() {
    m_.clk_i = 0;
    m_.eval();
    m_.clk_i = 1;
    m_.eval();
    m_.clk_i = 0;
    m_.eval();
    ++cycle_;
  }
  int64_t cycle() const { return cycle_; }

 private:
  Model& m_;
  int64_t cycle_ = 0;
};

// main() of every harness: run(job) returns the exit status.
template <class Fn>
int harness_main(int argc, char** argv, Fn run) {
  try {
    return run(read_job(argc, argv));
  } catch (const std::exception& e) {
    std::printf("FAIL: harness error: %s\n", e.what());
    return 2;
  }
}

}  // namespace kld_unit
