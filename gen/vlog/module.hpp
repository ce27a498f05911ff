// Typed Verilog module builder (in the spirit of XLS's VAST). A generator
// declares ports and signals, then adds continuous assigns, always blocks,
// instances and generate loops; the builder checks widths, names, scoping and
// port connections as each item is added, and checks drivers and readers of
// every bit when the module is emitted (Module::check). reg versus wire is
// decided from how a signal is driven.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "vlog/expr.hpp"

namespace kaleido::vlog {

class Module;
class Block;
class IfStmt;
class CaseStmt;

enum class PortDir { Input, Output };

struct PortInfo {
  std::string name;
  PortDir dir = PortDir::Input;
  int width = 1;
  bool is_signed = false;
};

// A named port connection of an instance: `.port(expr)`.
struct Connection {
  std::string port;
  Expr expr;
};

// A module parameter (Module::parameter): a sized constant with a default an instance may override.
struct ParamInfo {
  std::string name;
  int width = 1;
  uint64_t default_value = 0;
};

// A parameter override of an instance: `#(.NAME(W'dvalue))`, W the parameter's width.
struct ParamValue {
  std::string name;
  uint64_t value = 0;
};

// Recorded in every file header: who generated it and with which parameters.
struct FileHeader {
  std::string generator;  // e.g. "kaleido gen array"
  std::vector<std::pair<std::string, std::string>> params;
};

// A lint waiver or a deliberately unused set of bits, for reports.
struct WaiverRecord {
  std::string module;
  std::string target;  // "signal x", "assign to y", "instance u_z"
  std::string code;
  std::string justification;
};
struct UnusedRecord {
  std::string module;
  std::string bits;  // Verilog text of the unused bits
  std::string justification;
};

namespace detail {
struct ModuleCtx;
// Where an item lives: its module and the chain of enclosing scope ids.
struct ScopeRef {
  std::shared_ptr<ModuleCtx> ctx;
  std::vector<int> chain;
};
enum class Proc { Comb, FlopReset, FlopBody, Flop };
}  // namespace detail

// ---- statements (inside always blocks) ---------------------------------------

class Stmt {
 public:
  enum class Kind { Assign, If, Case, Comment };
  virtual ~Stmt() = default;
  Kind kind() const { return kind_; }
  const std::string& comment() const { return comment_; }

 protected:
  Stmt(Kind k, std::string comment) : kind_(k), comment_(std::move(comment)) {}

 private:
  Kind kind_;
  std::string comment_;
};

class AssignStmt : public Stmt {
 public:
  AssignStmt(Expr lhs, Expr rhs, std::string comment)
      : Stmt(Kind::Assign, std::move(comment)), lhs_(std::move(lhs)), rhs_(std::move(rhs)) {}
  const Expr& lhs() const { return lhs_; }
  const Expr& rhs() const { return rhs_; }

 private:
  Expr lhs_, rhs_;
};

class CommentStmt : public Stmt {
 public:
  explicit CommentStmt(std::string text) : Stmt(Kind::Comment, std::move(text)) {}
};

// A statement list. Assignments are blocking (=) in always @* blocks and
// non-blocking (<=) in clocked blocks: the block kind decides, so the two can
// never be mixed up.
class Block {
 public:
  Block(detail::Proc proc, detail::ScopeRef scope) : proc_(proc), scope_(std::move(scope)) {}
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  void assign(const Expr& lhs, const Expr& rhs, const std::string& comment = "");
  void assign(const Expr& lhs, int64_t rhs, const std::string& comment = "");  // constant of lhs's width
  IfStmt& if_(const Expr& cond, const std::string& comment = "");
  CaseStmt& case_(const Expr& selector, const std::string& comment = "");
  void comment(const std::string& text);

  detail::Proc proc() const { return proc_; }
  bool blocking() const { return proc_ == detail::Proc::Comb; }
  const std::vector<std::unique_ptr<Stmt>>& stmts() const { return stmts_; }
  const detail::ScopeRef& scope() const { return scope_; }

 private:
  detail::Proc proc_;
  detail::ScopeRef scope_;
  std::vector<std::unique_ptr<Stmt>> stmts_;
};

// if (c0) ... else if (c1) ... else ...
class IfStmt : public Stmt {
 public:
  IfStmt(const Block& parent, Expr cond, std::string comment);
  Block& then_() { return *branches_[0].second; }
  Block& elif(const Expr& cond);  // else if (cond)
  Block& else_();

