// Yosys `write_json` netlists, read into plain structures: ports, cells with
// their connections, and the named nets. The equivalence check reads both
// sides from this form after Yosys has lowered them to single-bit gates.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kaleido::equiv {

// One bit: a net (net >= 0) or a constant '0', '1', 'x' or 'z' (net < 0).
struct Bit {
  int64_t net = -1;
  char constant = 'x';
  bool is_net() const { return net >= 0; }
};

struct JsonPort {
  std::string name;
  std::string direction;  // input, output, inout
  std::vector<Bit> bits;
  int offset = 0;  // index of bits[0] in the declared range
};

struct JsonCell {
  std::string name;
  std::string type;
  std::vector<std::pair<std::string, std::vector<Bit>>> connections;
  std::map<std::string, std::string> port_directions;  // when Yosys wrote them
  const std::vector<Bit>* connection(const std::string& port) const;
};

struct JsonNet {
  std::string name;
  std::vector<Bit> bits;
  bool hidden = false;  // Yosys-internal name ($...)
  int offset = 0;
};

struct JsonModule {
  std::string name;
  bool blackbox = false;
  std::vector<JsonPort> ports;
  std::vector<JsonCell> cells;
  std::vector<JsonNet> nets;
  const JsonPort* port(const std::string& n) const;
};

struct JsonDesign {
  std::string source;
  std::map<std::string, JsonModule> modules;
  const JsonModule* module(const std::string& n) const;
};

// Throws FileError when the file is missing or is not a Yosys JSON netlist.
JsonDesign read_yosys_json(const std::filesystem::path& path);
JsonDesign parse_yosys_json(const std::string& text, const std::string& source);

// Name of bit i of a net or port as a user reads it: "w[3]" (declared index).
std::string bit_name(const std::string& net, int offset, size_t i, size_t width);

}  // namespace kaleido::equiv
