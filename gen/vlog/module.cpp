// Construction-time checks: names, widths, scoping, statement placement and
// port connections. Whole-module checks (drivers, readers) are in check.cpp.
#include "vlog/module.hpp"

#include <algorithm>
#include <atomic>

#include "common/text.hpp"

namespace kaleido::vlog {

using detail::Decl;
using detail::DeclKind;
using detail::Node;
using detail::Op;
using detail::Proc;
using detail::ScopeRef;

namespace detail {

void build_fail(const ScopeRef& where, const std::string& msg) {
  throw BuildError("module " + where.ctx->name + ": " + msg);
}

void check_visible(const ScopeRef& where, const Expr& e, const std::string& what) {
  const Node& n = e.node();
  if (n.op == Op::Ref || n.op == Op::MemWord) {
    const Decl& d = *n.decl;
    if (d.module_serial != where.ctx->serial) build_fail(where, what + ": '" + d.name + "' belongs to another module");
    if (std::find(where.chain.begin(), where.chain.end(), d.scope_id) == where.chain.end())
      build_fail(where,
                 what + ": '" + d.name + "' is declared inside a generate block that does not enclose this item");
  }
  for (const Expr& a : n.args) check_visible(where, a, what);
}

bool lower_snake(const std::string& s) {
  if (s.empty() || !(s[0] >= 'a' && s[0] <= 'z') || s.back() == '_') return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok || (c == '_' && s[i + 1] == '_')) return false;
  }
  return true;
}

}  // namespace detail

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

bool constant_name(const std::string& s) {
  if (s.empty() || !(s[0] >= 'A' && s[0] <= 'Z') || s.back() == '_') return false;
  bool underscore = false, lower = false;
  for (char c : s) {
    if (c == '_')
      underscore = true;
    else if (c >= 'a' && c <= 'z')
      lower = true;
    else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
      return false;
  }
  return !(underscore && lower) && s.find("__") == std::string::npos;  // UpperCamelCase or ALL_CAPS
}

bool reserved(const std::string& s) {
  static const std::set<std::string> words = {
      "always", "and", "assign", "automatic", "begin", "buf", "case", "casex", "casez", "cell", "cmos", "config",
      "deassign", "default", "defparam", "design", "disable", "edge", "else", "end", "endcase", "endconfig",
      "endfunction", "endgenerate", "endmodule", "endprimitive", "endspecify", "endtable", "endtask", "event", "for",
      "force", "forever", "fork", "function", "generate", "genvar", "if", "ifnone", "incdir", "include", "initial",
      "inout", "input", "instance", "integer", "join", "large", "liblist", "library", "localparam", "macromodule",
      "medium", "module", "nand", "negedge", "nmos", "nor", "not", "notif0", "notif1", "or", "output", "parameter",
      "pmos", "posedge", "primitive", "pull0", "pull1", "pulldown", "pullup", "rcmos", "real", "realtime", "reg",
      "release", "repeat", "rnmos", "rpmos", "rtran", "rtranif0", "rtranif1", "scalared", "signed", "small", "specify",
      "specparam", "strong0", "strong1", "supply0", "supply1", "table", "task", "time", "tran", "tranif0", "tranif1",
      "tri", "tri0", "tri1", "triand", "trior", "trireg", "unsigned", "use", "uwire", "vectored", "wait", "wand",
      "weak0", "weak1", "while", "wire", "wor", "xnor", "xor",
      // SystemVerilog words that tools reading the file as SV would trip over.
      "alias", "always_comb", "always_ff", "always_latch", "assert", "assume", "bit", "break", "byte", "chandle",
      "class", "const", "constraint", "context", "continue", "cover", "dist", "do", "enum", "export", "extern", "final",
      "foreach", "import", "inside", "int", "interface", "local", "logic", "longint", "modport", "new", "null",
      "package", "priority", "program", "property", "protected", "pure", "rand", "ref", "return", "sequence",
      "shortint", "static", "string", "struct", "super", "this", "type", "typedef", "union", "unique", "var", "virtual",
      "void"};
  return words.count(s) > 0;
}

void lvalue_decls(const Expr& e, std::vector<const Decl*>& out) {
  const Node& n = e.node();
  if (n.op == Op::Ref || n.op == Op::MemWord) {
    out.push_back(n.decl.get());
    return;
  }
  if (n.op == Op::Concat) {
    for (const Expr& a : n.args) lvalue_decls(a, out);
    return;
  }
  lvalue_decls(n.args[0], out);
}

std::string desc(const Expr& e) {
  return "'" + detail::short_text(e) + "' (" + std::to_string(e.width()) + "-bit " +
         (e.is_signed() ? "signed" : "unsigned") + ")";
}

