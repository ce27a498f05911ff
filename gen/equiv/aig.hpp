// A small and-inverter graph with structural hashing: the common form into
// which both sides of an equivalence check are built, simulated, and written
// as AIGER for yosys-abc.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace kaleido::equiv {

// Literal: 2 * node + complement bit. Node 0 is the constant false.
using Lit = uint32_t;
constexpr Lit kFalse = 0;
constexpr Lit kTrue = 1;
inline Lit lit_not(Lit a) { return a ^ 1u; }
inline uint32_t lit_node(Lit a) { return a >> 1; }
inline bool lit_complemented(Lit a) { return (a & 1u) != 0; }

class Aig {
 public:
  Aig();

  Lit add_input(const std::string& name);
  Lit make_and(Lit a, Lit b);
  Lit make_or(Lit a, Lit b) { return lit_not(make_and(lit_not(a), lit_not(b))); }
  Lit make_xor(Lit a, Lit b);
  Lit make_mux(Lit sel, Lit when1, Lit when0);  // sel ? when1 : when0
  size_t add_output(Lit a, const std::string& name);

  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  size_t num_nodes() const { return nodes_.size(); }
  size_t num_ands() const { return nodes_.size() - 1 - inputs_.size(); }
  const std::string& input_name(size_t i) const { return input_names_[i]; }
  const std::string& output_name(size_t i) const { return output_names_[i]; }
  Lit output(size_t i) const { return outputs_[i]; }
  // AND nodes in the cone of the outputs (what write_aiger writes).
  size_t cone_ands() const;

  // Binary AIGER ("aig"), combinational, with the cone of the outputs only;
  // inputs keep their order, so a counterexample's input k is input(k).
  std::string to_aiger() const;

  // 64 patterns at once: word i of `inputs` holds input i's values.
  std::vector<uint64_t> simulate(const std::vector<uint64_t>& inputs) const;
  bool evaluate(Lit a, const std::vector<uint64_t>& node_values, int pattern) const;
  // Values of every node (index = node) for the given input words.
  std::vector<uint64_t> simulate_nodes(const std::vector<uint64_t>& inputs) const;

 private:
  struct Node {
    Lit a = 0, b = 0;  // fanins of an AND node; unused for inputs and constant
    bool input = false;
  };
  std::vector<Node> nodes_;
  std::vector<uint32_t> inputs_;  // node of each input
  std::vector<std::string> input_names_;
  std::vector<Lit> outputs_;
  std::vector<std::string> output_names_;
  std::unordered_map<uint64_t, uint32_t> strash_;
  std::vector<bool> cone_marks() const;
};

}  // namespace kaleido::equiv
