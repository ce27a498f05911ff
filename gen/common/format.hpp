// Number formatting for reports, logs and scripts, with {fmt}: the two styles
// the reports use, in one place.
#pragma once

#include <cmath>
#include <string>

#include <fmt/format.h>

namespace kaleido {

// `digits` significant digits, trailing zeros dropped, exponent for very large
// or small values: printf's %g (and an ostream's default), e.g. 0.1235, 1.235e+06.
inline std::string sig(double v, int digits) { return std::isnan(v) ? "nan" : fmt::format("{:.{}g}", v, digits); }

// `decimals` digits after the point: printf's %f, e.g. 3.14.
// Both write inf and -inf as such, and any NaN as "nan" (its sign means nothing).
inline std::string fixed(double v, int decimals) {
  return std::isnan(v) ? "nan" : fmt::format("{:.{}f}", v, decimals);
}

// Numbers in files written for EDA tools (SDC, Liberty): 6 significant digits.
inline std::string tool_number(double v) { return sig(v, 6); }

}  // namespace kaleido
