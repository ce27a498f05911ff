#include "hw/register_block.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "common/text.hpp"

namespace kaleido::hw {

using namespace vlog;

namespace {

// Bits [msb:lsb] of a bus word: a single bit is selected as x[n].
Expr word_bits(const Expr& word, int msb, int lsb) { return msb == lsb ? word[lsb] : word.slice(msb, lsb); }

// The flop or wire of a field: <register>[_<g>][_<field>], lower case.
std::string regblock_signal_name(const Register& r, const RegField& f, int g) {
  std::string n = to_lower(r.name);
  if (r.count > 1) n += "_" + std::to_string(g);
  if (f.name != "VALUE") n += "_" + to_lower(f.name);
  return n;
}

}  // namespace

std::string RegisterBlock::key(const std::string& reg, const std::string& field, int g) {
  return reg + "[" + std::to_string(g) + "]." + field;
}

const Register& RegisterBlock::reg(const std::string& name) const {
  for (const Register& r : map_)
    if (r.name == name) return r;
  throw InternalError("the register map has no register " + name);
}

RegisterBlock::RegisterBlock(Module& m, const HwConfig& c, Top top, const Bus& bus, const Expr& write)
    : m_(m), top_(top), bus_(bus), addr_w_(reg_addr_width(c)), map_(register_map(c)) {
  const int word = reg::kWordWidth;
  if (bus.wdata.width() != word || bus.rdata.width() != word || bus.addr.width() != addr_w_)
    throw InternalError("register bus of " + m.name() + " does not match the register map");
  Always& ff = m.always_ff(bus.clk, bus.rst_n, "configuration registers (register map), written while idle");
  std::vector<bool> written_bits(static_cast<size_t>(word), false);
  for (const Register& r : map_)
    for (int g = 0; g < r.count; ++g) {
      const Expr at = bus.addr == constant(addr_w_, r.addr + static_cast<uint32_t>(g));
      for (const RegField& f : r.fields) {
        if (!implemented(f) || f.access == Access::RO) continue;
        for (int b = f.lsb; b <= f.msb(); ++b) written_bits[static_cast<size_t>(b)] = true;
        const Expr bits = word_bits(bus.wdata, f.msb(), f.lsb);
        const std::string name = regblock_signal_name(r, f, g);
        if (f.access == Access::W1) {
          values_[key(r.name, f.name, g)] = m.wire(name, write && at && bits, r.name + "." + f.name + " written 1");
          continue;
        }
        const Expr q = m.signal(name + "_q", f.width, Sign::Unsigned, r.name + "." + f.name + ": " + f.doc);
        const Expr d = mux(write && at, bits, q);
        ff.flop(q, d, static_cast<int64_t>(f.reset));
        values_[key(r.name, f.name, g)] = q;
        next_[key(r.name, f.name, g)] = d;
        names_[key(r.name, f.name, g)] = name;
      }
    }
  // Write-data bits no implemented field takes, as runs from the top bit down.
  std::vector<Expr> spare;
  for (int b = word - 1; b >= 0;) {
    if (written_bits[static_cast<size_t>(b)]) {
      --b;
      continue;
    }
    int lo = b;
    while (lo > 0 && !written_bits[static_cast<size_t>(lo - 1)]) --lo;
    spare.push_back(word_bits(bus.wdata, b, lo));
    b = lo - 1;
  }
  if (!spare.empty())
    m.unused(spare.size() == 1 ? spare[0] : concat(spare), "no field of the register map takes these bits");
}

const Expr& RegisterBlock::q(const std::string& reg_name, const std::string& field, int g) const {
  const RegField& f = reg(reg_name).field(field);
  auto it = values_.find(key(reg_name, field, g));
  if (f.access != Access::RW || !implemented(f) || it == values_.end())
    throw InternalError(m_.name() + " has no RW register field " + key(reg_name, field, g));
  return it->second;
}

const Expr& RegisterBlock::next(const std::string& reg_name, const std::string& field, int g) {
  q(reg_name, field, g);  // the same checks
  const std::string k = key(reg_name, field, g);
  auto named = next_wires_.find(k);
  if (named == next_wires_.end()) named = next_wires_.emplace(k, m_.wire(names_.at(k) + "_next", next_.at(k))).first;
  return named->second;
}

const Expr& RegisterBlock::pulse(const std::string& reg_name, const std::string& field) const {
  const RegField& f = reg(reg_name).field(field);
  auto it = values_.find(key(reg_name, field, 0));
  if (f.access != Access::W1 || !implemented(f) || it == values_.end())
    throw InternalError(m_.name() + " has no W1 register field " + reg_name + "." + field);
  return it->second;
}

Expr RegisterBlock::written(const std::string& reg_name, const std::string& field) const {
  const RegField& f = reg(reg_name).field(field);
  if (!implemented(f) || f.access == Access::RO)
    throw InternalError(m_.name() + " does not write register field " + reg_name + "." + field);
  return word_bits(bus_.wdata, f.msb(), f.lsb);
}

void RegisterBlock::read(const std::string& reg_name, const std::string& field, const Expr& value, int g) {
  const Register& r = reg(reg_name);
  const RegField& f = r.field(field);
  if (f.access != Access::RO || f.constant || !implemented(f) || g < 0 || g >= r.count)
    throw InternalError(m_.name() + ": " + key(reg_name, field, g) + " is not an RO field it implements");
  if (value.width() > f.width)
    throw InternalError(key(reg_name, field, g) + " is " + std::to_string(f.width) + " bits, its value " +
                        std::to_string(value.width()));
  if (!values_.emplace(key(reg_name, field, g), value.width() < f.width ? zext(value, f.width) : value).second)
    throw InternalError(key(reg_name, field, g) + " read twice");
}

void RegisterBlock::read_wide(const std::string& base, const Expr& value) {
  const int word = reg::kWordWidth;
  if (value.width() > 2 * word) throw InternalError(base + ": a wide counter has two words");
  // A counter narrower than two words reads zeros above its width.
  read(base + "_LO", value.width() > word ? value.slice(word - 1, 0) : value);
  read(base + "_HI", value.width() > word ? value.slice(value.width() - 1, word) : zero(1));
}

void RegisterBlock::finish() {
  const int word = reg::kWordWidth;
  const Expr rdata = m_.signal("rdata", word, Sign::Unsigned, "the register at reg_addr_i");
  Block& rd = m_.always_comb("register read mux (register map)");
  CaseStmt& rc = rd.case_(bus_.addr);
  for (const Register& r : map_)
    for (int g = 0; g < r.count; ++g) {
      std::vector<RegField> fields = r.fields;
      std::sort(fields.begin(), fields.end(), [](const RegField& a, const RegField& b) { return a.lsb > b.lsb; });
      std::vector<Expr> parts;  // most significant first
      std::vector<bool> zeros;  // parts[k] reads 0
      int next = word;          // the bit above the next field
      for (const RegField& f : fields) {
        if (f.msb() + 1 < next) {
          parts.push_back(zero(next - f.msb() - 1));
          zeros.push_back(true);
        }
        next = f.lsb;
        const bool reads = implemented(f) && f.access != Access::W1;
        Expr v = zero(f.width);
        if (reads && f.constant) {
          v = constant(f.width, f.reset);
        } else if (reads) {
          auto it = values_.find(key(r.name, f.name, g));
          if (it == values_.end())
            throw InternalError(m_.name() + " gave no value for the RO field " + key(r.name, f.name, g));
          v = it->second;
        }
        parts.push_back(v);
        zeros.push_back(!reads);
      }
      if (next > 0) {
        parts.push_back(zero(next));
        zeros.push_back(true);
      }
      if (std::find(zeros.begin(), zeros.end(), false) == zeros.end()) continue;  // reads 0, as the default does
      // The leading zero runs become one zero-extension.
      size_t first = 0;
      while (zeros[first]) ++first;
      const std::vector<Expr> low(parts.begin() + static_cast<std::ptrdiff_t>(first), parts.end());
      const Expr value = low.size() == 1 ? low[0] : concat(low);
      rc.item(constant(addr_w_, r.addr + static_cast<uint32_t>(g)))
          .assign(rdata, value.width() < word ? zext(value, word) : value);
    }
  rc.default_().assign(rdata, 0);
  m_.assign(bus_.rdata, mux(bus_.valid, rdata, zero(word)));
}

}  // namespace kaleido::hw