  const std::vector<std::pair<Expr, std::unique_ptr<Block>>>& branches() const { return branches_; }
  const Block* else_block() const { return else_block_.get(); }

 private:
  detail::Proc proc_;
  detail::ScopeRef scope_;
  std::vector<std::pair<Expr, std::unique_ptr<Block>>> branches_;
  std::unique_ptr<Block> else_block_;
};

// case (selector) ... default: ... endcase. The default branch is mandatory:
// checking fails if it was never added.
class CaseStmt : public Stmt {
 public:
  CaseStmt(const Block& parent, Expr selector, std::string comment);
  Block& item(const Expr& label);
  Block& item(const std::vector<Expr>& labels);
  Block& default_();

  struct Item {
    std::vector<Expr> labels;
    std::unique_ptr<Block> body;
  };
  const Expr& selector() const { return selector_; }
  const std::vector<Item>& items() const { return items_; }
  const Block* default_block() const { return default_block_.get(); }

 private:
  detail::Proc proc_;
  detail::ScopeRef scope_;
  Expr selector_;
  std::vector<Item> items_;
  std::vector<uint64_t> seen_;  // label values, to reject duplicates
  std::unique_ptr<Block> default_block_;
};

// ---- module items ---------------------------------------------------------------

class Item {
 public:
  enum class Kind { Assign, Always, Instance, Generate, Comment, Unused };
  virtual ~Item() = default;
  Kind kind() const { return kind_; }
  const std::string& comment() const { return comment_; }
  // Wrap this item in `/* verilator lint_off CODE */ ... lint_on`. The
  // justification is mandatory and is emitted and reported with the waiver.
  Item& waive(const std::string& code, const std::string& justification);
  const std::vector<Waiver>& waivers() const { return waivers_; }

 protected:
  Item(Kind k, std::string comment) : kind_(k), comment_(std::move(comment)) {}

 private:
  Kind kind_;
  std::string comment_;
  std::vector<Waiver> waivers_;
};

class AssignItem : public Item {
 public:
  AssignItem(Expr lhs, Expr rhs, std::string comment)
      : Item(Kind::Assign, std::move(comment)), lhs_(std::move(lhs)), rhs_(std::move(rhs)) {}
  const Expr& lhs() const { return lhs_; }
  const Expr& rhs() const { return rhs_; }

 private:
  Expr lhs_, rhs_;
};

class CommentItem : public Item {
 public:
  explicit CommentItem(std::string text) : Item(Kind::Comment, std::move(text)) {}
};

// `wire unused_x; assign unused_x = ^bits;` -- Verilator's default
// --unused-regexp (*unused*) accepts it, so it needs no waiver, but the
// justification is emitted and the bits are listed in the file header.
class UnusedItem : public Item {
 public:
  UnusedItem(std::shared_ptr<detail::Decl> sink, Expr bits, std::string justification)
      : Item(Kind::Unused, std::move(justification)), sink_(std::move(sink)), bits_(std::move(bits)) {}
  const detail::Decl& sink() const { return *sink_; }
  const Expr& bits() const { return bits_; }

 private:
  std::shared_ptr<detail::Decl> sink_;
  Expr bits_;
};

// always @* / always @(posedge clk_i) / always @(posedge clk_i or negedge rst_ni)
class Always : public Item {
 public:
  Always(detail::Proc proc, const detail::ScopeRef& scope, Expr clk, Expr rst_n, std::string comment);
  bool has_reset() const { return rst_n_.valid(); }
  bool comb() const { return !clk_.valid(); }
  const Expr& clock() const { return clk_; }
  const Expr& reset() const { return rst_n_; }
  Block& body() { return body_; }
  const Block& body() const { return body_; }
  // Reset branch (async-reset flops only): constant assignments to exactly
  // the flops the clocked branch assigns.
  Block& on_reset();
  const Block& on_reset() const;
  // Both halves of the common flop: `q <= reset_value` on reset, `q <= d` otherwise.
  void flop(const Expr& q, const Expr& d, const Expr& reset_value, const std::string& comment = "");
  void flop(const Expr& q, const Expr& d, int64_t reset_value = 0, const std::string& comment = "");

