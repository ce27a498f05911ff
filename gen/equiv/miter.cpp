#include "equiv/miter.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "common/error.hpp"

namespace kaleido::equiv {

bool anonymous_net_name(const std::string& name) {
  if (name.empty() || name[0] == '$') return true;
  if (name.find('$') != std::string::npos) return true;
  // `rename -enumerate` names: _123_
  if (name.size() >= 3 && name.front() == '_' && name.back() == '_' &&
      std::all_of(name.begin() + 1, name.end() - 1, [](char c) { return c >= '0' && c <= '9'; }))
    return true;
  return false;
}

namespace {

struct FlipFlop {
  const JsonCell* cell = nullptr;
  Bit d, q, clk, r, s;
  bool clk_pos = true;
  bool has_r = false, r_pos = true;
  bool r_value = false;  // value while R is active ($_DFF_xxV_: V; $_DFFSR_: 0)
  bool has_s = false, s_pos = true;
  std::vector<std::string> names;
};

// Fine-grained flip-flop types of Yosys: $_DFF_P_, $_DFF_PN0_, $_DFFSR_PNN_.
bool parse_ff_type(const std::string& t, FlipFlop& f) {
  auto pol = [](char c) { return c == 'P'; };
  auto is_pol = [](char c) { return c == 'P' || c == 'N'; };
  if (t.size() == 8 && t.rfind("$_DFF_", 0) == 0 && is_pol(t[6]) && t[7] == '_') {
    f.clk_pos = pol(t[6]);
    return true;
  }
  if (t.size() == 10 && t.rfind("$_DFF_", 0) == 0 && is_pol(t[6]) && is_pol(t[7]) && (t[8] == '0' || t[8] == '1') &&
      t[9] == '_') {
    f.clk_pos = pol(t[6]);
    f.has_r = true;
    f.r_pos = pol(t[7]);
    f.r_value = t[8] == '1';
    return true;
  }
  if (t.size() == 12 && t.rfind("$_DFFSR_", 0) == 0 && is_pol(t[8]) && is_pol(t[9]) && is_pol(t[10]) && t[11] == '_') {
    f.clk_pos = pol(t[8]);
    f.has_s = true;
    f.s_pos = pol(t[9]);
    f.has_r = true;
    f.r_pos = pol(t[10]);
    f.r_value = false;
    return true;
  }
  return false;
}

const std::set<std::string>& gate_types() {
  static const std::set<std::string> t = {"$_BUF_",  "$_NOT_",  "$_AND_",  "$_NAND_", "$_OR_",   "$_NOR_",
                                          "$_XOR_",  "$_XNOR_", "$_ANDNOT_", "$_ORNOT_", "$_MUX_", "$_NMUX_",
                                          "$_AOI3_", "$_OAI3_", "$_AOI4_", "$_OAI4_"};
  return t;
}

struct InstancePort {
  std::string name;
  bool output = false;
  const std::vector<Bit>* bits = nullptr;  // connection in the parent; null when unconnected
  size_t width = 0;
  int offset = 0;
};

struct Instance {
  const JsonCell* cell = nullptr;
  std::vector<InstancePort> ports;
};

class Side {
 public:
  Side(const JsonDesign& design, const JsonModule& mod, const std::string& label)
      : design_(design), mod_(mod), label_(label) {
    for (const JsonCell& c : mod.cells) classify(c);
    for (const JsonNet& n : mod.nets) {
      if (n.hidden || anonymous_net_name(n.name)) continue;
      for (size_t i = 0; i < n.bits.size(); ++i) {
        const std::string bn = bit_name(n.name, n.offset, i, n.bits.size());
        if (n.bits[i].is_net()) names_[n.bits[i].net].push_back(bn);
        else if (n.bits[i].constant == '0' || n.bits[i].constant == '1') constant_names_[bn] = n.bits[i].constant == '1';
      }
    }
    for (FlipFlop& f : ffs_) {
      auto it = names_.find(f.q.net);
      if (it != names_.end()) f.names = it->second;
      std::sort(f.names.begin(), f.names.end());
    }
  }

