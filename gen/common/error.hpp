// Errors the tool reports to its user. Every failure that a user can cause
// (bad configuration, bad file, missing tool) is a kaleido::Error whose
// message names what was wrong and the rule it broke; the CLI prints it and
// exits non-zero.
#pragma once

#include <stdexcept>
#include <string>

namespace kaleido {

// Process exit codes of the kaleido binary.
constexpr int kExitUserError = 2;      // kaleido::Error: bad input, missing tool, failed check
constexpr int kExitInternalError = 3;  // InternalError or any other exception: a bug in kaleido

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

  // A configuration file breaks a rule: "<file>:<line>: <key>: <what>"
  // (line 0: the parser gives none, "<file>: <key>: <what>").
  static ConfigError in_file(const std::string& file, int line, const std::string& key, const std::string& what) {
    return ConfigError(Text{}, key, file + (line > 0 ? ":" + std::to_string(line) : "") + ": " + key + ": " + what);
  }

 private:
  struct Text {};
  ConfigError(Text, const std::string& param, const std::string& message) : Error(message), param_(param) {}
  std::string param_;
};

// A file could not be read or has the wrong content.
class FileError : public Error {
 public:
  FileError(const std::string& path, const std::string& why) : Error(path + ": " + why) {}
};

// A broken invariant inside kaleido (a bug, not something the user did):
// "internal: <what>". Deliberately not a kaleido::Error, so that code which
// reports user errors does not mistake it for one; the CLI exits 3.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what) : std::logic_error("internal: " + what) {}
};

}  // namespace kaleido
