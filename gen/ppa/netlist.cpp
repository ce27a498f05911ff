#include "ppa/netlist.hpp"

#include <cctype>
#include <functional>
#include <numeric>
#include <set>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace kaleido::ppa {

using nlohmann::json;

const NetlistPort* FlatNetlist::port(const std::string& name) const {
  for (const NetlistPort& p : ports)
    if (p.name == name) return &p;
  return nullptr;
}

namespace {

class Flattener {
 public:
  Flattener(const json& design, const Library& lib) : mods_(design.at("modules")), lib_(lib) {
    parent_ = {0, 1};
    names_ = {"1'b0", "1'b1"};
  }

  FlatNetlist run(const std::string& top) {
    if (!mods_.contains(top)) throw Error("netlist has no module `" + top + "` (top)");
    out_.top = top;
    const json& m = mods_.at(top);
    std::unordered_map<long long, int> bits;
    // Top ports first, so that port nets carry the port names.
    for (const auto& [pname, p] : m.at("ports").items()) {
      NetlistPort port;
      port.name = pname;
      port.input = p.at("direction").get<std::string>() == "input";
      const json& pb = p.at("bits");
      for (size_t i = 0; i < pb.size(); ++i)
        port.nets.push_back(net_of(pb[i], bits, pb.size() > 1 ? pname + "[" + std::to_string(i) + "]" : pname));
      out_.ports.push_back(std::move(port));
    }
    HierNode root;
    root.module = top;
    out_.nodes.push_back(root);
    instantiate(m, 0, "", bits);
    finish();
    return std::move(out_);
  }

 private:
  int new_net(const std::string& name) {
    parent_.push_back(static_cast<int>(parent_.size()));
    names_.push_back(name);
    return static_cast<int>(parent_.size()) - 1;
  }
  int find(int x) {
    while (parent_[static_cast<size_t>(x)] != x) {
      parent_[static_cast<size_t>(x)] = parent_[static_cast<size_t>(parent_[static_cast<size_t>(x)])];
      x = parent_[static_cast<size_t>(x)];
    }
    return x;
  }
  void unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    // Constants win, so a net tied to 0 or 1 stays constant.
    if (b < 2) std::swap(a, b);
    parent_[static_cast<size_t>(b)] = a;
  }

  int net_of(const json& bit, std::unordered_map<long long, int>& bits, const std::string& name) {
    if (bit.is_string()) return bit.get<std::string>() == "1" ? kNet1 : kNet0;
    const long long id = bit.get<long long>();
    auto it = bits.find(id);
    if (it != bits.end()) return it->second;
    const int n = new_net(name);
    bits.emplace(id, n);
    return n;
  }

  static std::string join(const std::string& prefix, const std::string& name) {
    return prefix.empty() ? name : prefix + "/" + name;
  }

  void instantiate(const json& m, int node, const std::string& prefix, std::unordered_map<long long, int>& bits) {
    // Name nets after this module's public wires before cell pins create them.
    if (m.contains("netnames")) {
      for (const auto& [wname, w] : m.at("netnames").items()) {
        if (w.value("hide_name", 0) != 0) continue;
        const json& wb = w.at("bits");
        for (size_t i = 0; i < wb.size(); ++i) {
          const std::string n = join(prefix, wb.size() > 1 ? wname + "[" + std::to_string(i) + "]" : wname);
          net_of(wb[i], bits, n);
        }
      }
    }
    if (!m.contains("cells")) return;
    for (const auto& [cname, c] : m.at("cells").items()) {
      const std::string type = c.at("type").get<std::string>();
      const std::string path = join(prefix, cname);
      const json& conns = c.at("connections");
      if (const LibCell* lc = lib_.cell(type)) {
        NetlistCell nc;
        nc.path = path;
        nc.cell = lc;
        nc.node = node;
        nc.pin_net.assign(lc->pins.size(), -1);
        for (const auto& [pin, b] : conns.items()) {
          const int idx = lc->pin_index(pin);
          if (idx < 0) throw Error("instance " + path + " of " + type + " connects pin " + pin + " the library cell lacks");
          if (b.size() != 1) throw Error("instance " + path + ": pin " + pin + " is not one bit wide");
          nc.pin_net[static_cast<size_t>(idx)] = net_of(b[0], bits, path + "/" + pin);
        }
        out_.cells.push_back(std::move(nc));
        continue;
      }
      if (!mods_.contains(type))
        throw Error("instance " + path + " has type `" + type +
                    "`, which is neither a cell of the Liberty library nor a module of the netlist");
      const json& child = mods_.at(type);
      const bool blackbox = child.contains("attributes") && child.at("attributes").contains("blackbox");
      if (blackbox) {
        NetlistBlackBox bb;
        bb.path = path;
        bb.module = type;
        bb.node = node;
        for (const auto& [pname, p] : child.at("ports").items()) {
          std::vector<int> nets;
          if (conns.contains(pname))
            for (const json& b : conns.at(pname)) nets.push_back(net_of(b, bits, path + "/" + pname));
          const std::string dir = p.at("direction").get<std::string>();
          (dir == "input" ? bb.inputs : bb.outputs).emplace_back(pname, nets);
        }
        out_.blackboxes.push_back(std::move(bb));
        continue;
      }
      // A submodule: its port bits alias the parent's nets.
      HierNode hn;
      hn.path = path;
      hn.module = type;
      hn.parent = node;
      const int child_node = static_cast<int>(out_.nodes.size());
      out_.nodes.push_back(hn);
      out_.nodes[static_cast<size_t>(node)].children.push_back(child_node);
      std::unordered_map<long long, int> child_bits;
      for (const auto& [pname, p] : child.at("ports").items()) {
        const json& pb = p.at("bits");
        const json* cb = conns.contains(pname) ? &conns.at(pname) : nullptr;
        for (size_t i = 0; i < pb.size(); ++i) {
          int outer;
          if (cb && i < cb->size()) outer = net_of((*cb)[i], bits, path + "/" + pname);
          else outer = new_net(path + "/" + pname);  // unconnected port bit
          if (pb[i].is_string()) continue;  // the child ties this port bit to a constant
          const long long id = pb[i].get<long long>();
          auto it = child_bits.find(id);
          if (it == child_bits.end()) child_bits.emplace(id, outer);
          else unite(it->second, outer);  // the same child net on two ports
        }
      }
      instantiate(child, child_node, path, child_bits);
    }
  }