// The checks every assignment shares: assignable target, visible names,
// explicit widths.
void check_assignment(const ScopeRef& sc, const Expr& lhs, const Expr& rhs, const std::string& what) {
  if (!lhs.valid() || !rhs.valid()) detail::build_fail(sc, what + ": empty expression");
  if (lhs.is_elab() || !detail::is_lvalue(lhs))
    detail::build_fail(sc, what + ": '" + detail::short_text(lhs) +
                               "' is not assignable (only internal signals, output ports, selects of them and memory "
                               "words are)");
  if (rhs.is_elab())
    detail::build_fail(sc, what + ": '" + detail::short_text(rhs) +
                               "' is a genvar/integer expression; it can only be used as an index or loop bound");
  detail::check_visible(sc, lhs, what);
  detail::check_visible(sc, rhs, what);
  if (lhs.width() != rhs.width())
    detail::build_fail(sc,
                       what + ": target " + desc(lhs) + " and value " + desc(rhs) +
                           " differ in width; make the extension or truncation explicit with zext/sext/trunc/resize");
}

// Targets of continuous assigns and instance outputs become wires.
void check_continuous_target(const ScopeRef& sc, const Expr& lhs, const std::string& what) {
  std::vector<const Decl*> ds;
  lvalue_decls(lhs, ds);
  for (const Decl* d : ds) {
    if (d->kind == DeclKind::Memory)
      detail::build_fail(sc, what + ": memory '" + d->name + "' can only be written in an always_ff_no_reset block");
    if (ends_with(d->name, "_q"))
      detail::build_fail(sc, what + ": '" + d->name +
                                 "' is named as a flop (_q) but driven continuously; drive it from an always_ff block "
                                 "or rename it");
  }
}

void check_procedural_target(Proc proc, const ScopeRef& sc, const Expr& lhs, const Expr& rhs, const std::string& what) {
  std::vector<const Decl*> ds;
  lvalue_decls(lhs, ds);
  for (const Decl* d : ds) {
    if (proc == Proc::Comb) {
      if (d->kind == DeclKind::Memory)
        detail::build_fail(sc, what + ": memory '" + d->name + "' can only be written in an always_ff_no_reset block");
      if (ends_with(d->name, "_q"))
        detail::build_fail(sc, what + ": '" + d->name + "' is named as a flop (_q) but assigned in always @*");
      continue;
    }
    if (d->kind == DeclKind::Memory) {
      if (proc != Proc::Flop)
        detail::build_fail(sc, what + ": memory '" + d->name +
                                   "' cannot have an asynchronous reset; write it in an always_ff_no_reset block");
      continue;
    }
    if (d->kind == DeclKind::Output)
      detail::build_fail(
          sc, what + ": output port '" + d->name + "' cannot be a flop; assign it from a _q signal (lowRISC style)");
    if (!ends_with(d->name, "_q"))
      detail::build_fail(sc, what + ": flop '" + d->name + "' must be named *_q (lowRISC style)");
  }
  if (proc == Proc::FlopReset) {
    const Node& n = lhs.node();
    const bool fixed_bits = n.op == Op::Ref || n.op == Op::PartSel ||
                            ((n.op == Op::BitSel || n.op == Op::IndexedPart) && n.args[1].is_elab());
    if (!fixed_bits || (n.op != Op::Ref && n.args[0].node().op != Op::Ref))
      detail::build_fail(sc, what + ": the reset branch must assign flops or constant selects of them, not '" +
                                 detail::short_text(lhs) + "'");
    if (!detail::is_constant(rhs))
      detail::build_fail(sc, what + ": reset value '" + detail::short_text(rhs) + "' of '" + detail::short_text(lhs) +
                                 "' must be a constant");
  }
}

Expr constant_like(const ScopeRef& sc, const Expr& like, int64_t v) {
  if (!like.valid()) detail::build_fail(sc, "constant assignment to an empty expression");
  const int w = like.width();
  if (like.is_signed()) {
    if (w > 64 || (w < 64 && (v < -(int64_t{1} << (w - 1)) || v >= (int64_t{1} << (w - 1)))))
      detail::build_fail(sc, "constant " + std::to_string(v) + " does not fit " + desc(like));
    return sconstant(w, v);
  }
  if (v < 0 || (w < 64 && static_cast<uint64_t>(v) >= (uint64_t{1} << w)))
    detail::build_fail(sc, "constant " + std::to_string(v) + " does not fit " + desc(like));
  return constant(w, static_cast<uint64_t>(v));
}

void check_condition(const ScopeRef& sc, const Expr& c, const std::string& what) {
  if (!c.valid()) detail::build_fail(sc, what + ": empty condition");
  if (c.is_elab() || c.width() != 1)
    detail::build_fail(sc, what + " condition " + (c.is_elab() ? "'" + detail::short_text(c) + "'" : desc(c)) +
                               " must be a 1-bit value (compare wider values explicitly, e.g. x != 0)");
  detail::check_visible(sc, c, what);
}

