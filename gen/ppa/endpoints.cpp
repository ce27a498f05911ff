#include "ppa/endpoints.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>
#include <unordered_map>

namespace kaleido::ppa {

namespace {

struct Point {
  std::string name, kind, module;
};

bool is_digit(char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; }
bool all_digits(const std::string& s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_digit); }

// Flip-flops whose output net the mapping left without a name of the RTL's.
constexpr const char* kUnnamed = "(unnamed flip-flops)";

class PointIndex {
 public:
  explicit PointIndex(const FlatNetlist& net) : net_(net) {
    for (size_t i = 0; i < net.cells.size(); ++i) cells_.emplace(net.cells[i].path, i);
    for (size_t i = 0; i < net.blackboxes.size(); ++i) boxes_.emplace(net.blackboxes[i].path, i);
  }

  // An instance (a start or end point without its pin) or an instance's pin.
  Point resolve(const std::string& point) const {
    if (const NetlistCell* c = cell(point)) return flop_or_cell(*c, point);
    const size_t slash = point.rfind('/');
    if (slash == std::string::npos) {
      const NetlistPort* port = net_.port(base(point));
      return {point, port ? (port->input ? "input" : "output") : "other", net_.top};
    }
    const std::string owner = point.substr(0, slash);
    if (const NetlistCell* c = cell(owner)) return flop_or_cell(*c, point);
    auto bb = boxes_.find(owner);
    if (bb != boxes_.end())
      return {point, "macro input", net_.nodes[static_cast<size_t>(net_.blackboxes[bb->second].node)].module};
    return {point, "other", ""};
  }

 private:
  static std::string base(const std::string& port_bit) { return port_bit.substr(0, port_bit.find('[')); }
  const NetlistCell* cell(const std::string& path) const {
    auto it = cells_.find(path);
    return it == cells_.end() ? nullptr : &net_.cells[it->second];
  }
  Point flop_or_cell(const NetlistCell& c, const std::string& point) const {
    const std::string module = net_.nodes[static_cast<size_t>(c.node)].module;
    if (c.cell->is_sequential()) {
      std::string name;
      for (size_t p = 0; p < c.cell->pins.size() && name.empty(); ++p)
        if (c.cell->pins[p].direction == PinDirection::Output && c.pin_net[p] > kNet1)
          name = named_through_inverter(c.pin_net[p]);
      if (name.empty() || anonymous(name)) {  // ABC took the register's name with its inverter
        const size_t dir = c.path.rfind('/');
        return {(dir == std::string::npos ? "" : c.path.substr(0, dir + 1)) + kUnnamed, "register", module};
      }
      return {name, "register", module};
    }
    return {point, "other", module};
  }
  // ABC names its nets `_123_`. A flip-flop with only an inverted output (ASAP7's DFFHQN) drives
  // the register's named net through an inverter: take that name when the flop's own net has none.
  std::string named_through_inverter(int n) const {
    const std::string& own = net_.net_names[static_cast<size_t>(n)];
    if (!anonymous(own)) return own;
    if (loads_.empty()) index_loads();
    auto it = loads_.find(n);
    if (it != loads_.end())
      for (size_t ci : it->second) {
        const NetlistCell& c = net_.cells[ci];
        int ins = 0, out = -1;
        for (size_t p = 0; p < c.cell->pins.size(); ++p) {
          if (c.cell->pins[p].direction == PinDirection::Input) ++ins;
          if (c.cell->pins[p].direction == PinDirection::Output) out = c.pin_net[p];
        }
        if (ins != 1 || c.cell->is_sequential() || out <= kNet1) continue;
        const std::string& driven = net_.net_names[static_cast<size_t>(out)];
        if (!anonymous(driven)) return driven;
      }
    return own;
  }
  static bool anonymous(const std::string& name) {
    const std::string leaf = name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
    const std::string word = leaf.substr(0, leaf.find('['));
    return word.size() >= 3 && word.front() == '_' && word.back() == '_' && all_digits(word.substr(1, word.size() - 2));
  }
  void index_loads() const {
    for (size_t i = 0; i < net_.cells.size(); ++i) {
      const NetlistCell& c = net_.cells[i];
      for (size_t p = 0; p < c.cell->pins.size(); ++p)
        if (c.cell->pins[p].direction == PinDirection::Input && c.pin_net[p] > kNet1)
          loads_[c.pin_net[p]].push_back(i);
    }
  }
  const FlatNetlist& net_;
  std::unordered_map<std::string, size_t> cells_, boxes_;
  mutable std::unordered_map<int, std::vector<size_t>> loads_;  // net -> cells it is an input of
};

}  // namespace

std::string register_family(const std::string& name) {
  std::string s = name;
  if (!s.empty() && s.back() == ']') {
    const size_t open = s.rfind('[');
    if (open != std::string::npos && open + 2 < s.size() && all_digits(s.substr(open + 1, s.size() - open - 2)))
      s.erase(open);
  }
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (!is_digit(s[i])) {
      out += s[i++];
      continue;
    }
    size_t j = i;
    while (j < s.size() && is_digit(s[j])) ++j;
    const bool after_separator = i > 0 && (s[i - 1] == '_' || s[i - 1] == '[');
    const bool before_separator = j == s.size() || s[j] == '_' || s[j] == ']' || s[j] == '/' || s[j] == '.';
    out += after_separator && before_separator ? std::string("*") : s.substr(i, j - i);
    i = j;
  }
  return out;
}

std::string describe_timing_point(const FlatNetlist& net, const std::string& point) {
  const std::string name = PointIndex(net).resolve(point).name;
  return name.size() >= std::string(kUnnamed).size() &&
                 name.compare(name.size() - std::string(kUnnamed).size(), std::string::npos, kUnnamed) == 0
             ? "unnamed flip-flop"
             : name;
}

std::vector<EndpointGroup> group_endpoints(const FlatNetlist& net, const std::vector<EndpointSlack>& endpoints) {
  const PointIndex index(net);
  std::map<std::tuple<std::string, std::string, std::string>, EndpointGroup> groups;
  for (const EndpointSlack& e : endpoints) {
    const Point p = index.resolve(e.pin);
    const std::string family = register_family(p.name);
    EndpointGroup& g = groups[{p.kind, p.module, family}];
    if (g.endpoints == 0 || e.slack_ns < g.worst_slack_ns) {
      g.worst_slack_ns = e.slack_ns;
      g.arrival_ns = e.arrival_ns;
    }
    g.name = family;
    g.kind = p.kind;
    g.module = p.module;
    ++g.endpoints;
    if (e.slack_ns < 0) ++g.violating;
  }
  std::vector<EndpointGroup> v;
  for (auto& [key, g] : groups) v.push_back(std::move(g));
  std::stable_sort(v.begin(), v.end(), [](const EndpointGroup& a, const EndpointGroup& b) {
    return a.worst_slack_ns < b.worst_slack_ns;
  });
  return v;
}

}  // namespace kaleido::ppa