  void finish() {
    // Renumber union-find roots densely; constants keep 0 and 1.
    std::vector<int> id(parent_.size(), -1);
    id[0] = kNet0;
    id[1] = kNet1;
    int next = 2;
    std::vector<std::string> names = {"1'b0", "1'b1"};
    for (size_t i = 2; i < parent_.size(); ++i) {
      const int r = find(static_cast<int>(i));
      if (id[static_cast<size_t>(r)] < 0) {
        id[static_cast<size_t>(r)] = next++;
        names.push_back(names_[static_cast<size_t>(r)]);
      }
    }
    auto map = [&](int n) { return n < 0 ? n : id[static_cast<size_t>(find(n))]; };
    for (NetlistCell& c : out_.cells)
      for (int& n : c.pin_net) n = map(n);
    for (NetlistBlackBox& b : out_.blackboxes) {
      for (auto& p : b.inputs)
        for (int& n : p.second) n = map(n);
      for (auto& p : b.outputs)
        for (int& n : p.second) n = map(n);
    }
    for (NetlistPort& p : out_.ports)
      for (int& n : p.nets) n = map(n);
    out_.num_nets = next;
    out_.net_names = std::move(names);
    // Areas: own cells per node, then totals bottom-up (children follow parents).
    for (const NetlistCell& c : out_.cells) {
      HierNode& h = out_.nodes[static_cast<size_t>(c.node)];
      h.own_area += c.cell->area;
      h.own_cells += 1;
    }
    for (size_t i = out_.nodes.size(); i-- > 0;) {
      HierNode& h = out_.nodes[i];
      h.area += h.own_area;
      h.cells += h.own_cells;
      if (h.parent >= 0) {
        out_.nodes[static_cast<size_t>(h.parent)].area += h.area;
        out_.nodes[static_cast<size_t>(h.parent)].cells += h.cells;
      }
    }
  }

  const json& mods_;
  const Library& lib_;
  FlatNetlist out_;
  std::vector<int> parent_;
  std::vector<std::string> names_;
};

}  // namespace

FlatNetlist flatten_yosys_json(const json& design, const std::string& top, const Library& lib) {
  return Flattener(design, lib).run(top);
}