  const JsonModule& mod() const { return mod_; }
  std::vector<FlipFlop>& ffs() { return ffs_; }
  std::vector<Instance>& instances() { return instances_; }
  const std::map<std::string, bool>& constant_names() const { return constant_names_; }
  int undefined() const { return undefined_; }

  void bind(int64_t net, Lit l) { value_[net] = l; }
  void bind_state(size_t ff, Lit l) { state_[ff] = l; }

  // Clock of a flip-flop as "<input port bit> posedge|negedge", through inverters and buffers.
  std::string clock_key(const FlipFlop& f) const {
    bool pos = f.clk_pos;
    Bit b = f.clk;
    for (int guard = 0; guard < 64; ++guard) {
      if (!b.is_net()) return std::string("constant ") + b.constant;
      auto in = input_names_.find(b.net);
      if (in != input_names_.end()) return in->second + (pos ? " posedge" : " negedge");
      auto d = driver_.find(b.net);
      if (d == driver_.end()) break;
      const JsonCell& c = *d->second.first;
      if (c.type != "$_NOT_" && c.type != "$_BUF_") break;
      if (c.type == "$_NOT_") pos = !pos;
      b = c.connection("A")->at(0);
    }
    auto n = names_.find(b.net);
    return "internal net " + (n != names_.end() ? n->second.front() : std::to_string(b.net)) +
           (pos ? " posedge" : " negedge");
  }

  void note_input(int64_t net, const std::string& name) { input_names_[net] = name; }

  Lit next_state(Aig& aig, size_t ff) {
    const FlipFlop& f = ffs_[ff];
    return async_value(aig, f, lit(aig, f.d));
  }

  Lit lit(Aig& aig, const Bit& b) {
    if (!b.is_net()) return constant(b.constant);
    auto done = value_.find(b.net);
    if (done != value_.end()) return done->second;
    std::vector<std::pair<int64_t, bool>> stack{{b.net, false}};
    std::unordered_set<int64_t> in_progress;
    std::vector<Bit> deps;
    while (!stack.empty()) {
      const int64_t n = stack.back().first;
      if (value_.count(n)) {
        stack.pop_back();
        continue;
      }
      dependencies(n, deps);
      if (!stack.back().second) {
        stack.back().second = true;
        in_progress.insert(n);
        for (const Bit& d : deps) {
          if (!d.is_net() || value_.count(d.net)) continue;
          if (in_progress.count(d.net))
            throw Error(label_ + " module " + mod_.name + ": combinational loop through net " + net_label(d.net));
          stack.emplace_back(d.net, false);
        }
      } else {
        value_[n] = compute(aig, n);
        in_progress.erase(n);
        stack.pop_back();
      }
    }
    return value_.at(b.net);
  }

  std::string net_label(int64_t net) const {
    auto n = names_.find(net);
    return n != names_.end() ? n->second.front() : "#" + std::to_string(net);
  }

 private:
  const JsonDesign& design_;
  const JsonModule& mod_;
  std::string label_;
  std::unordered_map<int64_t, std::pair<const JsonCell*, size_t>> driver_;  // net -> (cell, ff index or npos)
  std::unordered_map<int64_t, std::vector<std::string>> names_;
  std::unordered_map<int64_t, std::string> input_names_;
  std::map<std::string, bool> constant_names_;
  std::vector<FlipFlop> ffs_;
  std::vector<Instance> instances_;
  std::unordered_map<int64_t, Lit> value_;
  std::unordered_map<size_t, Lit> state_;
  int undefined_ = 0;

  static constexpr size_t kNotFf = static_cast<size_t>(-1);

  Lit constant(char c) {
    if (c == '1') return kTrue;
    if (c != '0') ++undefined_;  // x and z read as 0, as the synthesis flow's `setundef -zero` does
    return kFalse;
  }