std::atomic<uint64_t> g_module_serial{1};

}  // namespace

// ---- statements -------------------------------------------------------------------

void Block::assign(const Expr& lhs, const Expr& rhs, const std::string& comment) {
  const std::string what = std::string(blocking() ? "blocking" : "non-blocking") + " assignment to '" +
                           (lhs.valid() ? detail::short_text(lhs) : std::string("<empty>")) + "'";
  check_assignment(scope_, lhs, rhs, what);
  check_procedural_target(proc_, scope_, lhs, rhs, what);
  stmts_.push_back(std::make_unique<AssignStmt>(lhs, rhs, comment));
}

void Block::assign(const Expr& lhs, int64_t rhs, const std::string& comment) {
  assign(lhs, constant_like(scope_, lhs, rhs), comment);
}

IfStmt& Block::if_(const Expr& cond, const std::string& comment) {
  auto s = std::make_unique<IfStmt>(*this, cond, comment);
  IfStmt& ref = *s;
  stmts_.push_back(std::move(s));
  return ref;
}

CaseStmt& Block::case_(const Expr& selector, const std::string& comment) {
  auto s = std::make_unique<CaseStmt>(*this, selector, comment);
  CaseStmt& ref = *s;
  stmts_.push_back(std::move(s));
  return ref;
}

void Block::comment(const std::string& text) { stmts_.push_back(std::make_unique<CommentStmt>(text)); }

IfStmt::IfStmt(const Block& parent, Expr cond, std::string comment)
    : Stmt(Kind::If, std::move(comment)), proc_(parent.proc()), scope_(parent.scope()) {
  if (proc_ == Proc::FlopReset)
    detail::build_fail(scope_, "the reset branch of a flop block holds plain assignments only");
  check_condition(scope_, cond, "if");
  branches_.emplace_back(std::move(cond), std::make_unique<Block>(proc_, scope_));
}

Block& IfStmt::elif(const Expr& cond) {
  if (else_block_) detail::build_fail(scope_, "else if after else");
  check_condition(scope_, cond, "else if");
  branches_.emplace_back(cond, std::make_unique<Block>(proc_, scope_));
  return *branches_.back().second;
}

Block& IfStmt::else_() {
  if (!else_block_) else_block_ = std::make_unique<Block>(proc_, scope_);
  return *else_block_;
}

CaseStmt::CaseStmt(const Block& parent, Expr selector, std::string comment)
    : Stmt(Kind::Case, std::move(comment)),
      proc_(parent.proc()),
      scope_(parent.scope()),
      selector_(std::move(selector)) {
  if (proc_ == Proc::FlopReset)
    detail::build_fail(scope_, "the reset branch of a flop block holds plain assignments only");
  if (!selector_.valid() || selector_.is_elab()) detail::build_fail(scope_, "case selector must be a hardware value");
  detail::check_visible(scope_, selector_, "case selector");
}

Block& CaseStmt::item(const Expr& label) { return item(std::vector<Expr>{label}); }

Block& CaseStmt::item(const std::vector<Expr>& labels) {
  const std::string what = "case (" + detail::short_text(selector_) + ")";
  if (default_block_) detail::build_fail(scope_, what + ": item after default");
  if (labels.empty()) detail::build_fail(scope_, what + ": item without labels");
  for (const Expr& l : labels) {
    if (!l.valid() || l.is_elab() || !detail::is_constant(l))
      detail::build_fail(scope_, what + ": label '" + detail::short_text(l) + "' must be a constant or localparam");
    if (l.width() != selector_.width())
      detail::build_fail(scope_, what + ": label " + desc(l) + " and selector " + desc(selector_) + " differ in width");
    detail::check_visible(scope_, l, what);
    if (detail::has_known_value(l)) {
      const uint64_t v = detail::constant_value(l);
      if (std::find(seen_.begin(), seen_.end(), v) != seen_.end())
        detail::build_fail(
            scope_, what + ": label '" + detail::short_text(l) + "' (value " + std::to_string(v) + ") appears twice");
      seen_.push_back(v);
    }
  }
  items_.push_back(Item{labels, std::make_unique<Block>(proc_, scope_)});
  return *items_.back().body;
}

Block& CaseStmt::default_() {
  if (!default_block_) default_block_ = std::make_unique<Block>(proc_, scope_);
  return *default_block_;
}

// ---- items -----------------------------------------------------------------------------

