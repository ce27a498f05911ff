// Errors the tool reports to its user. Every failure that a user can cause
// (bad configuration, bad file, missing tool) is a kaleido::Error whose
// message names what was wrong and the rule it broke; the CLI prints it and
// exits non-zero.
#pragma once

#include <stdexcept>
#include <string>

namespace kaleido {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// A configuration value breaks a rule: "<param> = <value>: <rule>".
class ConfigError : public Error {
 public:
  ConfigError(const std::string& param, const std::string& value, const std::string& rule)
      : Error(param + " = " + value + ": " + rule), param_(param) {}
  const std::string& param() const { return param_; }

 private:
  std::string param_;
};

// A file could not be read or has the wrong content.
class FileError : public Error {
 public:
  FileError(const std::string& path, const std::string& why) : Error(path + ": " + why) {}
};

}  // namespace kaleido
