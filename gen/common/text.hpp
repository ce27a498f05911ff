// Small text helpers shared by the tool's parsers and writers.
#pragma once

#include <cctype>
#include <string>

namespace kaleido {

// ASCII lower case (names of pins, units, file extensions).
inline std::string to_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace kaleido