const std::vector<std::string>& known_lint_codes() {
  static const std::vector<std::string> codes = {
      "ALWCOMBORDER", "BLKSEQ",    "CASEINCOMPLETE", "CASEOVERLAP",     "CMPCONST",     "COMBDLY",
      "DECLFILENAME", "LATCH",     "MULTIDRIVEN",    "PINCONNECTEMPTY", "PINMISSING",   "SYNCASYNCNET",
      "UNDRIVEN",     "UNOPTFLAT", "UNSIGNED",       "UNUSED",          "UNUSEDGENVAR", "UNUSEDPARAM",
      "UNUSEDSIGNAL", "WIDTH",     "WIDTHCONCAT",    "WIDTHEXPAND",     "WIDTHTRUNC"};
  return codes;
}

namespace {
Waiver make_waiver(const std::string& code, const std::string& justification, const std::string& target) {
  const auto& codes = known_lint_codes();
  if (std::find(codes.begin(), codes.end(), code) == codes.end())
    throw BuildError("waiver on " + target + ": '" + code + "' is not a known Verilator warning code");
  if (trim(justification).size() < 8)
    throw BuildError("waiver " + code + " on " + target + ": a justification (a sentence saying why) is mandatory");
  if (justification.find('\n') != std::string::npos)
    throw BuildError("waiver " + code + " on " + target + ": the justification must be one line");
  return Waiver{code, trim(justification)};
}
}  // namespace

Item& Item::waive(const std::string& code, const std::string& justification) {
  waivers_.push_back(make_waiver(code, justification, "an item"));
  return *this;
}

Always::Always(Proc proc, const ScopeRef& scope, Expr clk, Expr rst_n, std::string comment)
    : Item(Kind::Always, std::move(comment)),
      clk_(std::move(clk)),
      rst_n_(std::move(rst_n)),
      body_(proc == Proc::FlopReset ? Proc::FlopBody : proc, scope) {
  if (proc == Proc::FlopReset) reset_ = std::make_unique<Block>(Proc::FlopReset, scope);
}

Block& Always::on_reset() {
  if (!reset_) detail::build_fail(body_.scope(), "this always block has no reset branch");
  return *reset_;
}

const Block& Always::on_reset() const {
  if (!reset_) detail::build_fail(body_.scope(), "this always block has no reset branch");
  return *reset_;
}

void Always::flop(const Expr& q, const Expr& d, const Expr& reset_value, const std::string& comment) {
  on_reset().assign(q, reset_value);
  body_.assign(q, d, comment);
}

void Always::flop(const Expr& q, const Expr& d, int64_t reset_value, const std::string& comment) {
  flop(q, d, constant_like(body_.scope(), q, reset_value), comment);
}

GenerateFor::GenerateFor(const ScopeRef& body, std::string label, std::shared_ptr<Decl> genvar, int64_t begin, Expr end,
                         std::string comment)
    : Item(Kind::Generate, std::move(comment)),
      Scope(body),
      label_(std::move(label)),
      genvar_(std::move(genvar)),
      begin_(begin),
      end_(std::move(end)) {}

Expr GenerateFor::index_param(const std::string& name, int width, const std::string& comment) {
  const Node& en = end_.node();
  const int64_t known_end = en.op == Op::Int                                            ? en.ivalue
                            : (en.op == Op::Ref && en.decl->kind == DeclKind::IntParam) ? en.decl->ivalue
                                                                                        : 0;
  if (begin_ < 0 || (width < 63 && known_end - 1 >= (int64_t{1} << width)))
    detail::build_fail(ref_, "index_param " + name + ": the indices of loop " + label_ + " do not fit " +
                                 std::to_string(width) + " unsigned bits");
  auto d = declare(DeclKind::Param, name, width, false, comment);
  d->init = var();
  decls_.push_back(d);
  return detail::make_ref(d);
}

// ---- scope -----------------------------------------------------------------------------

std::shared_ptr<Decl> Scope::declare(DeclKind kind, const std::string& name, int width, bool is_signed,
                                     const std::string& comment) {
  auto& ctx = *ref_.ctx;
  const bool is_const = kind == DeclKind::Param || kind == DeclKind::IntParam;
  if (is_const ? !constant_name(name) : !detail::lower_snake(name))
    detail::build_fail(ref_, "name '" + name + "' must be " +
                                 (is_const ? "UpperCamelCase or ALL_CAPS (a constant)" : "lower_snake_case"));
  if (!is_const && reserved(name)) detail::build_fail(ref_, "name '" + name + "' is a Verilog/SystemVerilog keyword");
  if (kind != DeclKind::Sink && name.find("unused") != std::string::npos)
    detail::build_fail(ref_, "name '" + name +
                                 "' contains 'unused', which Verilator exempts from UNUSED checks; use Scope::unused() "
                                 "for deliberately unused bits");
  if (kind != DeclKind::Genvar && (ctx.decl_names.count(name) || ctx.label_names.count(name)))
    detail::build_fail(ref_, "name '" + name + "' is declared twice");
  if (width < 1 || width > (1 << 24))
    detail::build_fail(ref_, "'" + name + "' has width " + std::to_string(width) + "; widths are 1 to 2^24 bits");
  auto d = std::make_shared<Decl>();
  d->kind = kind;
  d->name = name;
  d->width = width;
  d->is_signed = is_signed;
  d->comment = comment;
  d->module_serial = ctx.serial;
  d->scope_id = ref_.chain.back();
  if (kind != DeclKind::Genvar) ctx.decl_names.insert(name);
  return d;
}