  void drive(const Bit& b, const JsonCell& c, size_t ff) {
    if (!b.is_net()) return;
    if (!driver_.emplace(b.net, std::make_pair(&c, ff)).second)
      throw Error(label_ + " module " + mod_.name + ": net " + net_label(b.net) + " has more than one driver");
  }

  void classify(const JsonCell& c) {
    if (gate_types().count(c.type)) {
      const auto* y = c.connection("Y");
      if (!y || y->size() != 1) throw Error(label_ + " module " + mod_.name + ": cell " + c.name + " has no output Y");
      drive(y->at(0), c, kNotFf);
      return;
    }
    FlipFlop f;
    if (parse_ff_type(c.type, f)) {
      f.cell = &c;
      auto one = [&](const char* p) -> Bit {
        const auto* b = c.connection(p);
        if (!b || b->size() != 1) throw Error(label_ + " module " + mod_.name + ": flip-flop " + c.name + " has no pin " + p);
        return b->at(0);
      };
      f.d = one("D");
      f.q = one("Q");
      f.clk = one("C");
      if (f.has_r) f.r = one("R");
      if (f.has_s) f.s = one("S");
      if (!f.q.is_net()) return;  // drives a constant: nothing observable
      ffs_.push_back(f);
      drive(f.q, c, ffs_.size() - 1);
      return;
    }
    // A `$` type is a Yosys primitive, unless the design defines it: a module derived for an instance
    // with parameter overrides ($paramod\name\PARAM=value).
    if (!c.type.empty() && c.type[0] == '$' && !design_.module(c.type))
      throw Error(label_ + " module " + mod_.name + ": cell " + c.name + " of type " + c.type +
                  " cannot be modelled (only single-bit gates and edge-triggered flip-flops; latches and "
                  "memories are not supported)");
    // An instance of another module: a black box cut at its ports.
    Instance inst;
    inst.cell = &c;
    const JsonModule* def = design_.module(c.type);
    if (!def && c.port_directions.empty())
      throw Error(label_ + " module " + mod_.name + ": instance " + c.name + " of `" + c.type +
                  "`, a module that is neither defined nor a known cell");
    if (def) {
      for (const JsonPort& p : def->ports) {
        if (p.direction == "inout")
          throw Error(label_ + " module " + c.type + ": inout port " + p.name + " is not supported");
        inst.ports.push_back({p.name, p.direction == "output", c.connection(p.name), p.bits.size(), p.offset});
      }
    } else {
      for (const auto& [pn, dir] : c.port_directions) {
        const auto* bits = c.connection(pn);
        inst.ports.push_back({pn, dir == "output", bits, bits ? bits->size() : 0, 0});
      }
    }
    for (const InstancePort& p : inst.ports)
      if (p.output && p.bits)
        for (const Bit& b : *p.bits) drive(b, c, kNotFf);
    instances_.push_back(inst);
  }

  void dependencies(int64_t net, std::vector<Bit>& deps) const {
    deps.clear();
    auto d = driver_.find(net);
    if (d == driver_.end()) return;
    const JsonCell& c = *d->second.first;
    if (d->second.second != kNotFf) {
      const FlipFlop& f = ffs_[d->second.second];
      if (f.has_r) deps.push_back(f.r);
      if (f.has_s) deps.push_back(f.s);
      return;
    }
    if (!gate_types().count(c.type)) return;  // instance output: bound beforehand
    for (const auto& [pn, bits] : c.connections)
      if (pn != "Y")
        for (const Bit& b : bits) deps.push_back(b);
  }

  Lit async_value(Aig& aig, const FlipFlop& f, Lit v) {
    if (f.has_s) {
      const Lit s = lit(aig, f.s);
      v = aig.make_mux(f.s_pos ? s : lit_not(s), kTrue, v);
    }
    if (f.has_r) {
      const Lit r = lit(aig, f.r);
      v = aig.make_mux(f.r_pos ? r : lit_not(r), f.r_value ? kTrue : kFalse, v);
    }
    return v;
  }

