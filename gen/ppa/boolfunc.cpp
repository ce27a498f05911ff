#include "ppa/boolfunc.hpp"

#include <cctype>

#include "common/error.hpp"

namespace kaleido::ppa {

// Precedence, loosest first: | +  then  & * juxtaposition  then  ^  then
// prefix ! and postfix ' (the Liberty reference's order).
class BoolParser {
 public:
  BoolParser(BoolFunction& f, const std::string& text) : f_(f), s_(text) {}

  int parse_all() {
    const int n = parse_or();
    skip_space();
    if (pos_ != s_.size()) fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    return n;
  }

 private:
  using Op = BoolFunction::Op;

  [[noreturn]] void fail(const std::string& why) const {
    throw Error("Liberty function \"" + s_ + "\": " + why + " at character " + std::to_string(pos_ + 1));
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  static bool is_name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '[' || c == ']' || c == '.' || c == '$';
  }
  int add(Op op, int a = -1, int b = -1, int var = -1) {
    f_.nodes_.push_back({op, a, b, var});
    return static_cast<int>(f_.nodes_.size()) - 1;
  }
  int parse_or() {
    int left = parse_and();
    for (;;) {
      skip_space();
      if (pos_ < s_.size() && (s_[pos_] == '|' || s_[pos_] == '+')) {
        ++pos_;
        left = add(Op::Or, left, parse_and());
      } else {
        return left;
      }
    }
  }
  // An operand that starts right after another one (after spaces) is an implicit AND.
  bool starts_operand() {
    skip_space();
    if (pos_ >= s_.size()) return false;
    const char c = s_[pos_];
    return c == '(' || c == '!' || is_name_char(c);
  }
  int parse_and() {
    int left = parse_xor();
    for (;;) {
      skip_space();
      if (pos_ < s_.size() && (s_[pos_] == '&' || s_[pos_] == '*')) {
        ++pos_;
        left = add(Op::And, left, parse_xor());
      } else if (starts_operand()) {
        left = add(Op::And, left, parse_xor());
      } else {
        return left;
      }
    }
  }
  int parse_xor() {
    int left = parse_unary();
    for (;;) {
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == '^') {
        ++pos_;
        left = add(Op::Xor, left, parse_unary());
      } else {
        return left;
      }
    }
  }
  int parse_unary() {
    skip_space();
    if (pos_ >= s_.size()) fail("expression ends early");
    int n;
    if (s_[pos_] == '!') {
      ++pos_;
      n = add(Op::Not, parse_unary());
    } else if (s_[pos_] == '(') {
      ++pos_;
      n = parse_or();
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != ')') fail("missing ')'");
      ++pos_;
    } else if (is_name_char(s_[pos_])) {
      const size_t start = pos_;
      while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
      const std::string name = s_.substr(start, pos_ - start);
      if (name == "0") {
        n = add(Op::Zero);
      } else if (name == "1") {
        n = add(Op::One);
      } else {
        int var = -1;
        for (size_t i = 0; i < f_.vars_.size(); ++i)
          if (f_.vars_[i] == name) var = static_cast<int>(i);
        if (var < 0) {
          f_.vars_.push_back(name);
          var = static_cast<int>(f_.vars_.size()) - 1;
        }
        n = add(Op::Var, -1, -1, var);
      }
    } else {
      fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    }
    // Postfix complement, possibly repeated.
    for (;;) {
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == '\'') {
        ++pos_;
        n = add(Op::Not, n);
      } else {
        return n;
      }
    }
  }

  BoolFunction& f_;
  const std::string& s_;
  size_t pos_ = 0;
};

BoolFunction BoolFunction::parse(const std::string& text) {
  BoolFunction f;
  f.text_ = text;
  BoolParser p(f, f.text_);
  f.root_ = p.parse_all();
  return f;
}

bool BoolFunction::eval_node(int n, uint64_t assignment) const {
  const Node& node = nodes_[static_cast<size_t>(n)];
  switch (node.op) {
    case Op::Var: return ((assignment >> node.var) & 1u) != 0;
    case Op::Zero: return false;
    case Op::One: return true;
    case Op::Not: return !eval_node(node.a, assignment);
    case Op::And: return eval_node(node.a, assignment) && eval_node(node.b, assignment);
    case Op::Or: return eval_node(node.a, assignment) || eval_node(node.b, assignment);
    case Op::Xor: return eval_node(node.a, assignment) != eval_node(node.b, assignment);
  }
  return false;
}

bool BoolFunction::eval(uint64_t assignment) const { return root_ >= 0 && eval_node(root_, assignment); }

std::vector<uint8_t> BoolFunction::truth_table(const std::vector<std::string>& order) const {
  if (order.size() > 16) throw Error("Liberty function \"" + text_ + "\": more than 16 inputs");
  // Position of each of our variables in `order`, or -1 (reads 0).
  std::vector<int> pos(vars_.size(), -1);
  for (size_t v = 0; v < vars_.size(); ++v)
    for (size_t j = 0; j < order.size(); ++j)
      if (order[j] == vars_[v]) pos[v] = static_cast<int>(j);
  const size_t n = size_t{1} << order.size();
  std::vector<uint8_t> table(n);
  for (size_t k = 0; k < n; ++k) {
    uint64_t a = 0;
    for (size_t v = 0; v < vars_.size(); ++v)
      if (pos[v] >= 0 && ((k >> pos[v]) & 1u)) a |= uint64_t{1} << v;
    table[k] = eval(a) ? 1 : 0;
  }
  return table;
}