void Scope::check_label(const std::string& label, const std::string& prefix, const std::string& what) {
  if (!detail::lower_snake(label) || !starts_with(label, prefix))
    detail::build_fail(ref_, what + " name '" + label + "' must be lower_snake_case starting with '" + prefix + "'");
  if (labels_.count(label) || ref_.ctx->decl_names.count(label))
    detail::build_fail(ref_, what + " name '" + label + "' is used twice");
  labels_.insert(label);
  ref_.ctx->label_names.insert(label);
}

Expr Scope::signal(const std::string& name, int width, Sign sign, const std::string& comment) {
  for (const char* suffix : {"_i", "_o", "_ni", "_no"})
    if (ends_with(name, suffix))
      detail::build_fail(ref_, "internal signal '" + name + "' must not end in " + suffix + " (reserved for ports)");
  auto d = declare(DeclKind::Signal, name, width, sign == Sign::Signed, comment);
  decls_.push_back(d);
  return detail::make_ref(d);
}

Expr Scope::wire(const std::string& name, const Expr& value, const std::string& comment) {
  if (!value.valid() || value.is_elab()) detail::build_fail(ref_, "wire '" + name + "' needs a hardware value");
  Expr s = signal(name, value.width(), value.is_signed() ? Sign::Signed : Sign::Unsigned, comment);
  assign(s, value);
  return s;
}

Item& Scope::assign(const Expr& lhs, const Expr& rhs, const std::string& comment) {
  const std::string what = "assign to '" + (lhs.valid() ? detail::short_text(lhs) : std::string("<empty>")) + "'";
  check_assignment(ref_, lhs, rhs, what);
  check_continuous_target(ref_, lhs, what);
  items_.push_back(std::make_unique<AssignItem>(lhs, rhs, comment));
  return *items_.back();
}

Block& Scope::always_comb(const std::string& comment) {
  auto a = std::make_unique<Always>(Proc::Comb, ref_, Expr(), Expr(), comment);
  Block& b = a->body();
  items_.push_back(std::move(a));
  return b;
}

namespace {
void check_port_signal(const ScopeRef& sc, const Expr& e, const std::string& role, const std::string& prefix,
                       const std::string& suffix) {
  if (!e.valid() || e.node().op != Op::Ref || e.node().decl->kind != DeclKind::Input || e.width() != 1 ||
      !starts_with(e.node().decl->name, prefix) || !ends_with(e.node().decl->name, suffix))
    detail::build_fail(sc, role + " must be a 1-bit input port named " + prefix + "*" + suffix + ", got '" +
                               detail::short_text(e) + "'");
  detail::check_visible(sc, e, role);
}
}  // namespace

Always& Scope::always_ff(const Expr& clk, const Expr& rst_n, const std::string& comment) {
  check_port_signal(ref_, clk, "clock", "clk", "_i");
  check_port_signal(ref_, rst_n, "asynchronous reset", "rst", "_ni");
  auto a = std::make_unique<Always>(Proc::FlopReset, ref_, clk, rst_n, comment);
  Always& r = *a;
  items_.push_back(std::move(a));
  return r;
}

Block& Scope::always_ff_no_reset(const Expr& clk, const std::string& comment) {
  check_port_signal(ref_, clk, "clock", "clk", "_i");
  auto a = std::make_unique<Always>(Proc::Flop, ref_, clk, Expr(), comment);
  Block& b = a->body();
  items_.push_back(std::move(a));
  return b;
}

Item& Scope::instance(const Module& of, const std::string& name, const std::vector<Connection>& conns,
                      const std::string& comment) {
  return add_instance(of.name(), of.ports(), of.parameters(), {}, name, conns, comment);
}

Item& Scope::instance(const Module& of, const std::string& name, const std::vector<ParamValue>& params,
                      const std::vector<Connection>& conns, const std::string& comment) {
  return add_instance(of.name(), of.ports(), of.parameters(), params, name, conns, comment);
}

Item& Scope::instance(const std::string& module, const std::vector<PortInfo>& ports, const std::string& name,
                      const std::vector<Connection>& conns, const std::string& comment) {
  return add_instance(module, ports, {}, {}, name, conns, comment);
}

