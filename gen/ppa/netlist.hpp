// Mapped gate-level netlist read from Yosys `write_json`, flattened into
// library-cell instances on global nets, with the module hierarchy kept for
// area by block and by instance.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ppa/liberty.hpp"

namespace kaleido::ppa {

constexpr int kNet0 = 0;  // constant 0 (also where x/z bits go)
constexpr int kNet1 = 1;  // constant 1

struct NetlistCell {
  std::string path;           // hierarchical instance name, "/" separated (OpenSTA style)
  const LibCell* cell = nullptr;
  int node = 0;               // hierarchy node that owns it
  std::vector<int> pin_net;   // per LibCell pin (same order), -1 = unconnected
};

// A black-box instance (SRAM macro): module name and its port connections.
struct NetlistBlackBox {
  std::string path;
  std::string module;
  int node = 0;
  std::vector<std::pair<std::string, std::vector<int>>> inputs, outputs;  // port name, nets (LSB first)
};

struct HierNode {
  std::string path;    // "" for the top
  std::string module;
  int parent = -1;
  std::vector<int> children;
  double own_area = 0;  // library cells placed directly in this module instance
  int own_cells = 0;
  double area = 0;      // own + all descendants (black boxes excluded)
  int cells = 0;
};

struct NetlistPort {
  std::string name;
  bool input = false;
  std::vector<int> nets;  // LSB first
};

struct FlatNetlist {
  std::string top;
  int num_nets = 2;
  std::vector<std::string> net_names;  // a readable name per net
  std::vector<NetlistCell> cells;
  std::vector<NetlistBlackBox> blackboxes;
  std::vector<HierNode> nodes;  // nodes[0] is the top
  std::vector<NetlistPort> ports;

  const NetlistPort* port(const std::string& name) const;
};

// Flattens the design below `top`. Cell types are looked up in `lib`; a type
// that is a module with the `blackbox` attribute and not a library cell
// becomes a NetlistBlackBox. Throws Error on unknown cell types.
FlatNetlist flatten_yosys_json(const nlohmann::json& design, const std::string& top, const Library& lib);

// Structural Verilog of the design below `top` for OpenSTA, written from the
// Yosys JSON: every module of the hierarchy once, one-bit assigns only.
// (Yosys's own write_verilog emits `assign { a, b } = ...;`, which the 2019
// OpenSTA cannot parse.) Black-box modules are left undefined; OpenSTA makes
// them black boxes.
std::string sta_verilog(const nlohmann::json& design, const std::string& top, const Library& lib);

// Per module (definition): area of the cells it places directly, instance
// count, and the area of one instance including its submodules.
struct ModuleAreaRow {
  std::string module;
  int instances = 0;
  double own_area = 0;
  int own_cells = 0;
  double area_per_instance = 0;
};
std::vector<ModuleAreaRow> module_areas(const FlatNetlist& n);

}  // namespace kaleido::ppa
