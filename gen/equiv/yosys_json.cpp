#include "equiv/yosys_json.hpp"

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/error.hpp"

namespace kaleido::equiv {

const std::vector<Bit>* JsonCell::connection(const std::string& port) const {
  for (const auto& c : connections)
    if (c.first == port) return &c.second;
  return nullptr;
}

const JsonPort* JsonModule::port(const std::string& n) const {
  for (const JsonPort& p : ports)
    if (p.name == n) return &p;
  return nullptr;
}

const JsonModule* JsonDesign::module(const std::string& n) const {
  auto it = modules.find(n);
  return it == modules.end() ? nullptr : &it->second;
}

std::string bit_name(const std::string& net, int offset, size_t i, size_t width) {
  if (width == 1 && offset == 0) return net;
  return net + "[" + std::to_string(static_cast<long long>(i) + offset) + "]";
}

namespace {

std::vector<Bit> read_bits(const nlohmann::json& bits, const std::string& where) {
  std::vector<Bit> out;
  if (!bits.is_array()) throw Error(where + ": `bits` is not a list");
  out.reserve(bits.size());
  for (const auto& b : bits) {
    Bit bit;
    if (b.is_number_integer()) {
      bit.net = b.get<int64_t>();
      bit.constant = 0;
    } else if (b.is_string() && b.get<std::string>().size() == 1) {
      bit.constant = b.get<std::string>()[0];
      if (bit.constant != '0' && bit.constant != '1' && bit.constant != 'x' && bit.constant != 'z')
        throw Error(where + ": unknown constant bit `" + b.get<std::string>() + "`");
    } else {
      throw Error(where + ": a bit is neither a net number nor a constant");
    }
    out.push_back(bit);
  }
  return out;
}

bool attribute_true(const nlohmann::json& obj, const char* name) {
  if (!obj.contains("attributes")) return false;
  const auto& a = obj.at("attributes");
  if (!a.contains(name)) return false;
  const auto& v = a.at(name);
  if (v.is_number()) return v.get<long long>() != 0;
  // Yosys writes attribute values as binary strings.
  if (v.is_string()) return v.get<std::string>().find('1') != std::string::npos;
  return false;
}

int int_attr(const nlohmann::json& obj, const char* name) {
  if (!obj.contains(name)) return 0;
  const auto& v = obj.at(name);
  if (v.is_number_integer()) return v.get<int>();
  return 0;
}

// A module read back from a Verilog netlist under an escaped name whose text begins with `$`
// (`\$paramod\m\P=...`, a module Yosys derived for parameter overrides) keeps the backslash in
// JSON; Yosys's own derived module has the name without it. One spelling for both sides.
std::string json_module_name(const std::string& json_name) {
  return json_name.size() > 1 && json_name[0] == '\\' && json_name[1] == '$' ? json_name.substr(1) : json_name;
}

}  // namespace

JsonDesign parse_yosys_json(const std::string& text, const std::string& source) {
  nlohmann::json d;
  try {
    d = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw FileError(source, std::string("is not valid JSON: ") + e.what());
  }
  if (!d.is_object() || !d.contains("modules") || !d.at("modules").is_object())
    throw FileError(source, "is not a Yosys JSON netlist (no `modules` object)");
  JsonDesign out;
  out.source = source;
  try {
    for (const auto& [mname, m] : d.at("modules").items()) {
      JsonModule mod;
      mod.name = json_module_name(mname);
      mod.blackbox = attribute_true(m, "blackbox");
      if (m.contains("ports"))
        for (const auto& [pname, p] : m.at("ports").items()) {
          JsonPort port;
          port.name = pname;
          port.direction = p.at("direction").get<std::string>();
          port.bits = read_bits(p.at("bits"), source + ": module " + mname + " port " + pname);
          port.offset = int_attr(p, "offset");
          mod.ports.push_back(std::move(port));
        }
      if (m.contains("cells"))
        for (const auto& [cname, c] : m.at("cells").items()) {
          JsonCell cell;
          cell.name = cname;
          cell.type = json_module_name(c.at("type").get<std::string>());
          if (c.contains("port_directions"))
            for (const auto& [pn, dir] : c.at("port_directions").items()) cell.port_directions[pn] = dir.get<std::string>();
          for (const auto& [pn, bits] : c.at("connections").items())
            cell.connections.emplace_back(pn, read_bits(bits, source + ": module " + mname + " cell " + cname));
          mod.cells.push_back(std::move(cell));
        }
      if (m.contains("netnames"))
        for (const auto& [nname, n] : m.at("netnames").items()) {
          JsonNet net;
          net.name = nname;
          net.bits = read_bits(n.at("bits"), source + ": module " + mname + " net " + nname);
          net.hidden = n.contains("hide_name") && n.at("hide_name").is_number() && n.at("hide_name").get<int>() != 0;
          net.offset = int_attr(n, "offset");
          mod.nets.push_back(std::move(net));
        }
      out.modules.emplace(mod.name, std::move(mod));
    }
  } catch (const nlohmann::json::exception& e) {
    throw FileError(source, std::string("unexpected Yosys JSON structure: ") + e.what());
  }
  return out;
}

JsonDesign read_yosys_json(const std::filesystem::path& path) {
  return parse_yosys_json(read_file(path), path.string());
}

}  // namespace kaleido::equiv