Item& Scope::add_instance(const std::string& module, const std::vector<PortInfo>& ports,
                          const std::vector<ParamInfo>& module_params, const std::vector<ParamValue>& params,
                          const std::string& name, const std::vector<Connection>& conns, const std::string& comment) {
  const std::string what = "instance " + name + " of " + module;
  // Overrides, like ports: a known name, once, and a value that fits the parameter.
  std::vector<InstanceItem::Override> overrides;
  for (const ParamInfo& p : module_params)
    for (const ParamValue& v : params)
      if (v.name == p.name) {
        if (!overrides.empty() && overrides.back().name == p.name)
          detail::build_fail(ref_, what + ", parameter " + p.name + ": overridden twice");
        if (p.width < 64 && v.value >> p.width != 0)
          detail::build_fail(ref_, what + ", parameter " + p.name + ": value " + std::to_string(v.value) +
                                       " does not fit its " + std::to_string(p.width) + " bits");
        overrides.push_back({p.name, constant(p.width, v.value)});
      }
  for (const ParamValue& v : params) {
    bool known = false;
    for (const ParamInfo& p : module_params) known = known || p.name == v.name;
    if (!known) {
      std::string names;
      for (const ParamInfo& p : module_params) names += (names.empty() ? "" : ", ") + p.name;
      detail::build_fail(ref_, what + ": module " + module + " has no parameter '" + v.name + "' (parameters: " +
                                   (names.empty() ? "none" : names) + ")");
    }
  }
  std::vector<Expr> ordered(ports.size());
  for (const Connection& c : conns) {
    size_t i = 0;
    while (i < ports.size() && ports[i].name != c.port) ++i;
    if (i == ports.size()) {
      std::string names;
      for (const PortInfo& p : ports) names += (names.empty() ? "" : ", ") + p.name;
      detail::build_fail(ref_, what + ": module " + module + " has no port '" + c.port + "' (ports: " + names + ")");
    }
    const PortInfo& p = ports[i];
    const std::string where = what + ", port " + p.name;
    if (ordered[i].valid()) detail::build_fail(ref_, where + ": connected twice");
    if (!c.expr.valid()) detail::build_fail(ref_, where + ": empty connection (every port must be connected)");
    if (c.expr.is_elab())
      detail::build_fail(ref_, where + ": '" + detail::short_text(c.expr) + "' is a genvar/integer expression");
    if (c.expr.width() != p.width)
      detail::build_fail(ref_, where + " is " + std::to_string(p.width) + " bits but the connection " + desc(c.expr) +
                                   " is " + std::to_string(c.expr.width()) + " bits");
    detail::check_visible(ref_, c.expr, where);
    if (p.dir == PortDir::Output) {
      if (!detail::is_lvalue(c.expr))
        detail::build_fail(ref_, where + " is an output; connect it to a signal or a select of one, not '" +
                                     detail::short_text(c.expr) + "'");
      check_continuous_target(ref_, c.expr, where);
    }
    ordered[i] = c.expr;
  }
  std::string missing;
  for (size_t i = 0; i < ports.size(); ++i)
    if (!ordered[i].valid()) missing += (missing.empty() ? "" : ", ") + ports[i].name;
  if (!missing.empty()) detail::build_fail(ref_, what + ": ports not connected: " + missing);
  check_label(name, "u_", "instance");
  items_.push_back(std::make_unique<InstanceItem>(module, name, ports, std::move(ordered), module_params,
                                                  std::move(overrides), comment));
  return *items_.back();
}

GenerateFor& Scope::generate_for(const std::string& label, const std::string& genvar, int64_t begin, int64_t end,
                                 const std::string& comment) {
  return generate_for(label, genvar, begin, integer(end), comment);
}

GenerateFor& Scope::generate_for(const std::string& label, const std::string& genvar, int64_t begin, const Expr& end,
                                 const std::string& comment) {
  if (!end.valid() || !end.is_elab())
    detail::build_fail(ref_, "generate loop " + label + ": the bound must be an integer or integer localparam");
  detail::check_visible(ref_, end, "generate loop " + label);
  const Node& en = end.node();
  const int64_t known_end = en.op == Op::Int                                            ? en.ivalue
                            : (en.op == Op::Ref && en.decl->kind == DeclKind::IntParam) ? en.decl->ivalue
                                                                                        : begin + 1;
  if (known_end <= begin)
    detail::build_fail(ref_, "generate loop " + label + " runs no iterations (" + std::to_string(begin) + " to " +
                                 std::to_string(known_end) + ")");
  if (genvars_.count(genvar))
    detail::build_fail(ref_,
                       "generate loop " + label + ": genvar '" + genvar + "' is already used by an enclosing loop");
  if (ref_.ctx->decl_names.count(genvar))
    detail::build_fail(ref_, "generate loop " + label + ": genvar name '" + genvar + "' is already declared");
  check_label(label, starts_with(label, "gen_") ? "gen_" : "g_", "generate block");
  ScopeRef body = ref_;
  body.chain.push_back(ref_.ctx->next_scope++);
  Scope tmp(body);  // declares the genvar inside the loop body, so it is visible only there
  auto gv = tmp.declare(DeclKind::Genvar, genvar, 32, true, "");
  auto g = std::make_unique<GenerateFor>(body, label, gv, begin, end, comment);
  g->genvars_ = genvars_;
  g->genvars_.insert(genvar);
  GenerateFor& r = *g;
  items_.push_back(std::move(g));
  return r;
}