double BoolFunction::probability_one() const {
  if (vars_.size() > 20) throw Error("Liberty function \"" + text_ + "\": more than 20 inputs");
  const uint64_t n = uint64_t{1} << vars_.size();
  uint64_t ones = 0;
  for (uint64_t a = 0; a < n; ++a) ones += eval(a) ? 1u : 0u;
  return static_cast<double>(ones) / static_cast<double>(n);
}

std::string BoolFunction::verilog_node(int n, const std::function<std::string(const std::string&)>& rename) const {
  const Node& node = nodes_[static_cast<size_t>(n)];
  switch (node.op) {
    case Op::Var: return rename(vars_[static_cast<size_t>(node.var)]);
    case Op::Zero: return "1'b0";
    case Op::One: return "1'b1";
    case Op::Not: return "~(" + verilog_node(node.a, rename) + ")";
    case Op::And: return "(" + verilog_node(node.a, rename) + " & " + verilog_node(node.b, rename) + ")";
    case Op::Or: return "(" + verilog_node(node.a, rename) + " | " + verilog_node(node.b, rename) + ")";
    case Op::Xor: return "(" + verilog_node(node.a, rename) + " ^ " + verilog_node(node.b, rename) + ")";
  }
  return "1'b0";
}

std::string BoolFunction::to_verilog(const std::function<std::string(const std::string&)>& rename) const {
  if (root_ < 0) return "1'b0";
  return verilog_node(root_, rename);
}

std::string BoolFunction::liberty_node(int n) const {
  const Node& node = nodes_[static_cast<size_t>(n)];
  switch (node.op) {
    case Op::Var: return vars_[static_cast<size_t>(node.var)];
    case Op::Zero: return "0";
    case Op::One: return "1";
    case Op::Not: return "!(" + liberty_node(node.a) + ")";
    case Op::And: return "(" + liberty_node(node.a) + "&" + liberty_node(node.b) + ")";
    case Op::Or: return "(" + liberty_node(node.a) + "|" + liberty_node(node.b) + ")";
    case Op::Xor: return "(" + liberty_node(node.a) + "^" + liberty_node(node.b) + ")";
  }
  return "0";
}

std::string BoolFunction::to_liberty() const { return root_ < 0 ? "0" : liberty_node(root_); }

double BoolFunction::sensitivity(const std::string& var) const {
  int v = -1;
  for (size_t i = 0; i < vars_.size(); ++i)
    if (vars_[i] == var) v = static_cast<int>(i);
  if (v < 0) return 0.0;
  if (vars_.size() > 20) throw Error("Liberty function \"" + text_ + "\": more than 20 inputs");
  const uint64_t n = uint64_t{1} << vars_.size();
  const uint64_t bit = uint64_t{1} << v;
  uint64_t differ = 0, total = 0;
  for (uint64_t a = 0; a < n; ++a) {
    if (a & bit) continue;
    ++total;
    if (eval(a) != eval(a | bit)) ++differ;
  }
  return static_cast<double>(differ) / static_cast<double>(total);
}

double BoolFunction::independent_node(int n) const {
  const Node& node = nodes_[static_cast<size_t>(n)];
  switch (node.op) {
    case Op::Var: return 0.5;
    case Op::Zero: return 0.0;
    case Op::One: return 1.0;
    case Op::Not: return 1.0 - independent_node(node.a);
    case Op::And: return independent_node(node.a) * independent_node(node.b);
    case Op::Or: {
      const double p1 = independent_node(node.a), p2 = independent_node(node.b);
      return 1.0 - (1.0 - p1) * (1.0 - p2);
    }
    case Op::Xor: {
      const double p1 = independent_node(node.a), p2 = independent_node(node.b);
      return p1 * (1.0 - p2) + p2 * (1.0 - p1);
    }
  }
  return 0.0;
}

double BoolFunction::independent_probability() const { return root_ < 0 ? 0.0 : independent_node(root_); }

bool BoolFunction::is_var_ref(int n, int var) const {
  const Node& node = nodes_[static_cast<size_t>(n)];
  if (node.op == Op::Var) return node.var == var;
  return node.op == Op::Not && nodes_[static_cast<size_t>(node.a)].op == Op::Var &&
         nodes_[static_cast<size_t>(node.a)].var == var;
}

std::string BoolFunction::inferred_node(int n, int var) const {
  const Node& node = nodes_[static_cast<size_t>(n)];
  // The other operand when `var` appears directly on one side; negated for OR/XOR.
  auto negate = [&](int m) {
    const Node& x = nodes_[static_cast<size_t>(m)];
    return x.op == Op::Not ? liberty_node(x.a) : "!(" + liberty_node(m) + ")";
  };
  switch (node.op) {
    case Op::Var: return node.var == var ? "1" : "";
    case Op::Not: return inferred_node(node.a, var);
    case Op::Or:
    case Op::Xor:
      if (is_var_ref(node.a, var)) return negate(node.b);
      if (is_var_ref(node.b, var)) return negate(node.a);
      return "";
    case Op::And:
      if (is_var_ref(node.a, var)) return liberty_node(node.b);
      if (is_var_ref(node.b, var)) return liberty_node(node.a);
      return "";
    case Op::Zero:
    case Op::One: return "";
  }
  return "";
}

bool BoolFunction::opensta_inferred_when(const std::string& var, BoolFunction& when) const {
  int v = -1;
  for (size_t i = 0; i < vars_.size(); ++i)
    if (vars_[i] == var) v = static_cast<int>(i);
  if (v < 0 || root_ < 0) return false;
  const std::string text = inferred_node(root_, v);
  if (text.empty()) return false;
  when = parse(text);
  return true;
}

}  // namespace kaleido::ppa
