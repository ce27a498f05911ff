// Progress of long runs on stderr: stage, percent done, elapsed time.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace kaleido::study {

class Progress {
 public:
  explicit Progress(bool enabled = true) : enabled_(enabled), start_(std::chrono::steady_clock::now()) {}
  void set_total(int64_t units) { total_ = units > 0 ? units : 1; }
  void add_total(int64_t units) { total_ += units; }
  // Marks `units` of work done and prints what is being done next.
  void advance(const std::string& what, int64_t units = 1);
  // Prints a line without advancing.
  void note(const std::string& what) const;
  double elapsed() const;
  double fraction() const { return total_ ? static_cast<double>(done_) / static_cast<double>(total_) : 0.0; }

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
  int64_t total_ = 1;
  int64_t done_ = 0;
};

// "1m05s", "12.3s".
std::string format_seconds(double s);

}  // namespace kaleido::study
