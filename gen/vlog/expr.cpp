#include "vlog/expr.hpp"

#include <limits>

namespace kaleido::vlog {

using detail::Decl;
using detail::DeclKind;
using detail::Node;
using detail::Op;

namespace {

[[noreturn]] void fail(const std::string& msg) { throw BuildError(msg); }

std::string describe(const Expr& e) {
  if (e.is_elab()) return "'" + detail::short_text(e) + "' (elaboration-time integer)";
  return "'" + detail::short_text(e) + "' (" + std::to_string(e.width()) + "-bit " +
         (e.is_signed() ? "signed" : "unsigned") + ")";
}

void need(const Expr& e, const std::string& what) {
  if (!e.valid()) fail(what + ": expression is empty (default-constructed Expr)");
}

void need_hw(const Expr& e, const std::string& what) {
  need(e, what);
  if (e.is_elab())
    fail(what + ": " + describe(e) + " is a genvar/integer expression; it can only be used as an index or loop bound");
}

std::shared_ptr<Node> node(Op op, int width, bool is_signed) {
  auto n = std::make_shared<Node>();
  n->op = op;
  n->width = width;
  n->is_signed = is_signed;
  return n;
}

Expr wrap(std::shared_ptr<Node> n) { return Expr(std::shared_ptr<const Node>(std::move(n))); }

uint64_t mask_of(int width) { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

Expr elab_binary(const std::string& sym, const Expr& a, const Expr& b) {
  auto n = node(Op::Binary, 32, true);
  n->elab = true;
  n->sym = sym;
  n->args = {a, b};
  return wrap(n);
}

// An int operand beside a hardware operand takes its width and signedness.
Expr like(const Expr& other, int64_t v, const std::string& op) {
  need(other, "operator " + op);
  if (other.is_elab()) return integer(v);
  const int w = other.width();
  if (other.is_signed()) {
    const bool fits = w >= 64 || (v >= -(int64_t{1} << (w - 1)) && v < (int64_t{1} << (w - 1)));
    if (!fits)
      fail("constant " + std::to_string(v) + " does not fit the " + describe(other) + " operand of '" + op + "'");
    return sconstant(w, v);
  }
  if (v < 0 || (w < 64 && static_cast<uint64_t>(v) > mask_of(w)))
    fail("constant " + std::to_string(v) + " does not fit the " + describe(other) + " operand of '" + op + "'");
  return constant(w, static_cast<uint64_t>(v));
}

// + - * & | ^ : equal widths and signedness, result of that width.
Expr arith(const std::string& sym, const Expr& a, const Expr& b) {
  need(a, "left operand of '" + sym + "'");
  need(b, "right operand of '" + sym + "'");
  if (a.is_elab() && b.is_elab()) {
    if (sym != "+" && sym != "-" && sym != "*" && sym != "/" && sym != "%")
      fail("operator '" + sym + "' is not available on genvar/integer expressions");
    return elab_binary(sym, a, b);
  }
  need_hw(a, "left operand of '" + sym + "'");
  need_hw(b, "right operand of '" + sym + "'");
  if (sym == "/" || sym == "%") fail("operator '" + sym + "' is only available on genvar/integer expressions");
  if (a.width() != b.width())
    fail("operands of '" + sym + "' differ in width: " + describe(a) + " and " + describe(b) +
         "; extend or truncate one explicitly (zext/sext/trunc/resize)");
  if (a.is_signed() != b.is_signed())
    fail("operands of '" + sym + "' differ in signedness: " + describe(a) + " and " + describe(b) +
         "; cast one with as_signed/as_unsigned");
  auto n = node(Op::Binary, a.width(), a.is_signed());
  n->sym = sym;
  n->args = {a, b};
  return wrap(n);
}

Expr compare(const std::string& sym, const Expr& a, const Expr& b) {
  need_hw(a, "left operand of '" + sym + "'");
  need_hw(b, "right operand of '" + sym + "'");
  if (a.width() != b.width())
    fail("operands of '" + sym + "' differ in width: " + describe(a) + " and " + describe(b) +
         "; extend or truncate one explicitly (zext/sext/trunc/resize)");
  if (a.is_signed() != b.is_signed())
    fail("operands of '" + sym + "' differ in signedness: " + describe(a) + " and " + describe(b) +
         "; cast one with as_signed/as_unsigned");
  auto n = node(Op::Binary, 1, false);
  n->sym = sym;
  n->args = {a, b};
  return wrap(n);
}

Expr logical(const std::string& sym, const Expr& a, const Expr& b) {
  need_hw(a, "left operand of '" + sym + "'");
  need_hw(b, "right operand of '" + sym + "'");
  if (a.width() != 1 || b.width() != 1)
    fail("operands of '" + sym + "' must be 1 bit: got " + describe(a) + " and " + describe(b) +
         "; reduce wider values explicitly (e.g. x != 0 or reduce_or(x))");
  auto n = node(Op::Binary, 1, false);
  n->sym = sym;
  n->args = {a, b};
  return wrap(n);
}

Expr shift(const std::string& sym, const Expr& a, const Expr& amount) {
  need_hw(a, "left operand of '" + sym + "'");
  need(amount, "shift amount of '" + sym + "'");
  if (!amount.is_elab() && amount.is_signed())
    fail("shift amount " + describe(amount) + " of '" + sym + "' must be unsigned");
  if (sym == ">>>" && !a.is_signed())
    fail("arithmetic shift '>>>' needs a signed operand, got " + describe(a) + "; use >> or as_signed()");
  auto n = node(Op::Binary, a.width(), a.is_signed());
  n->sym = sym;
  n->args = {a, amount};
  return wrap(n);
}

Expr shift_const(const std::string& sym, const Expr& a, int amount) {
  need_hw(a, "left operand of '" + sym + "'");
  if (amount < 0 || amount >= a.width())
    fail("shift amount " + std::to_string(amount) + " of '" + sym + "' on " + describe(a) + " must be in [0, " +
         std::to_string(a.width() - 1) + "]");
  if (amount == 0) return a;
  return shift(sym, a, integer(amount));
}

// ~ and - keep the operand's sign; !, and the reductions give 1-bit unsigned.
Expr unary(const std::string& sym, const Expr& a, int width) {
  auto n = node(Op::Unary, width, (sym == "~" || sym == "-") && a.is_signed());
  n->sym = sym;
  n->args = {a};
  return wrap(n);
}

// Selecting bits needs a named source in Verilog-2005.
bool selectable(const Expr& e) {
  const Node& n = e.node();
  if (n.op == Op::MemWord) return true;
  if (n.op != Op::Ref) return false;
  return n.decl->kind != DeclKind::Genvar && n.decl->kind != DeclKind::IntParam && n.decl->kind != DeclKind::Memory;
}

std::string select_hint(const Expr& e) {
  return "cannot select bits of " + describe(e) +
         ": only signals, ports, localparams and memory words can be selected; name the value with "
         "Scope::wire() first";
}

Expr make_bitsel(const Expr& base, const Expr& index) {
  auto n = node(Op::BitSel, 1, false);
  n->args = {base, index};
  return wrap(n);
}

Expr make_partsel(const Expr& base, int hi, int lo) {
  auto n = node(Op::PartSel, hi - lo + 1, false);
  n->hi = hi;
  n->lo = lo;
  n->args = {base};
  return wrap(n);
}

Expr make_indexed(const Expr& base, const Expr& start, int width) {
  auto n = node(Op::IndexedPart, width, false);
  n->args = {base, start};
  return wrap(n);
}

void check_hw_index(const Expr& base, const Expr& index, const std::string& what) {
  if (index.is_signed()) fail(what + " index " + describe(index) + " into " + describe(base) + " must be unsigned");
  const int want = clog2(base.width());
  if (index.width() != want)
    fail(what + " index " + describe(index) + " into " + describe(base) + " must be exactly " + std::to_string(want) +
         " bits (clog2 of the width)");
}

}  // namespace

// ---- Expr ----------------------------------------------------------------------

const Node& Expr::node() const {
  if (!node_) fail("use of an empty expression (default-constructed Expr)");
  return *node_;
}
int Expr::width() const { return node().width; }
bool Expr::is_signed() const { return node().is_signed; }
bool Expr::is_elab() const { return node().elab; }

Expr Expr::operator[](int bit) const {
  need_hw(*this, "bit select");
  if (bit < 0 || bit >= width()) fail("bit " + std::to_string(bit) + " is out of range of " + describe(*this));
  const Node& n = node();
  switch (n.op) {
    case Op::Const:
      return constant(1, (n.value >> bit) & 1u);
    case Op::PartSel:
      return n.args[0][n.lo + bit];
    case Op::IndexedPart:
      return make_bitsel(n.args[0], n.args[1] + integer(bit));
    case Op::BitSel:
      return *this;
    default:
      break;
  }
  if (!selectable(*this)) fail(select_hint(*this));
  if (width() == 1 && n.op == Op::Ref) return as_unsigned(*this);
  return make_bitsel(*this, integer(bit));
}

Expr Expr::operator[](const Expr& index) const {
  need_hw(*this, "bit select");
  need(index, "bit select index");
  const Node& n = node();
  if (index.is_elab()) {
    if (index.node().op == Op::Int) {
      const int64_t v = index.node().ivalue;
      if (v < 0 || v >= width()) fail("bit " + std::to_string(v) + " is out of range of " + describe(*this));
      return (*this)[static_cast<int>(v)];
    }
    if (n.op == Op::PartSel) return make_bitsel(n.args[0], index + integer(n.lo));
    if (n.op == Op::IndexedPart) return make_bitsel(n.args[0], n.args[1] + index);
    if (!selectable(*this)) fail(select_hint(*this));
    return make_bitsel(*this, index);
  }
  if (!selectable(*this)) fail(select_hint(*this));
  check_hw_index(*this, index, "bit select");
  return make_bitsel(*this, index);
}

Expr Expr::slice(int hi, int lo) const {
  need_hw(*this, "part select");
  if (lo < 0 || hi < lo || hi >= width())
    fail("part select [" + std::to_string(hi) + ":" + std::to_string(lo) + "] is out of range of " + describe(*this));
  if (hi == lo) return (*this)[lo];
  const Node& n = node();
  if (lo == 0 && hi == width() - 1) return n.op == Op::Const ? constant(width(), n.value) : as_unsigned(*this);
  switch (n.op) {
    case Op::Const:
      return constant(hi - lo + 1, (n.value >> lo) & mask_of(hi - lo + 1));
    case Op::PartSel:
      return n.args[0].slice(n.lo + hi, n.lo + lo);
    case Op::IndexedPart:
      return make_indexed(n.args[0], n.args[1] + integer(lo), hi - lo + 1);
    default:
      break;
  }
  if (!selectable(*this)) fail(select_hint(*this));
  return make_partsel(*this, hi, lo);
}

Expr Expr::part(const Expr& base, int w) const {
  need_hw(*this, "indexed part select");
  need(base, "indexed part select base");
  if (w < 1 || w > width()) fail("indexed part select width " + std::to_string(w) + " does not fit " + describe(*this));
  if (base.is_elab()) {
    if (base.node().op == Op::Int) {
      const int64_t v = base.node().ivalue;
      if (v < 0 || v + w > width())
        fail("part select [" + std::to_string(v) + " +: " + std::to_string(w) + "] is out of range of " +
             describe(*this));
      return slice(static_cast<int>(v) + w - 1, static_cast<int>(v));
    }
    const Node& n = node();
    if (n.op == Op::PartSel) return make_indexed(n.args[0], base + integer(n.lo), w);
    if (n.op == Op::IndexedPart) return make_indexed(n.args[0], n.args[1] + base, w);
    if (!selectable(*this)) fail(select_hint(*this));
    return make_indexed(*this, base, w);
  }
  if (!selectable(*this)) fail(select_hint(*this));
  check_hw_index(*this, base, "indexed part select");
  return make_indexed(*this, base, w);
}

// ---- Memory ------------------------------------------------------------------------

Expr Memory::operator[](const Expr& addr) const {
  if (!decl_) fail("use of an empty Memory handle");
  need(addr, "memory '" + decl_->name + "' address");
  if (!addr.is_elab()) {
    if (addr.is_signed() || addr.width() != addr_width())
      fail("address " + describe(addr) + " of memory '" + decl_->name + "' (depth " + std::to_string(decl_->depth) +
           ") must be " + std::to_string(addr_width()) + "-bit unsigned");
  } else if (addr.node().op == Op::Int && (addr.node().ivalue < 0 || addr.node().ivalue >= decl_->depth)) {
    fail("address " + std::to_string(addr.node().ivalue) + " is out of range of memory '" + decl_->name + "'");
  }
  auto n = node(Op::MemWord, decl_->width, decl_->is_signed);
  n->decl = decl_;
  n->args = {addr};
  return wrap(n);
}
int Memory::width() const { return decl_->width; }
int Memory::depth() const { return decl_->depth; }
int Memory::addr_width() const { return clog2(decl_->depth); }
const std::string& Memory::name() const { return decl_->name; }

// ---- constants --------------------------------------------------------------------

Expr constant(int width, uint64_t value, Radix radix) {
  if (width < 1) fail("constant width must be at least 1, got " + std::to_string(width));
  if (width < 64 && value > mask_of(width))
    fail("constant " + std::to_string(value) + " does not fit in " + std::to_string(width) + " bits");
  auto n = node(Op::Const, width, false);
  n->value = value;
  n->radix = radix;
  return wrap(n);
}

Expr sconstant(int width, int64_t value) {
  if (width < 1 || width > 64) fail("signed constant width must be in [1, 64], got " + std::to_string(width));
  const bool fits = width == 64 || (value >= -(int64_t{1} << (width - 1)) && value < (int64_t{1} << (width - 1)));
  if (!fits) fail("signed constant " + std::to_string(value) + " does not fit in " + std::to_string(width) + " bits");
  auto n = node(Op::Const, width, true);
  n->value = static_cast<uint64_t>(value) & mask_of(width);
  n->ivalue = value;
  return wrap(n);
}

Expr zero(int width) { return constant(width, 0); }
Expr ones(int width) { return width == 1 ? constant(1, 1) : repl(width, constant(1, 1)); }
Expr bit(bool value) { return constant(1, value ? 1 : 0); }

Expr integer(int64_t value) {
  auto n = node(Op::Int, 32, true);
  n->elab = true;
  n->ivalue = value;
  return wrap(n);
}

// ---- width and sign helpers ---------------------------------------------------

Expr zext(const Expr& x, int width) {
  need_hw(x, "zext");
  if (width < x.width())
    fail("zext of " + describe(x) + " to " + std::to_string(width) + " bits would shrink it; use trunc");
  if (x.node().op == Op::Const && !x.is_signed()) return constant(width, x.node().value, x.node().radix);
  if (width == x.width()) return as_unsigned(x);
  return concat({zero(width - x.width()), x});
}

Expr sext(const Expr& x, int width) {
  need_hw(x, "sext");
  if (width < x.width())
    fail("sext of " + describe(x) + " to " + std::to_string(width) + " bits would shrink it; use trunc");
  if (width == x.width()) return x;
  const Node& n = x.node();
  if (n.op == Op::Const && width <= 64) {
    const bool neg = (n.value >> (x.width() - 1)) & 1u;
    const uint64_t v = neg ? (n.value | (mask_of(width) & ~mask_of(x.width()))) : n.value;
    if (x.is_signed()) return sconstant(width, static_cast<int64_t>(v << (64 - width)) >> (64 - width));
    return constant(width, v);
  }
  Expr top;
  try {
    top = x.msb();
  } catch (const BuildError&) {
    fail("sext: " + select_hint(x));
  }
  const int extra = width - x.width();
  Expr r = concat({extra == 1 ? top : repl(extra, top), x});
  return x.is_signed() ? as_signed(r) : r;
}

Expr trunc(const Expr& x, int width) {
  need_hw(x, "trunc");
  if (width > x.width())
    fail("trunc of " + describe(x) + " to " + std::to_string(width) + " bits would widen it; use zext/sext");
  if (width == x.width()) return x;
  const Node& n = x.node();
  if (n.op == Op::Const) {
    const uint64_t v = n.value & mask_of(width);
    if (x.is_signed()) return sconstant(width, static_cast<int64_t>(v << (64 - width)) >> (64 - width));
    return constant(width, v, n.radix);
  }
  Expr r;
  try {
    r = x.slice(width - 1, 0);
  } catch (const BuildError&) {
    fail("trunc: " + select_hint(x));
  }
  return x.is_signed() ? as_signed(r) : r;
}

Expr resize(const Expr& x, int width) {
  need_hw(x, "resize");
  if (width < x.width()) return trunc(x, width);
  return x.is_signed() ? sext(x, width) : zext(x, width);
}

Expr as_signed(const Expr& x) {
  need_hw(x, "as_signed");
  if (x.is_signed()) return x;
  const Node& n = x.node();
  if (n.op == Op::Const && x.width() <= 64)
    return sconstant(x.width(), static_cast<int64_t>(n.value << (64 - x.width())) >> (64 - x.width()));
  if (n.op == Op::Cast && n.args[0].is_signed()) return n.args[0];  // $signed($unsigned(s)) is s
  auto c = node(Op::Cast, x.width(), true);
  c->sym = "$signed";
  c->args = {x};
  return wrap(c);
}

Expr as_unsigned(const Expr& x) {
  need_hw(x, "as_unsigned");
  if (!x.is_signed()) return x;
  const Node& n = x.node();
  if (n.op == Op::Const) return constant(x.width(), n.value);
  if (n.op == Op::Cast && !n.args[0].is_signed()) return n.args[0];
  auto c = node(Op::Cast, x.width(), false);
  c->sym = "$unsigned";
  c->args = {x};
  return wrap(c);
}

// ---- structure ---------------------------------------------------------------------

Expr concat(const std::vector<Expr>& parts) {
  if (parts.empty()) fail("concat of no expressions");
  int w = 0;
  for (const Expr& p : parts) {
    need_hw(p, "concat element");
    w += p.width();
  }
  if (parts.size() == 1) return as_unsigned(parts[0]);
  auto n = node(Op::Concat, w, false);
  n->args = parts;
  return wrap(n);
}

Expr repl(int count, const Expr& x) {
  need_hw(x, "replication");
  if (count < 1) fail("replication count must be at least 1, got " + std::to_string(count));
  if (count == 1) return as_unsigned(x);
  if (x.node().op == Op::Const && x.node().value == 0) return zero(count * x.width());
  auto n = node(Op::Repl, count * x.width(), false);
  n->hi = count;
  n->args = {x};
  return wrap(n);
}

Expr mux(const Expr& cond, const Expr& if_true, const Expr& if_false) {
  need_hw(cond, "mux condition");
  need_hw(if_true, "mux true branch");
  need_hw(if_false, "mux false branch");
  if (cond.width() != 1) fail("mux condition " + describe(cond) + " must be 1 bit");
  if (if_true.width() != if_false.width())
    fail("mux branches differ in width: " + describe(if_true) + " and " + describe(if_false));
  if (if_true.is_signed() != if_false.is_signed())
    fail("mux branches differ in signedness: " + describe(if_true) + " and " + describe(if_false));
  auto n = node(Op::Ternary, if_true.width(), if_true.is_signed());
  n->args = {cond, if_true, if_false};
  return wrap(n);
}

Expr select(const Expr& index, const std::vector<Expr>& options, const Expr& otherwise) {
  need_hw(index, "select index");
  need_hw(otherwise, "select default");
  if (index.is_signed()) fail("select index " + describe(index) + " must be unsigned");
  if (options.empty()) return otherwise;  // every index is past the last option
  const int iw = index.width();
  if (iw < 63 && options.size() > (uint64_t{1} << iw))
    fail("select index " + describe(index) + " cannot reach all " + std::to_string(options.size()) + " options");
  std::vector<Expr> level;
  for (const Expr& o : options) {
    need_hw(o, "select option");
    if (o.width() != otherwise.width() || o.is_signed() != otherwise.is_signed())
      fail("select option " + describe(o) + " differs in width or signedness from " + describe(otherwise));
    level.push_back(o);
  }
  const auto same = [](const Expr& a, const Expr& b) { return &a.node() == &b.node(); };
  for (int b = 0; b < iw; ++b) {
    std::vector<Expr> up;
    for (size_t i = 0; i < level.size(); i += 2) {
      const Expr& lo = level[i];
      const Expr& hi = i + 1 < level.size() ? level[i + 1] : otherwise;
      up.push_back(same(lo, hi) ? lo : mux(index[b], hi, lo));
    }
    level = std::move(up);
  }
  return level.front();
}

// ---- operators --------------------------------------------------------------------

Expr operator+(const Expr& a, const Expr& b) { return arith("+", a, b); }
Expr operator-(const Expr& a, const Expr& b) { return arith("-", a, b); }
Expr operator*(const Expr& a, const Expr& b) { return arith("*", a, b); }
Expr operator&(const Expr& a, const Expr& b) { return arith("&", a, b); }
Expr operator|(const Expr& a, const Expr& b) { return arith("|", a, b); }
Expr operator^(const Expr& a, const Expr& b) { return arith("^", a, b); }
Expr operator+(const Expr& a, int64_t b) {
  if (a.valid() && a.is_elab() && b < 0) return arith("-", a, integer(-b));
  return arith("+", a, like(a, b, "+"));
}
Expr operator-(const Expr& a, int64_t b) {
  if (a.valid() && a.is_elab() && b < 0) return arith("+", a, integer(-b));
  return arith("-", a, like(a, b, "-"));
}
Expr operator*(const Expr& a, int64_t b) { return arith("*", a, like(a, b, "*")); }
Expr operator&(const Expr& a, int64_t b) { return arith("&", a, like(a, b, "&")); }
Expr operator|(const Expr& a, int64_t b) { return arith("|", a, like(a, b, "|")); }
Expr operator^(const Expr& a, int64_t b) { return arith("^", a, like(a, b, "^")); }
Expr operator+(int64_t a, const Expr& b) { return arith("+", like(b, a, "+"), b); }
Expr operator*(int64_t a, const Expr& b) { return arith("*", like(b, a, "*"), b); }
Expr operator/(const Expr& a, int64_t b) {
  if (b == 0) fail("division of '" + detail::short_text(a) + "' by zero");
  return arith("/", a, integer(b));
}
Expr operator%(const Expr& a, int64_t b) {
  if (b == 0) fail("remainder of '" + detail::short_text(a) + "' by zero");
  return arith("%", a, integer(b));
}

Expr mul_full(const Expr& a, const Expr& b) {
  need_hw(a, "mul_full");
  need_hw(b, "mul_full");
  if (a.is_signed() != b.is_signed())
    fail("mul_full operands differ in signedness: " + describe(a) + " and " + describe(b));
  const int w = a.width() + b.width();
  return resize(a, w) * resize(b, w);
}

Expr operator<<(const Expr& a, const Expr& amount) { return shift("<<", a, amount); }
Expr operator>>(const Expr& a, const Expr& amount) { return shift(">>", a, amount); }
Expr operator<<(const Expr& a, int amount) { return shift_const("<<", a, amount); }
Expr operator>>(const Expr& a, int amount) { return shift_const(">>", a, amount); }
Expr sra(const Expr& a, const Expr& amount) { return shift(">>>", a, amount); }
Expr sra(const Expr& a, int amount) {
  need_hw(a, "sra");
  if (!a.is_signed()) fail("arithmetic shift '>>>' needs a signed operand, got " + describe(a));
  return shift_const(">>>", a, amount);
}

Expr operator==(const Expr& a, const Expr& b) { return compare("==", a, b); }
Expr operator!=(const Expr& a, const Expr& b) { return compare("!=", a, b); }
Expr operator<(const Expr& a, const Expr& b) { return compare("<", a, b); }
Expr operator<=(const Expr& a, const Expr& b) { return compare("<=", a, b); }
Expr operator>(const Expr& a, const Expr& b) { return compare(">", a, b); }
Expr operator>=(const Expr& a, const Expr& b) { return compare(">=", a, b); }
Expr operator==(const Expr& a, int64_t b) { return compare("==", a, like(a, b, "==")); }
Expr operator!=(const Expr& a, int64_t b) { return compare("!=", a, like(a, b, "!=")); }
Expr operator<(const Expr& a, int64_t b) { return compare("<", a, like(a, b, "<")); }
Expr operator<=(const Expr& a, int64_t b) { return compare("<=", a, like(a, b, "<=")); }
Expr operator>(const Expr& a, int64_t b) { return compare(">", a, like(a, b, ">")); }
Expr operator>=(const Expr& a, int64_t b) { return compare(">=", a, like(a, b, ">=")); }

Expr operator&&(const Expr& a, const Expr& b) { return logical("&&", a, b); }
Expr operator||(const Expr& a, const Expr& b) { return logical("||", a, b); }
Expr operator!(const Expr& a) {
  need_hw(a, "operator '!'");
  if (a.width() != 1)
    fail("operand of '!' must be 1 bit, got " + describe(a) + "; use x == 0 or ~x for a bitwise inversion");
  return unary("!", a, 1);
}

Expr operator~(const Expr& a) {
  need_hw(a, "operator '~'");
  if (a.node().op == Op::Const && !a.is_signed()) return constant(a.width(), ~a.node().value & mask_of(a.width()));
  return unary("~", a, a.width());
}

Expr operator-(const Expr& a) {
  need(a, "unary '-'");
  if (a.is_elab()) {
    auto n = node(Op::Unary, 32, true);
    n->elab = true;
    n->sym = "-";
    n->args = {a};
    return wrap(n);
  }
  return unary("-", a, a.width());
}

Expr reduce_and(const Expr& a) {
  need_hw(a, "reduce_and");
  return unary("&", a, 1);
}
Expr reduce_or(const Expr& a) {
  need_hw(a, "reduce_or");
  return unary("|", a, 1);
}
Expr reduce_xor(const Expr& a) {
  need_hw(a, "reduce_xor");
  return unary("^", a, 1);
}

// ---- printing -------------------------------------------------------------------------

namespace {

std::string const_text(const Node& n) {
  if (n.width == 1 && !n.is_signed) return n.value ? "1'b1" : "1'b0";
  const std::string w = std::to_string(n.width);
  if (n.is_signed) {
    if (n.ivalue < 0) return "-" + w + "'sd" + std::to_string(uint64_t{0} - static_cast<uint64_t>(n.ivalue));
    return w + "'sd" + std::to_string(n.ivalue);
  }
  if (n.radix == Radix::Dec) return w + "'d" + std::to_string(n.value);
  const int bits_per_digit = n.radix == Radix::Hex ? 4 : 1;
  const int digits = std::min((n.width + bits_per_digit - 1) / bits_per_digit, 64 / bits_per_digit);
  std::string s;
  for (int i = digits - 1; i >= 0; --i) {
    const unsigned d = static_cast<unsigned>((n.value >> (i * bits_per_digit)) & ((1u << bits_per_digit) - 1));
    s += "0123456789abcdef"[d];
  }
  return w + (n.radix == Radix::Hex ? "'h" : "'b") + s;
}

bool is_primary(const Node& n) {
  switch (n.op) {
    case Op::Unary:
    case Op::Binary:
    case Op::Ternary:
      return false;
    case Op::Int:
    case Op::Const:
      return n.op == Op::Int ? n.ivalue >= 0 : !(n.is_signed && n.ivalue < 0);
    default:
      return true;
  }
}

// Whether `child` needs no parentheses as an operand of `parent`: left-leaning
// chains of one family, and products inside sums (school precedence).
bool chains(const std::string& parent, const std::string& child, bool left) {
  const bool additive = parent == "+" || parent == "-";
  const bool multiplicative = child == "*" || child == "/" || child == "%";
  if (additive && multiplicative) return true;
  if (!left) return false;
  if (additive && (child == "+" || child == "-")) return true;
  if ((parent == "*" || parent == "/" || parent == "%") && multiplicative) return true;
  return parent == child &&
         (parent == "*" || parent == "&" || parent == "|" || parent == "^" || parent == "&&" || parent == "||");
}

std::string text(const Expr& e);

// Parentheses never rely on the reader knowing Verilog's precedence table:
// only left-leaning chains of one operator family and products inside sums go
// without them.
std::string operand(const Expr& child, const Node& parent, bool left) {
  const Node& c = child.node();
  bool paren = !is_primary(c);
  if (c.op == Op::Unary && (c.sym == "~" || c.sym == "!")) paren = false;
  if (c.op == Op::Binary && parent.op == Op::Binary && chains(parent.sym, c.sym, left)) paren = false;
  return paren ? "(" + text(child) + ")" : text(child);
}

std::string text(const Expr& e) {
  const Node& n = e.node();
  switch (n.op) {
    case Op::Const:
      return const_text(n);
    case Op::Int:
      return std::to_string(n.ivalue);
    case Op::Ref:
      return n.decl->name;
    case Op::MemWord:
      return n.decl->name + "[" + text(n.args[0]) + "]";
    case Op::BitSel:
      return text(n.args[0]) + "[" + text(n.args[1]) + "]";
    case Op::PartSel:
      return text(n.args[0]) + "[" + std::to_string(n.hi) + ":" + std::to_string(n.lo) + "]";
    case Op::IndexedPart:
      return text(n.args[0]) + "[" + text(n.args[1]) + " +: " + std::to_string(n.width) + "]";
    case Op::Concat: {
      std::string s = "{";
      for (size_t i = 0; i < n.args.size(); ++i) s += (i ? ", " : "") + text(n.args[i]);
      return s + "}";
    }
    case Op::Repl:
      return "{" + std::to_string(n.hi) + "{" + text(n.args[0]) + "}}";
    case Op::Unary:
      return n.sym + operand(n.args[0], n, false);
    case Op::Binary:
      return operand(n.args[0], n, true) + " " + n.sym + " " + operand(n.args[1], n, false);
    case Op::Ternary: {
      const Node& c = n.args[0].node();
      const std::string cond = is_primary(c) || c.op == Op::Unary ? text(n.args[0]) : "(" + text(n.args[0]) + ")";
      auto branch = [](const Expr& b) { return b.node().op == Op::Ternary ? "(" + text(b) + ")" : text(b); };
      return cond + " ? " + branch(n.args[1]) + " : " + branch(n.args[2]);
    }
    case Op::Cast:
      return n.sym + "(" + text(n.args[0]) + ")";
  }
  return "";
}

}  // namespace

std::string Expr::str() const { return text(*this); }

// ---- detail -------------------------------------------------------------------------

namespace detail {

Expr make_ref(const std::shared_ptr<Decl>& d) {
  const bool elab = d->kind == DeclKind::Genvar || d->kind == DeclKind::IntParam;
  auto n = node(Op::Ref, elab ? 32 : d->width, elab ? true : d->is_signed);
  n->elab = elab;
  n->decl = d;
  return wrap(n);
}

bool is_constant(const Expr& e) {
  const Node& n = e.node();
  switch (n.op) {
    case Op::Const:
    case Op::Int:
      return true;
    case Op::Ref:
      return n.decl->kind == DeclKind::Param || n.decl->kind == DeclKind::IntParam;
    case Op::MemWord:
      return false;
    default:
      for (const Expr& a : n.args)
        if (!is_constant(a)) return false;
      return true;
  }
}

bool is_lvalue(const Expr& e) {
  const Node& n = e.node();
  switch (n.op) {
    case Op::Ref:
      return n.decl->kind == DeclKind::Signal || n.decl->kind == DeclKind::Output;
    case Op::MemWord:
      return true;
    case Op::BitSel:
    case Op::PartSel:
    case Op::IndexedPart:
      return is_lvalue(n.args[0]);
    case Op::Concat:
      for (const Expr& a : n.args)
        if (!is_lvalue(a)) return false;
      return true;
    default:
      return false;
  }
}

bool has_known_value(const Expr& e) {
  const Node& n = e.node();
  return n.op == Op::Const || (n.op == Op::Ref && n.decl->kind == DeclKind::Param && !n.decl->overridable &&
                               n.decl->init.valid() && n.decl->init.node().op == Op::Const);
}

uint64_t constant_value(const Expr& e) {
  if (!has_known_value(e))
    fail("'" + short_text(e) + "' is not a plain constant or localparam (a module parameter's value is not known)");
  const Node& n = e.node();
  return n.op == Op::Const ? n.value : n.decl->value;
}

std::string short_text(const Expr& e) {
  if (!e.valid()) return "<empty>";
  std::string s = e.str();
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

}  // namespace detail
}  // namespace kaleido::vlog
