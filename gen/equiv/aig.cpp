#include "equiv/aig.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace kaleido::equiv {

Aig::Aig() { nodes_.push_back(Node{}); }

Lit Aig::add_input(const std::string& name) {
  Node n;
  n.input = true;
  nodes_.push_back(n);
  const uint32_t id = static_cast<uint32_t>(nodes_.size() - 1);
  inputs_.push_back(id);
  input_names_.push_back(name);
  return id << 1;
}

Lit Aig::make_and(Lit a, Lit b) {
  if (a > b) std::swap(a, b);
  if (a == kFalse) return kFalse;
  if (a == kTrue) return b;
  if (a == b) return a;
  if (a == lit_not(b)) return kFalse;
  const uint64_t key = (static_cast<uint64_t>(a) << 32) | b;
  auto it = strash_.find(key);
  if (it != strash_.end()) return it->second << 1;
  Node n;
  n.a = a;
  n.b = b;
  nodes_.push_back(n);
  const uint32_t id = static_cast<uint32_t>(nodes_.size() - 1);
  strash_.emplace(key, id);
  return id << 1;
}

Lit Aig::make_xor(Lit a, Lit b) {
  // a ^ b = !( !(a & !b) & !(!a & b) )
  return make_or(make_and(a, lit_not(b)), make_and(lit_not(a), b));
}

Lit Aig::make_mux(Lit sel, Lit when1, Lit when0) {
  if (when1 == when0) return when1;
  return make_or(make_and(sel, when1), make_and(lit_not(sel), when0));
}

size_t Aig::add_output(Lit a, const std::string& name) {
  outputs_.push_back(a);
  output_names_.push_back(name);
  return outputs_.size() - 1;
}

std::vector<bool> Aig::cone_marks() const {
  std::vector<bool> mark(nodes_.size(), false);
  std::vector<uint32_t> stack;
  for (Lit o : outputs_) stack.push_back(lit_node(o));
  while (!stack.empty()) {
    const uint32_t n = stack.back();
    stack.pop_back();
    if (mark[n]) continue;
    mark[n] = true;
    if (n == 0 || nodes_[n].input) continue;
    stack.push_back(lit_node(nodes_[n].a));
    stack.push_back(lit_node(nodes_[n].b));
  }
  return mark;
}

size_t Aig::cone_ands() const {
  const std::vector<bool> mark = cone_marks();
  size_t count = 0;
  for (size_t n = 1; n < nodes_.size(); ++n)
    if (mark[n] && !nodes_[n].input) ++count;
  return count;
}

namespace {

void put_varint(std::string& out, uint32_t x) {
  while (x & ~0x7fu) {
    out.push_back(static_cast<char>((x & 0x7fu) | 0x80u));
    x >>= 7;
  }
  out.push_back(static_cast<char>(x));
}

// AIGER symbol names end at a newline; keep them on one line.
std::string symbol(const std::string& s) {
  std::string r = s;
  std::replace(r.begin(), r.end(), '\n', ' ');
  return r;
}

}  // namespace

std::string Aig::to_aiger() const {
  const std::vector<bool> mark = cone_marks();
  std::vector<uint32_t> var(nodes_.size(), 0);
  uint32_t next = 1;
  for (uint32_t in : inputs_) var[in] = next++;
  const uint32_t num_in = next - 1;
  std::vector<uint32_t> ands;
  for (uint32_t n = 1; n < nodes_.size(); ++n)
    if (mark[n] && !nodes_[n].input) {
      var[n] = next++;
      ands.push_back(n);
    }
  auto map = [&](Lit l) -> uint32_t { return (var[lit_node(l)] << 1) | (l & 1u); };
  std::string out = "aig " + std::to_string(next - 1) + " " + std::to_string(num_in) + " 0 " +
                    std::to_string(outputs_.size()) + " " + std::to_string(ands.size()) + "\n";
  for (Lit o : outputs_) out += std::to_string(map(o)) + "\n";
  for (uint32_t n : ands) {
    const uint32_t lhs = var[n] << 1;
    uint32_t r0 = map(nodes_[n].a), r1 = map(nodes_[n].b);
    if (r0 < r1) std::swap(r0, r1);
    if (!(lhs > r0)) throw InternalError("AIG not in topological order");
    put_varint(out, lhs - r0);
    put_varint(out, r0 - r1);
  }
  for (size_t i = 0; i < inputs_.size(); ++i) out += "i" + std::to_string(i) + " " + symbol(input_names_[i]) + "\n";
  for (size_t i = 0; i < outputs_.size(); ++i) out += "o" + std::to_string(i) + " " + symbol(output_names_[i]) + "\n";
  out += "c\nmiter written by kaleido equiv\n";
  return out;
}

std::vector<uint64_t> Aig::simulate_nodes(const std::vector<uint64_t>& inputs) const {
  if (inputs.size() != inputs_.size()) throw InternalError("simulation needs one word per AIG input");
  std::vector<uint64_t> v(nodes_.size(), 0);
  for (size_t i = 0; i < inputs_.size(); ++i) v[inputs_[i]] = inputs[i];
  auto val = [&](Lit l) { return lit_complemented(l) ? ~v[lit_node(l)] : v[lit_node(l)]; };
  for (size_t n = 1; n < nodes_.size(); ++n)
    if (!nodes_[n].input) v[n] = val(nodes_[n].a) & val(nodes_[n].b);
  return v;
}

std::vector<uint64_t> Aig::simulate(const std::vector<uint64_t>& inputs) const {
  const std::vector<uint64_t> v = simulate_nodes(inputs);
  std::vector<uint64_t> out;
  out.reserve(outputs_.size());
  for (Lit o : outputs_) out.push_back(lit_complemented(o) ? ~v[lit_node(o)] : v[lit_node(o)]);
  return out;
}

bool Aig::evaluate(Lit a, const std::vector<uint64_t>& node_values, int pattern) const {
  const bool bit = ((node_values[lit_node(a)] >> pattern) & 1u) != 0;
  return bit != lit_complemented(a);
}

}  // namespace kaleido::equiv