 private:
  Expr clk_, rst_n_;
  Block body_;
  std::unique_ptr<Block> reset_;
};

class InstanceItem : public Item {
 public:
  // An overridden parameter and its value, a sized constant of the parameter's width.
  struct Override {
    std::string name;
    Expr value;
  };
  InstanceItem(std::string module, std::string name, std::vector<PortInfo> ports, std::vector<Expr> conns,
               std::vector<ParamInfo> params, std::vector<Override> overrides, std::string comment)
      : Item(Kind::Instance, std::move(comment)),
        module_(std::move(module)),
        name_(std::move(name)),
        ports_(std::move(ports)),
        conns_(std::move(conns)),
        params_(std::move(params)),
        overrides_(std::move(overrides)) {}
  const std::string& module() const { return module_; }
  const std::string& name() const { return name_; }
  const std::vector<PortInfo>& ports() const { return ports_; }
  const std::vector<Expr>& connections() const { return conns_; }  // in port order
  const std::vector<ParamInfo>& params() const { return params_; }  // the module's, when the instance was added
  const std::vector<Override>& overrides() const { return overrides_; }  // in the module's parameter order

 private:
  std::string module_, name_;
  std::vector<PortInfo> ports_;
  std::vector<Expr> conns_;
  std::vector<ParamInfo> params_;
  std::vector<Override> overrides_;
};

class GenerateFor;

// Holds declarations and items; the module body and every generate-loop body.
class Scope {
 public:
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  Scope(Scope&&) = default;
  Scope& operator=(Scope&&) = default;
  virtual ~Scope() = default;

  // An internal signal; reg or wire is decided from how it is driven.
  Expr signal(const std::string& name, int width, Sign sign = Sign::Unsigned, const std::string& comment = "");
  // A named wire driven by `value` (same width and signedness).
  Expr wire(const std::string& name, const Expr& value, const std::string& comment = "");
  Item& assign(const Expr& lhs, const Expr& rhs, const std::string& comment = "");
  Block& always_comb(const std::string& comment = "");
  Always& always_ff(const Expr& clk, const Expr& rst_n, const std::string& comment = "");
  Block& always_ff_no_reset(const Expr& clk, const std::string& comment = "");
  // Named connections, checked now against the module's ports: every port
  // exactly once, equal widths, outputs to assignable signals.
  Item& instance(const Module& of, const std::string& name, const std::vector<Connection>& conns,
                 const std::string& comment = "");
  // The same with parameter overrides, checked now: each names a parameter of the module once, and
  // its value fits the parameter's width.
  Item& instance(const Module& of, const std::string& name, const std::vector<ParamValue>& params,
                 const std::vector<Connection>& conns, const std::string& comment = "");
  Item& instance(const std::string& module, const std::vector<PortInfo>& ports, const std::string& name,
                 const std::vector<Connection>& conns, const std::string& comment = "");
  // for (genvar = begin; genvar < end; genvar = genvar + 1) begin : label
  GenerateFor& generate_for(const std::string& label, const std::string& genvar, int64_t begin, int64_t end,
                            const std::string& comment = "");
  GenerateFor& generate_for(const std::string& label, const std::string& genvar, int64_t begin, const Expr& end,
                            const std::string& comment = "");
  void comment(const std::string& text);
  // Consume bits that are deliberately not used (see UnusedItem).
  void unused(const Expr& bits, const std::string& justification);

  const std::vector<std::unique_ptr<Item>>& items() const { return items_; }
  const std::vector<std::shared_ptr<detail::Decl>>& decls() const { return decls_; }
  const detail::ScopeRef& ref() const { return ref_; }

 protected:
  explicit Scope(detail::ScopeRef ref) : ref_(std::move(ref)) {}
  Item& add_instance(const std::string& module, const std::vector<PortInfo>& ports,
                     const std::vector<ParamInfo>& module_params, const std::vector<ParamValue>& params,
                     const std::string& name, const std::vector<Connection>& conns, const std::string& comment);
  std::shared_ptr<detail::Decl> declare(detail::DeclKind kind, const std::string& name, int width, bool is_signed,
                                        const std::string& comment);
  void check_label(const std::string& label, const std::string& prefix, const std::string& what);

