// Typed Verilog expressions. Every expression knows its width and signedness,
// and every operator insists on explicit widths (equal operand widths, 1-bit
// conditions), so the self-determined width of each emitted Verilog operator
// equals the width recorded here. That invariant is what keeps the generated
// RTL free of Verilator WIDTH warnings without waivers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "golden/intmath.hpp"

namespace kaleido::vlog {

// A generator used the builder wrongly (width mismatch, unknown port, bad
// name...). The message names the module, the items involved and the rule.
class BuildError : public Error {
 public:
  explicit BuildError(const std::string& what) : Error(what) {}
};

enum class Sign { Unsigned, Signed };
enum class Radix { Dec, Hex, Bin };

// A per-item Verilator lint waiver: emitted as lint_off/lint_on around the
// item, with the justification as a comment, and listed in the file header.
struct Waiver {
  std::string code;           // Verilator warning code, e.g. "UNUSED"
  std::string justification;  // mandatory: why the warning is expected
};

namespace detail {
struct Decl;
struct Node;
}  // namespace detail

class Expr {
 public:
  Expr() = default;  // "no expression"; using it anywhere throws

  bool valid() const { return node_ != nullptr; }
  int width() const;
  bool is_signed() const;
  // Elaboration-time integer (genvar, integer localparam, C++ int): usable only
  // in indices, part-select bases and loop bounds, never as a hardware value.
  bool is_elab() const;
  std::string str() const;  // Verilog text

  Expr operator[](int bit) const;                // x[3]
  Expr operator[](const Expr& index) const;      // x[idx]: idx is clog2(width) bits, or a genvar expression
  Expr slice(int hi, int lo) const;              // x[hi:lo]
  Expr part(const Expr& base, int width) const;  // x[base +: width]; base as for operator[]
  Expr msb() const { return (*this)[width() - 1]; }

  const detail::Node& node() const;
  explicit Expr(std::shared_ptr<const detail::Node> n) : node_(std::move(n)) {}

 private:
  std::shared_ptr<const detail::Node> node_;
};

// A memory `reg [W-1:0] name [0:D-1]`. mem[addr] is a word (readable, and
// writable inside a clocked block without reset); addr is clog2(D) bits.
class Memory {
 public:
  Memory() = default;
  explicit Memory(std::shared_ptr<detail::Decl> d) : decl_(std::move(d)) {}
  Expr operator[](const Expr& addr) const;
  int width() const;
  int depth() const;
  int addr_width() const;
  const std::string& name() const;
  const std::shared_ptr<detail::Decl>& decl() const { return decl_; }

