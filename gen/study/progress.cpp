#include "study/progress.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/format.hpp"

namespace kaleido::study {

std::string format_seconds(double s) {
  if (s < 60.0) return fixed(s, 1) + "s";
  return fmt::format("{}m{:02}s", static_cast<int>(s / 60.0), static_cast<int>(std::fmod(s, 60.0)));
}

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::advance(const std::string& what, int64_t units) {
  done_ = std::min(total_, done_ + units);
  note(what);
}

void Progress::note(const std::string& what) const {
  if (!enabled_) return;
  std::fprintf(stderr, "[study %3d%% %7s] %s\n", static_cast<int>(100.0 * fraction()), format_seconds(elapsed()).c_str(),
               what.c_str());
  std::fflush(stderr);
}

}  // namespace kaleido::study