void Scope::comment(const std::string& text) { items_.push_back(std::make_unique<CommentItem>(text)); }

void Scope::unused(const Expr& bits, const std::string& justification) {
  if (!bits.valid() || bits.is_elab()) detail::build_fail(ref_, "unused(): needs a hardware expression");
  detail::check_visible(ref_, bits, "unused()");
  if (trim(justification).size() < 8)
    detail::build_fail(ref_, "unused(" + detail::short_text(bits) + "): a justification is mandatory");
  // Name the sink after the first signal in the bits.
  std::string base = "bits";
  std::vector<const Node*> todo{&bits.node()};
  while (!todo.empty()) {
    const Node* n = todo.front();
    todo.erase(todo.begin());
    if (n->decl) {
      base = n->decl->name;
      break;
    }
    for (const Expr& a : n->args) todo.push_back(&a.node());
  }
  std::string name = "unused_" + base;
  for (int k = 2; ref_.ctx->decl_names.count(name) || ref_.ctx->label_names.count(name); ++k)
    name = "unused_" + base + "_" + std::to_string(k);
  auto sink = declare(DeclKind::Sink, name, 1, false, "");
  items_.push_back(std::make_unique<UnusedItem>(sink, bits, trim(justification)));
}

// ---- module ----------------------------------------------------------------------------

namespace {
ScopeRef new_module_ref(const std::string& name) {
  ScopeRef r;
  r.ctx = std::make_shared<detail::ModuleCtx>();
  r.ctx->name = name;
  r.ctx->serial = g_module_serial++;
  r.chain = {0};
  return r;
}
}  // namespace

Module::Module(const std::string& name, const std::string& description)
    : Scope(new_module_ref(name)), description_(description) {
  if (!detail::lower_snake(name) || reserved(name))
    throw BuildError("module name '" + name + "' must be lower_snake_case and not a keyword");
  if (description.find('\n') != std::string::npos)
    throw BuildError("module " + name + ": the description must be one line");
}

const std::string& Module::name() const { return ref_.ctx->name; }

Expr Module::input(const std::string& name, int width, Sign sign, const std::string& comment) {
  if (!ends_with(name, "_i") && !ends_with(name, "_ni"))
    detail::build_fail(ref_, "input port '" + name + "' must end in _i (or _ni when active low)");
  auto d = declare(DeclKind::Input, name, width, sign == Sign::Signed, comment);
  ports_.push_back(d);
  return detail::make_ref(d);
}

Expr Module::output(const std::string& name, int width, Sign sign, const std::string& comment) {
  if (!ends_with(name, "_o") && !ends_with(name, "_no"))
    detail::build_fail(ref_, "output port '" + name + "' must end in _o (or _no when active low)");
  auto d = declare(DeclKind::Output, name, width, sign == Sign::Signed, comment);
  ports_.push_back(d);
  return detail::make_ref(d);
}

Expr Module::localparam(const std::string& name, const Expr& value, const std::string& comment) {
  if (!value.valid() || value.is_elab() || !detail::is_constant(value))
    detail::build_fail(ref_, "localparam " + name + " needs a sized constant value");
  detail::check_visible(ref_, value, "localparam " + name);
  auto d = declare(DeclKind::Param, name, value.width(), value.is_signed(), comment);
  d->init = value;
  if (value.node().op == Op::Const) d->value = value.node().value;
  params_.push_back(d);
  return detail::make_ref(d);
}

Expr Module::localparam(const std::string& name, int width, uint64_t value, const std::string& comment) {
  return localparam(name, constant(width, value), comment);
}

Expr Module::parameter(const std::string& name, int width, uint64_t default_value, const std::string& comment) {
  if (width > 64 || (width < 64 && default_value >> width != 0))
    detail::build_fail(ref_, "parameter " + name + ": default " + std::to_string(default_value) + " does not fit " +
                                 std::to_string(width) + " unsigned bits (at most 64)");
  const Expr p = localparam(name, constant(width, default_value), comment);
  p.node().decl->overridable = true;
  return p;
}