  detail::ScopeRef ref_;
  std::vector<std::shared_ptr<detail::Decl>> decls_;
  std::vector<std::unique_ptr<Item>> items_;
  std::set<std::string> labels_;   // instance and generate-block names of this scope
  std::set<std::string> genvars_;  // genvars of this and the enclosing loops
};

class GenerateFor : public Item, public Scope {
 public:
  GenerateFor(const detail::ScopeRef& body, std::string label, std::shared_ptr<detail::Decl> genvar, int64_t begin,
              Expr end, std::string comment);
  Expr var() const { return detail::make_ref(genvar_); }
  // `localparam [width-1:0] Name = genvar;` inside the loop body: the loop
  // index as a sized constant (e.g. to compare with an address) without a
  // WIDTH warning. Every index value must fit in `width` bits.
  Expr index_param(const std::string& name, int width, const std::string& comment = "");
  const std::string& label() const { return label_; }
  const detail::Decl& genvar() const { return *genvar_; }
  int64_t begin() const { return begin_; }
  const Expr& end() const { return end_; }

 private:
  std::string label_;
  std::shared_ptr<detail::Decl> genvar_;
  int64_t begin_;
  Expr end_;
};

class Module : public Scope {
 public:
  explicit Module(const std::string& name, const std::string& description = "");
  Module(Module&&) = default;

  const std::string& name() const;
  const std::string& description() const { return description_; }

  // Ports: inputs end in _i (_ni when active low), outputs in _o (_no).
  Expr input(const std::string& name, int width, Sign sign = Sign::Unsigned, const std::string& comment = "");
  Expr output(const std::string& name, int width, Sign sign = Sign::Unsigned, const std::string& comment = "");
  // Sized localparam (UpperCamelCase or ALL_CAPS) with the value's width.
  Expr localparam(const std::string& name, const Expr& value, const std::string& comment = "");
  Expr localparam(const std::string& name, int width, uint64_t value, const std::string& comment = "");
  // `parameter [width-1:0] NAME = width'dV` in the module header: used like a sized localparam,
  // but an instance may override its value (Scope::instance with ParamValue), so one module serves
  // blocks that differ in one constant. Its value is not known to the builder (no case-label
  // duplicate check on it).
  Expr parameter(const std::string& name, int width, uint64_t default_value, const std::string& comment = "");
  // `localparam integer Name = v;` for loop bounds and index arithmetic.
  Expr localparam_int(const std::string& name, int64_t value, const std::string& comment = "");
  Memory memory(const std::string& name, int width, int depth, Sign sign = Sign::Unsigned,
                const std::string& comment = "");
  // Waive a lint code on a declaration (port, signal, memory, localparam).
  void waive(const Expr& declared, const std::string& code, const std::string& justification);
  void waive(const Memory& declared, const std::string& code, const std::string& justification);

  std::vector<PortInfo> ports() const;
  std::vector<ParamInfo> parameters() const;  // module parameters, in declaration order
  const std::vector<std::shared_ptr<detail::Decl>>& port_decls() const { return ports_; }
  const std::vector<std::shared_ptr<detail::Decl>>& param_decls() const { return params_; }
  std::vector<WaiverRecord> waivers() const;
  std::vector<UnusedRecord> unused_bits() const;
  // Every instance, generate bodies included, in order.
  std::vector<const InstanceItem*> instances() const;

  // Checks every bit of every signal has one driver and a reader, flops are
  // reset consistently, comb blocks assign on all paths, cases have defaults.
  void check() const;
  std::string emit(const FileHeader& header) const;  // checks first

 private:
  std::string description_;
  std::vector<std::shared_ptr<detail::Decl>> ports_;
  std::vector<std::shared_ptr<detail::Decl>> params_;
};

// Names of the lint codes a waiver may name (Verilator 5 warning codes).
const std::vector<std::string>& known_lint_codes();

namespace detail {

struct ModuleCtx {
  std::string name;
  uint64_t serial = 0;
  int next_scope = 1;
  std::set<std::string> decl_names;   // ports, signals, params, memories, genvars
  std::set<std::string> label_names;  // every instance and block label
};

// Analysis result used by the emitter.
struct Analysis {
  std::set<const Decl*> regs;  // procedurally driven: declared `reg`
};
Analysis analyze(const Module& m);
std::string emit_module(const Module& m, const FileHeader& header, const Analysis& a);
[[noreturn]] void build_fail(const ScopeRef& where, const std::string& msg);
void check_visible(const ScopeRef& where, const Expr& e, const std::string& what);
bool lower_snake(const std::string& s);

}  // namespace detail
}  // namespace kaleido::vlog