  Lit compute(Aig& aig, int64_t net) {
    auto d = driver_.find(net);
    if (d == driver_.end()) {
      ++undefined_;  // undriven: read as 0
      return kFalse;
    }
    const JsonCell& c = *d->second.first;
    if (d->second.second != kNotFf) {
      const size_t ff = d->second.second;
      auto st = state_.find(ff);
      if (st == state_.end()) throw InternalError("flip-flop " + c.name + " has no state variable");
      return async_value(aig, ffs_[ff], st->second);
    }
    if (!gate_types().count(c.type))
      throw InternalError("output of instance " + c.name + " (" + c.type + ") in " + mod_.name + " is not bound");
    auto in = [&](const char* p) -> Lit {
      const auto* b = c.connection(p);
      if (!b || b->size() != 1) throw Error(label_ + " module " + mod_.name + ": cell " + c.name + " lacks pin " + p);
      const Bit& bit = b->at(0);
      return bit.is_net() ? value_.at(bit.net) : constant(bit.constant);
    };
    const std::string& t = c.type;
    if (t == "$_BUF_") return in("A");
    if (t == "$_NOT_") return lit_not(in("A"));
    if (t == "$_AND_") return aig.make_and(in("A"), in("B"));
    if (t == "$_NAND_") return lit_not(aig.make_and(in("A"), in("B")));
    if (t == "$_OR_") return aig.make_or(in("A"), in("B"));
    if (t == "$_NOR_") return lit_not(aig.make_or(in("A"), in("B")));
    if (t == "$_XOR_") return aig.make_xor(in("A"), in("B"));
    if (t == "$_XNOR_") return lit_not(aig.make_xor(in("A"), in("B")));
    if (t == "$_ANDNOT_") return aig.make_and(in("A"), lit_not(in("B")));
    if (t == "$_ORNOT_") return aig.make_or(in("A"), lit_not(in("B")));
    if (t == "$_MUX_") return aig.make_mux(in("S"), in("B"), in("A"));
    if (t == "$_NMUX_") return lit_not(aig.make_mux(in("S"), in("B"), in("A")));
    if (t == "$_AOI3_") return lit_not(aig.make_or(aig.make_and(in("A"), in("B")), in("C")));
    if (t == "$_OAI3_") return lit_not(aig.make_and(aig.make_or(in("A"), in("B")), in("C")));
    if (t == "$_AOI4_") return lit_not(aig.make_or(aig.make_and(in("A"), in("B")), aig.make_and(in("C"), in("D"))));
    if (t == "$_OAI4_") return lit_not(aig.make_and(aig.make_or(in("A"), in("B")), aig.make_or(in("C"), in("D"))));
    throw InternalError("gate type " + t);
  }
};

// Union-find over the flip-flops of both sides (gold first).
struct UnionFind {
  std::vector<size_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), size_t{0}); }
  size_t find(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(size_t a, size_t b) { parent[find(a)] = find(b); }
};

std::string ff_label(const FlipFlop& f) { return f.names.empty() ? "(unnamed " + f.cell->name + ")" : f.names.front(); }

}  // namespace