Expr Module::localparam_int(const std::string& name, int64_t value, const std::string& comment) {
  if (value < INT32_MIN || value > INT32_MAX)
    detail::build_fail(ref_, "localparam " + name + " = " + std::to_string(value) + " does not fit a Verilog integer");
  auto d = declare(DeclKind::IntParam, name, 32, true, comment);
  d->ivalue = value;
  params_.push_back(d);
  return detail::make_ref(d);
}

Memory Module::memory(const std::string& name, int width, int depth, Sign sign, const std::string& comment) {
  if (depth < 2)
    detail::build_fail(ref_, "memory '" + name + "' needs a depth of at least 2, got " + std::to_string(depth));
  auto d = declare(DeclKind::Memory, name, width, sign == Sign::Signed, comment);
  d->depth = depth;
  decls_.push_back(d);
  return Memory(d);
}

void Module::waive(const Expr& declared, const std::string& code, const std::string& justification) {
  if (!declared.valid() || declared.node().op != Op::Ref || declared.node().decl->kind == DeclKind::Genvar)
    detail::build_fail(
        ref_, "waive(): needs a declared port, signal or localparam, got '" + detail::short_text(declared) + "'");
  Decl& d = *declared.node().decl;
  if (d.module_serial != ref_.ctx->serial)
    detail::build_fail(ref_, "waive(): '" + d.name + "' belongs to another module");
  d.waivers.push_back(make_waiver(code, justification, "'" + d.name + "'"));
}

void Module::waive(const Memory& declared, const std::string& code, const std::string& justification) {
  if (!declared.decl() || declared.decl()->module_serial != ref_.ctx->serial)
    detail::build_fail(ref_, "waive(): needs a memory of this module");
  declared.decl()->waivers.push_back(make_waiver(code, justification, "'" + declared.name() + "'"));
}

std::vector<PortInfo> Module::ports() const {
  std::vector<PortInfo> r;
  for (const auto& d : ports_)
    r.push_back(
        PortInfo{d->name, d->kind == DeclKind::Input ? PortDir::Input : PortDir::Output, d->width, d->is_signed});
  return r;
}

std::vector<ParamInfo> Module::parameters() const {
  std::vector<ParamInfo> r;
  for (const auto& d : params_)
    if (d->overridable) r.push_back(ParamInfo{d->name, d->width, d->value});
  return r;
}

namespace {
void collect(const Scope& s, const std::string& path, const std::string& module, std::vector<WaiverRecord>* w,
             std::vector<UnusedRecord>* u, std::vector<const InstanceItem*>* inst) {
  const std::string in = path.empty() ? "" : " in " + path;
  if (w)
    for (const auto& d : s.decls())
      for (const Waiver& x : d->waivers) w->push_back({module, "signal " + d->name + in, x.code, x.justification});
  for (const auto& item : s.items()) {
    std::string target;
    switch (item->kind()) {
      case Item::Kind::Assign:
        target = "assign to " + static_cast<const AssignItem&>(*item).lhs().str();
        break;
      case Item::Kind::Instance:
        target = "instance " + static_cast<const InstanceItem&>(*item).name();
        if (inst) inst->push_back(&static_cast<const InstanceItem&>(*item));
        break;
      case Item::Kind::Always:
        target = "always block";
        break;
      case Item::Kind::Generate: {
        const auto& g = static_cast<const GenerateFor&>(*item);
        target = "generate block " + g.label();
        collect(g, path.empty() ? g.label() : path + "." + g.label(), module, w, u, inst);
        break;
      }
      case Item::Kind::Unused:
        if (u) u->push_back({module, static_cast<const UnusedItem&>(*item).bits().str() + in, item->comment()});
        break;
      case Item::Kind::Comment:
        break;
    }
    if (w)
      for (const Waiver& x : item->waivers()) w->push_back({module, target + in, x.code, x.justification});
  }
}
}  // namespace

std::vector<WaiverRecord> Module::waivers() const {
  std::vector<WaiverRecord> r;
  for (const auto* list : {&ports_, &params_})
    for (const auto& d : *list)
      for (const Waiver& x : d->waivers) r.push_back({name(), "signal " + d->name, x.code, x.justification});
  collect(*this, "", name(), &r, nullptr, nullptr);
  return r;
}

std::vector<UnusedRecord> Module::unused_bits() const {
  std::vector<UnusedRecord> r;
  collect(*this, "", name(), nullptr, &r, nullptr);
  return r;
}

std::vector<const InstanceItem*> Module::instances() const {
  std::vector<const InstanceItem*> r;
  collect(*this, "", name(), nullptr, nullptr, &r);
  return r;
}

void Module::check() const { detail::analyze(*this); }

std::string Module::emit(const FileHeader& header) const {
  return detail::emit_module(*this, header, detail::analyze(*this));
}

}  // namespace kaleido::vlog