 private:
  std::shared_ptr<detail::Decl> decl_;
};

// ---- constants -------------------------------------------------------------
Expr constant(int width, uint64_t value, Radix radix = Radix::Dec);  // unsigned W'dV
Expr sconstant(int width, int64_t value);                            // signed W'sdV / -W'sdV
Expr zero(int width);
Expr ones(int width);         // all bits set
Expr bit(bool value);         // 1'b0 / 1'b1
Expr integer(int64_t value);  // elaboration-time integer literal (for index arithmetic)

// ---- width and sign helpers -------------------------------------------------
// The source of sext/trunc (and of an index) must be selectable: a signal, a
// memory word or a select of one (Verilog-2005 cannot select bits of an
// arbitrary expression). Name a computed value with Scope::wire() first.
Expr zext(const Expr& x, int width);    // {N'd0, x}; unsigned
Expr sext(const Expr& x, int width);    // {{N{x[msb]}}, x}; keeps x's signedness
Expr trunc(const Expr& x, int width);   // x[width-1:0]; keeps x's signedness
Expr resize(const Expr& x, int width);  // sext if signed else zext, or trunc
Expr as_signed(const Expr& x);          // $signed(x)
Expr as_unsigned(const Expr& x);        // $unsigned(x)

// ---- structure ---------------------------------------------------------------
Expr concat(const std::vector<Expr>& parts);                            // {a, b, c}: MSB first
Expr repl(int count, const Expr& x);                                    // {count{x}}
Expr mux(const Expr& cond, const Expr& if_true, const Expr& if_false);  // cond ? a : b
// options[index] as a balanced tree of muxes on index's bits, least significant at the leaves:
// clog2(options) levels whatever the count, where a chain of `index == k` compares is as deep as
// the count. An index past the last option (any, with none) gives `otherwise`; subtrees of
// `otherwise` alone fold.
Expr select(const Expr& index, const std::vector<Expr>& options, const Expr& otherwise);

// ---- operators ----------------------------------------------------------------
// Binary arithmetic/bitwise operators need equal widths and signedness; the
// result has that width (wrapping). An int operand takes the other side's
// width and signedness and must fit in it.
Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator*(const Expr& a, const Expr& b);
Expr operator&(const Expr& a, const Expr& b);
Expr operator|(const Expr& a, const Expr& b);
Expr operator^(const Expr& a, const Expr& b);
Expr operator+(const Expr& a, int64_t b);
Expr operator-(const Expr& a, int64_t b);
Expr operator*(const Expr& a, int64_t b);
Expr operator&(const Expr& a, int64_t b);
Expr operator|(const Expr& a, int64_t b);
Expr operator^(const Expr& a, int64_t b);
Expr operator+(int64_t a, const Expr& b);
Expr operator*(int64_t a, const Expr& b);
// Elaboration-time only (genvar arithmetic): integer division and remainder.
Expr operator/(const Expr& a, int64_t b);
Expr operator%(const Expr& a, int64_t b);

// Full-width product: a and b (equal signedness) are extended to
// a.width()+b.width() so no bit of the product is lost.
Expr mul_full(const Expr& a, const Expr& b);

// Shifts keep the left operand's width and sign; the amount is an unsigned
// expression of any width or a constant smaller than the width.
Expr operator<<(const Expr& a, const Expr& amount);
Expr operator>>(const Expr& a, const Expr& amount);
Expr operator<<(const Expr& a, int amount);
Expr operator>>(const Expr& a, int amount);
Expr sra(const Expr& a, const Expr& amount);  // >>> on a signed operand
Expr sra(const Expr& a, int amount);

// Comparisons: equal widths and signedness; 1-bit unsigned result.
Expr operator==(const Expr& a, const Expr& b);
Expr operator!=(const Expr& a, const Expr& b);
Expr operator<(const Expr& a, const Expr& b);
Expr operator<=(const Expr& a, const Expr& b);
Expr operator>(const Expr& a, const Expr& b);
Expr operator>=(const Expr& a, const Expr& b);
Expr operator==(const Expr& a, int64_t b);
Expr operator!=(const Expr& a, int64_t b);
Expr operator<(const Expr& a, int64_t b);
Expr operator<=(const Expr& a, int64_t b);
Expr operator>(const Expr& a, int64_t b);
Expr operator>=(const Expr& a, int64_t b);

// Logical operators take and give 1-bit values.
Expr operator&&(const Expr& a, const Expr& b);
Expr operator||(const Expr& a, const Expr& b);
Expr operator!(const Expr& a);

Expr operator~(const Expr& a);
Expr operator-(const Expr& a);   // two's complement negation, same width
Expr reduce_and(const Expr& a);  // &x
Expr reduce_or(const Expr& a);   // |x
Expr reduce_xor(const Expr& a);  // ^x

// Bits needed to index `n` items (at least 1): the width of an address or
// bit index that Verilator accepts without a WIDTH warning.
using kaleido::clog2;

namespace detail {

enum class DeclKind { Input, Output, Signal, Memory, Param, IntParam, Genvar, Sink };

// One declared name of a module: port, signal, memory, localparam or genvar.
struct Decl {
  DeclKind kind = DeclKind::Signal;
  std::string name;
  int width = 1;
  bool is_signed = false;
  int depth = 0;       // memories
  uint64_t value = 0;  // sized localparams
  int64_t ivalue = 0;  // integer localparams
  Radix radix = Radix::Dec;
  Expr init;  // sized localparams: the constant value (a module parameter's default)
  bool overridable = false;  // a module parameter: an instance may override the value
  std::string comment;
  uint64_t module_serial = 0;
  int scope_id = 0;
  std::vector<Waiver> waivers;
};

enum class Op { Const, Ref, MemWord, BitSel, PartSel, IndexedPart, Concat, Repl, Unary, Binary, Ternary, Cast, Int };

struct Node {
  Op op = Op::Const;
  int width = 1;
  bool is_signed = false;
  bool elab = false;
  std::string sym;     // operator symbol, "$signed"/"$unsigned" for casts
  uint64_t value = 0;  // Const
  int64_t ivalue = 0;  // Int
  Radix radix = Radix::Dec;
  int hi = 0, lo = 0;          // PartSel bounds; Repl count in hi
  std::shared_ptr<Decl> decl;  // Ref, MemWord
  std::vector<Expr> args;
};

Expr make_ref(const std::shared_ptr<Decl>& d);
bool is_constant(const Expr& e);  // built only from constants and sized localparams
bool is_lvalue(const Expr& e);
// A plain constant, or a localparam with one: its value is known at generation time (a
// module parameter's is not: an instance may override it).
bool has_known_value(const Expr& e);
uint64_t constant_value(const Expr& e);  // the value when has_known_value (<= 64 bits)
std::string short_text(const Expr& e);   // Verilog text, shortened for error messages

}  // namespace detail
}  // namespace kaleido::vlog
