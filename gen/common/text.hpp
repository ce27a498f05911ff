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

// Without leading and trailing blanks (spaces, tabs, line ends).
inline std::string trim(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace kaleido
