// Boolean functions as written in Liberty `function`, `next_state`, `clear`,
// `when` attributes: `!A`, `A'`, `A&B`, `A*B`, `A B`, `A|B`, `A+B`, `A^B`,
// parentheses and the constants 0 and 1. Used to simulate mapped netlists,
// to write Verilog models of cells and to weight power arcs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kaleido::ppa {

class BoolFunction {
 public:
  BoolFunction() = default;
  // Throws kaleido::Error naming the text and the position on a syntax error.
  static BoolFunction parse(const std::string& text);

  bool empty() const { return nodes_.empty(); }
  const std::string& text() const { return text_; }
  // Variables in order of first appearance.
  const std::vector<std::string>& variables() const { return vars_; }

  // Value with variable i (index into variables()) taken from bit i of `assignment`.
  bool eval(uint64_t assignment) const;
  // Truth table over `order` (names; variables not listed read 0): entry k is
  // the value when variable order[j] = bit j of k. At most 16 variables.
  std::vector<uint8_t> truth_table(const std::vector<std::string>& order) const;
  // Fraction of input assignments (all equally likely) for which the function is 1.
  double probability_one() const;
  // Verilog expression; `rename` maps a Liberty variable to a Verilog name.
  std::string to_verilog(const std::function<std::string(const std::string&)>& rename) const;
  // Liberty text with full parentheses.
  std::string to_liberty() const;

  // Probability that flipping `var` flips the function (the Boolean
  // difference), all other variables equally likely. 0 when `var` is absent.
  double sensitivity(const std::string& var) const;
  // Probability of 1 when every variable is 1 with probability 0.5,
  // evaluated bottom-up as if subexpressions were independent (how OpenSTA
  // propagates duty cycles).
  double independent_probability() const;
  // OpenSTA 2019's structural guess (Power::inferedWhen) of the condition
  // under which `var` controls the function; false when it makes none.
  bool opensta_inferred_when(const std::string& var, BoolFunction& when) const;

 private:
  enum class Op : uint8_t { Var, Zero, One, Not, And, Or, Xor };
  struct Node {
    Op op;
    int a = -1;  // operand (Not) or left operand
    int b = -1;  // right operand
    int var = -1;
  };
  bool eval_node(int n, uint64_t assignment) const;
  std::string liberty_node(int n) const;
  double independent_node(int n) const;
  bool is_var_ref(int n, int var) const;
  // Returns Liberty text of the inferred condition, or "" for none.
  std::string inferred_node(int n, int var) const;
  std::string verilog_node(int n, const std::function<std::string(const std::string&)>& rename) const;

  std::string text_;
  std::vector<Node> nodes_;
  std::vector<std::string> vars_;
  int root_ = -1;

  friend class BoolParser;
};

}  // namespace kaleido::ppa
