// "Did you mean ...?" for misspelt keys, options and sections.
#pragma once

#include <string>
#include <vector>

namespace kaleido {

// Edit distance (insertions, deletions, substitutions, and swaps of two
// neighbouring letters each cost 1), case-insensitive.
int edit_distance(const std::string& a, const std::string& b);

// The candidate nearest to `word`, or "" when none is close enough to be a
// likely misspelling (distance at most a third of the word's length, at least 1).
std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates);

// "; did you mean X?" when a candidate is near, else "; valid: a, b, c"
// ("" when there are no candidates), to end an error message.
std::string suggestion(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace kaleido