Miter build_miter(const JsonDesign& gold_design, const JsonDesign& gate_design, const std::string& name) {
  const JsonModule* gm = gold_design.module(name);
  const JsonModule* tm = gate_design.module(name);
  if (!gm) throw Error("module " + name + " is not in the reference design (" + gold_design.source + ")");
  if (!tm) throw Error("module " + name + " is not in the netlist (" + gate_design.source + ")");
  if (gm->blackbox || tm->blackbox) throw Error("module " + name + " is a black box; there is nothing to compare");

  Miter m;
  m.module = name;
  Side gold(gold_design, *gm, "reference");
  Side gate(gate_design, *tm, "netlist");
  Aig& aig = m.aig;

  // Ports.
  struct OutPort {
    const JsonPort* gold;
    const JsonPort* gate;
  };
  std::vector<OutPort> outputs;
  for (const JsonPort& p : gm->ports) {
    const JsonPort* q = tm->port(p.name);
    if (p.direction == "inout") throw Error("module " + name + ": inout port " + p.name + " is not supported");
    if (!q) {
      m.problems.push_back("port " + p.name + " is missing in the netlist");
      continue;
    }
    if (q->direction != p.direction || q->bits.size() != p.bits.size()) {
      m.problems.push_back("port " + p.name + " differs: " + p.direction + " [" + std::to_string(p.bits.size()) +
                           "] in the reference, " + q->direction + " [" + std::to_string(q->bits.size()) +
                           "] in the netlist");
      continue;
    }
    if (p.direction == "input") {
      for (size_t i = 0; i < p.bits.size(); ++i) {
        const std::string bn = bit_name(p.name, p.offset, i, p.bits.size());
        const Lit v = aig.add_input("in " + bn);
        if (p.bits[i].is_net()) {
          gold.bind(p.bits[i].net, v);
          gold.note_input(p.bits[i].net, bn);
        }
        if (q->bits[i].is_net()) {
          gate.bind(q->bits[i].net, v);
          gate.note_input(q->bits[i].net, bn);
        }
      }
    } else {
      outputs.push_back({&p, q});
    }
  }
  for (const JsonPort& q : tm->ports)
    if (!gm->port(q.name)) m.problems.push_back("port " + q.name + " is only in the netlist");

  // Instances of submodules: matched by instance name, cut at their ports.
  struct InstPair {
    Instance* gold;
    Instance* gate;
  };
  std::vector<InstPair> inst_pairs;
  {
    std::map<std::string, Instance*> gate_insts;
    for (Instance& i : gate.instances()) gate_insts[i.cell->name] = &i;
    std::set<std::string> seen;
    for (Instance& gi : gold.instances()) {
      auto it = gate_insts.find(gi.cell->name);
      if (it == gate_insts.end()) {
        m.problems.push_back("instance " + gi.cell->name + " (" + gi.cell->type + ") is missing in the netlist");
        continue;
      }
      seen.insert(gi.cell->name);
      Instance* ti = it->second;
      if (ti->cell->type != gi.cell->type) {
        m.problems.push_back("instance " + gi.cell->name + " is a " + gi.cell->type + " in the reference but a " +
                             ti->cell->type + " in the netlist");
        continue;
      }
      m.instances.push_back(gi.cell->name + " (" + gi.cell->type + ")");
      inst_pairs.push_back({&gi, ti});
    }
    for (auto& [n, ti] : gate_insts)
      if (!seen.count(n)) m.problems.push_back("instance " + n + " (" + ti->cell->type + ") is only in the netlist");
  }
  for (const InstPair& ip : inst_pairs) {
    for (const InstancePort& gp : ip.gold->ports) {
      const InstancePort* tp = nullptr;
      for (const InstancePort& p : ip.gate->ports)
        if (p.name == gp.name) tp = &p;
      if (!tp || tp->output != gp.output || tp->width != gp.width) {
        m.problems.push_back("instance " + ip.gold->cell->name + ": port " + gp.name + " differs between the sides");
        continue;
      }
      if (!gp.output) continue;
      for (size_t i = 0; i < gp.width; ++i) {
        const Lit v = aig.add_input("inst " + ip.gold->cell->name + "." + bit_name(gp.name, gp.offset, i, gp.width));
        if (gp.bits && i < gp.bits->size() && gp.bits->at(i).is_net()) gold.bind(gp.bits->at(i).net, v);
        if (tp->bits && i < tp->bits->size() && tp->bits->at(i).is_net()) gate.bind(tp->bits->at(i).net, v);
      }
    }
  }

  // Register correspondence: flip-flops whose outputs carry a common net name.
  std::vector<FlipFlop>& gff = gold.ffs();
  std::vector<FlipFlop>& tff = gate.ffs();
  m.gold_registers = static_cast<int>(gff.size());
  m.gate_registers = static_cast<int>(tff.size());
  const size_t G = gff.size();
  UnionFind uf(G + tff.size());
  {
    std::unordered_map<std::string, size_t> gate_by_name;
    for (size_t j = 0; j < tff.size(); ++j)
      for (const std::string& n : tff[j].names) gate_by_name.emplace(n, j);
    for (size_t i = 0; i < G; ++i)
      for (const std::string& n : gff[i].names) {
        auto it = gate_by_name.find(n);
        if (it != gate_by_name.end()) uf.unite(i, G + it->second);
      }
  }
  // Then by position, for registers no name paired: Yosys keeps one public name per net, and a
  // register that drives a port directly can end up under an internal one in the netlist. An
  // unpaired reference register and an unpaired netlist register that drive the same bit of the
  // same instance input or module output are proposed as a pair. Like a name, the proposal is only
  // a proposal: the proof checks the pair's next states.
  {
    std::vector<char> gold_side(G + tff.size(), 0), gate_side(G + tff.size(), 0);
    for (size_t k = 0; k < G + tff.size(); ++k) (k < G ? gold_side : gate_side)[uf.find(k)] = 1;
    std::vector<char> paired(G + tff.size(), 0);
    for (size_t k = 0; k < G + tff.size(); ++k) paired[k] = gold_side[uf.find(k)] && gate_side[uf.find(k)];
    std::unordered_map<int64_t, size_t> gold_q, gate_q;  // output net of an unpaired register -> its index
    for (size_t i = 0; i < G; ++i)
      if (!paired[i] && gff[i].q.is_net()) gold_q.emplace(gff[i].q.net, i);
    for (size_t j = 0; j < tff.size(); ++j)
      if (!paired[G + j] && tff[j].q.is_net()) gate_q.emplace(tff[j].q.net, G + j);
    auto propose = [&](const Bit& gb, const Bit& tb) {
      if (!gb.is_net() || !tb.is_net()) return;
      const auto gi = gold_q.find(gb.net);
      const auto ti = gate_q.find(tb.net);
      if (gi == gold_q.end() || ti == gate_q.end() || paired[gi->second] || paired[ti->second]) return;
      uf.unite(gi->second, ti->second);
      paired[gi->second] = paired[ti->second] = 1;
      ++m.registers_paired_by_position;
    };
    for (const InstPair& ip : inst_pairs)
      for (const InstancePort& gp : ip.gold->ports) {
        if (gp.output || !gp.bits) continue;
        for (const InstancePort& tp : ip.gate->ports)
          if (tp.name == gp.name && !tp.output && tp.bits && tp.bits->size() == gp.bits->size())
            for (size_t i = 0; i < gp.bits->size(); ++i) propose(gp.bits->at(i), tp.bits->at(i));
      }
    for (const OutPort& op : outputs)
      for (size_t i = 0; i < op.gold->bits.size(); ++i) propose(op.gold->bits[i], op.gate->bits[i]);
  }
  std::map<size_t, std::vector<size_t>> classes;
  for (size_t k = 0; k < G + tff.size(); ++k) classes[uf.find(k)].push_back(k);

  struct ClassInfo {
    std::vector<size_t> members;  // index < G: gold, else gate (index - G)
    Lit var = kFalse;
    bool constant = false;
    bool matched = false;
  };
  std::vector<ClassInfo> infos;
  for (auto& [root, members] : classes) {
    ClassInfo ci;
    ci.members = members;
    std::sort(ci.members.begin(), ci.members.end());
    const bool has_gold = ci.members.front() < G;
    const bool has_gate = ci.members.back() >= G;
    const FlipFlop& first = ci.members.front() < G ? gff[ci.members.front()] : tff[ci.members.front() - G];
    if (has_gold && has_gate) {
      ci.matched = true;
      ci.var = aig.add_input("reg " + ff_label(first));
      ++m.matched_registers;
      std::set<std::string> clocks;
      for (size_t k : ci.members) clocks.insert(k < G ? gold.clock_key(gff[k]) : gate.clock_key(tff[k - G]));
      if (clocks.size() > 1) {
        std::string list;
        for (const std::string& c : clocks) list += (list.empty() ? "" : ", ") + c;
        m.problems.push_back("register " + ff_label(first) + " is clocked differently: " + list);
      }
    } else {
      // One side only: is it a constant net on the other side (a register synthesis removed)?
      const std::map<std::string, bool>& other = has_gold ? gate.constant_names() : gold.constant_names();
      for (const std::string& n : first.names) {
        auto c = other.find(n);
        if (c != other.end()) {
          ci.constant = true;
          ci.var = c->second ? kTrue : kFalse;
          break;
        }
      }
      if (ci.constant) {
        ++m.constant_registers;
      } else {
        ci.var = aig.add_input(std::string(has_gold ? "unmatched reference reg " : "unmatched netlist reg ") +
                               ff_label(first));
        for (size_t k : ci.members) (has_gold ? m.unmatched_gold : m.unmatched_gate).push_back(ff_label(k < G ? gff[k] : tff[k - G]));
      }
    }
    for (size_t k : ci.members) (k < G ? gold : gate).bind_state(k < G ? k : k - G, ci.var);
    infos.push_back(ci);
  }

  // Compared pairs: outputs, next states, inputs of instances.
  for (const OutPort& op : outputs)
    for (size_t i = 0; i < op.gold->bits.size(); ++i)
      m.pairs.push_back({"output " + bit_name(op.gold->name, op.gold->offset, i, op.gold->bits.size()),
                         gold.lit(aig, op.gold->bits[i]), gate.lit(aig, op.gate->bits[i])});
  for (const ClassInfo& ci : infos) {
    auto next = [&](size_t k) { return k < G ? gold.next_state(aig, k) : gate.next_state(aig, k - G); };
    auto label = [&](size_t k) { return ff_label(k < G ? gff[k] : tff[k - G]); };
    if (ci.constant) {
      for (size_t k : ci.members)
        m.pairs.push_back({"register " + label(k) + " next state vs. the constant in the other side",
                           k < G ? next(k) : ci.var, k < G ? ci.var : next(k)});
      continue;
    }
    if (!ci.matched) continue;
    const size_t ref = ci.members.front();  // a gold register
    const Lit ref_next = next(ref);
    for (size_t idx = 1; idx < ci.members.size(); ++idx) {
      const size_t k = ci.members[idx];
      if (k >= G)
        m.pairs.push_back({"register " + label(ref) + " next state", ref_next, next(k)});
      else
        m.pairs.push_back({"registers " + label(ref) + " and " + label(k) + " (merged in the netlist) next state",
                           ref_next, next(k)});
    }
  }
  for (const InstPair& ip : inst_pairs)
    for (const InstancePort& gp : ip.gold->ports) {
      if (gp.output) continue;
      const InstancePort* tp = nullptr;
      for (const InstancePort& p : ip.gate->ports)
        if (p.name == gp.name) tp = &p;
      if (!tp || tp->output || tp->width != gp.width) continue;
      for (size_t i = 0; i < gp.width; ++i) {
        const Bit undef{};
        const Bit& gb = gp.bits && i < gp.bits->size() ? gp.bits->at(i) : undef;
        const Bit& tb = tp->bits && i < tp->bits->size() ? tp->bits->at(i) : undef;
        m.pairs.push_back({"input " + ip.gold->cell->name + "." + bit_name(gp.name, gp.offset, i, gp.width),
                           gold.lit(aig, gb), gate.lit(aig, tb)});
      }
    }

  for (size_t i = 0; i < m.pairs.size(); ++i) {
    const ComparedPair& p = m.pairs[i];
    if (p.gold == p.gate) {
      ++m.structurally_equal;
      continue;
    }
    const Lit x = aig.make_xor(p.gold, p.gate);
    if (x == kTrue) m.constant_differences.push_back(i);
    aig.add_output(x, p.label);
    m.output_pair.push_back(i);
  }
  m.gold_undefined_bits = gold.undefined();
  m.gate_undefined_bits = gate.undefined();
  return m;
}

}  // namespace kaleido::equiv