namespace {

bool simple_id(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

std::string vid(const std::string& s) { return simple_id(s) ? s : "\\" + s + " "; }

void write_module(std::ostringstream& o, const std::string& name, const json& m) {
  // Canonical reference of every bit: input ports first, then outputs, then
  // an internal vector; other ports on the same bit are assigned from it.
  std::unordered_map<long long, std::string> ref;
  std::vector<std::string> assigns;
  std::vector<std::pair<std::string, const json*>> ports;
  for (const char* dir : {"input", "output", "inout"})
    for (const auto& [pname, p] : m.at("ports").items())
      if (p.at("direction").get<std::string>() == dir) ports.emplace_back(pname, &p);
  auto bit_name = [&](const std::string& pname, size_t i, size_t width) {
    return width == 1 ? vid(pname) : vid(pname) + "[" + std::to_string(i) + "]";
  };
  for (const auto& [pname, p] : ports) {
    const json& bits = p->at("bits");
    const bool out = p->at("direction").get<std::string>() != "input";
    for (size_t i = 0; i < bits.size(); ++i) {
      const std::string me = bit_name(pname, i, bits.size());
      if (bits[i].is_string()) {
        if (out) assigns.push_back("  assign " + me + " = 1'b" + (bits[i].get<std::string>() == "1" ? "1" : "0") + ";");
        continue;
      }
      const long long id = bits[i].get<long long>();
      auto it = ref.find(id);
      if (it == ref.end()) ref.emplace(id, me);
      else if (out) assigns.push_back("  assign " + me + " = " + it->second + ";");
    }
  }
  // Public wires keep their names (readable paths in timing reports).
  std::vector<std::pair<std::string, size_t>> wires;
  if (m.contains("netnames")) {
    for (const auto& [wname, w] : m.at("netnames").items()) {
      if (w.value("hide_name", 0) != 0 || m.at("ports").contains(wname)) continue;
      const json& bits = w.at("bits");
      bool used = false;
      for (size_t i = 0; i < bits.size(); ++i) {
        if (bits[i].is_string()) continue;
        const long long id = bits[i].get<long long>();
        if (ref.count(id)) continue;
        ref.emplace(id, bit_name(wname, i, bits.size()));
        used = true;
      }
      if (used) wires.emplace_back(wname, bits.size());
    }
  }
  long long internal = 0;
  auto ref_of = [&](const json& b) -> std::string {
    if (b.is_string()) return b.get<std::string>() == "1" ? "1'b1" : "1'b0";
    const long long id = b.get<long long>();
    auto it = ref.find(id);
    if (it != ref.end()) return it->second;
    const std::string r = "kld_n[" + std::to_string(internal++) + "]";
    ref.emplace(id, r);
    return r;
  };
  std::ostringstream cells;
  if (m.contains("cells")) {
    for (const auto& [cname, c] : m.at("cells").items()) {
      const std::string type = c.at("type").get<std::string>();
      cells << "  " << vid(type) << " " << vid(cname) << " (";
      bool first = true;
      for (const auto& [pin, bits] : c.at("connections").items()) {
        if (bits.empty()) continue;
        cells << (first ? "" : ",") << "\n    ." << vid(pin) << "(";
        first = false;
        if (bits.size() == 1) {
          cells << ref_of(bits[0]);
        } else {
          cells << "{ ";
          for (size_t i = bits.size(); i-- > 0;) cells << ref_of(bits[i]) << (i ? ", " : " ");
          cells << "}";
        }
        cells << ")";
      }
      cells << "\n  );\n";
    }
  }
  o << "module " << vid(name) << " (";
  for (size_t i = 0; i < ports.size(); ++i) o << (i ? ", " : "") << vid(ports[i].first);
  o << ");\n";
  for (const auto& [pname, p] : ports) {
    const size_t w = p->at("bits").size();
    o << "  " << p->at("direction").get<std::string>() << " ";
    if (w > 1) o << "[" << w - 1 << ":0] ";
    o << vid(pname) << ";\n";
  }
  for (const auto& [wname, w] : wires) o << "  wire " << (w > 1 ? "[" + std::to_string(w - 1) + ":0] " : "") << vid(wname) << ";\n";
  if (internal > 0) o << "  wire [" << internal - 1 << ":0] kld_n;\n";
  for (const std::string& a : assigns) o << a << "\n";
  o << cells.str() << "endmodule\n\n";
}

}  // namespace

std::string sta_verilog(const json& design, const std::string& top, const Library& lib) {
  const json& mods = design.at("modules");
  if (!mods.contains(top)) throw Error("netlist has no module `" + top + "` (top)");
  // Modules reachable from the top that are neither library cells nor black boxes.
  std::vector<std::string> order;
  std::set<std::string> seen;
  std::function<void(const std::string&)> visit = [&](const std::string& name) {
    if (!seen.insert(name).second) return;
    const json& m = mods.at(name);
    if (m.contains("cells"))
      for (const auto& [cname, c] : m.at("cells").items()) {
        const std::string type = c.at("type").get<std::string>();
        if (lib.cell(type) || !mods.contains(type)) continue;
        const json& child = mods.at(type);
        if (child.contains("attributes") && child.at("attributes").contains("blackbox")) continue;
        visit(type);
      }
    order.push_back(name);
  };
  visit(top);
  std::ostringstream o;
  o << "// Structural netlist of " << top << " for OpenSTA, written by kaleido from the Yosys JSON netlist.\n\n";
  for (const std::string& name : order) write_module(o, name, mods.at(name));
  return o.str();
}

std::vector<ModuleAreaRow> module_areas(const FlatNetlist& n) {
  std::map<std::string, ModuleAreaRow> rows;
  for (const HierNode& h : n.nodes) {
    ModuleAreaRow& r = rows[h.module];
    r.module = h.module;
    r.instances += 1;
    r.own_area = h.own_area;
    r.own_cells = h.own_cells;
    r.area_per_instance = h.area;
  }
  std::vector<ModuleAreaRow> out;
  for (auto& [name, r] : rows) out.push_back(r);
  return out;
}

}  // namespace kaleido::ppa
