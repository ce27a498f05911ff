#include "common/suggest.hpp"

#include <algorithm>
#include <cctype>

#include "common/text.hpp"

namespace kaleido {

int edit_distance(const std::string& a, const std::string& b) {
  const std::string x = to_lower(a), y = to_lower(b);
  const size_t n = x.size(), m = y.size();
  // d[i][j]: distance between the first i letters of x and the first j of y.
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const int cost = x[i - 1] == y[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates) {
  const int limit = std::max<int>(1, static_cast<int>(word.size()) / 3);
  std::string best;
  int best_d = limit + 1;
  for (const std::string& c : candidates) {
    const int dist = edit_distance(word, c);
    if (dist < best_d) {
      best_d = dist;
      best = c;
    }
  }
  return best;
}

std::string suggestion(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string near = nearest_name(word, candidates);
  if (!near.empty()) return "; did you mean " + near + "?";
  if (candidates.empty()) return "";
  std::string all;
  for (const std::string& c : candidates) all += (all.empty() ? "" : ", ") + c;
  return "; valid: " + all;
}

}  // namespace kaleido
