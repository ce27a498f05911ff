#include "ppa/cell_models.hpp"

#include <cctype>
#include <functional>
#include <set>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/version.hpp"

namespace kaleido::ppa {

namespace {

bool simple_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// Verilog name for a Liberty pin or cell name (escaped when needed).
std::string vname(const std::string& s) { return simple_identifier(s) ? s : "\\" + s + " "; }

std::string why_unmodelled(const LibCell& c, const CellModelOptions& opt) {
  if (c.has_statetable) return "behaviour given as a statetable";
  if (c.sequentials.size() > 1) return "more than one ff/latch group";
  if (!opt.latches && !c.sequentials.empty() && c.sequentials.front().latch)
    return "latch (the register cut handles edge-triggered flip-flops only)";
  for (const LibPin& p : c.pins) {
    if (p.direction != PinDirection::Output && p.direction != PinDirection::Inout) continue;
    if (p.direction == PinDirection::Inout) return "inout pin " + p.name;
    if (!p.three_state.empty()) return "tri-state output " + p.name;
    if (p.function.empty()) return "output " + p.name + " has no function";
  }
  if (!c.sequentials.empty()) {
    const SequentialGroup& s = c.sequentials.front();
    if (!s.clear.empty() && !s.preset.empty() && !s.clear_preset_var1.empty() && s.clear_preset_var1 != "L" &&
        s.clear_preset_var1 != "H")
      return "clear and preset together give `" + s.clear_preset_var1 + "`";
  }
  return "";
}

void write_ports(std::ostringstream& o, const LibCell& c, bool blackbox) {
  if (blackbox) o << "(* blackbox *)\n";
  o << "module " << vname(c.name) << " (";
  bool first = true;
  for (const LibPin& p : c.pins) {
    if (p.direction == PinDirection::Internal) continue;
    o << (first ? "" : ", ") << vname(p.name);
    first = false;
  }
  o << ");\n";
  for (const LibPin& p : c.pins) {
    if (p.direction == PinDirection::Input) o << "  input " << vname(p.name) << ";\n";
    if (p.direction == PinDirection::Output) o << "  output " << vname(p.name) << ";\n";
    if (p.direction == PinDirection::Inout) o << "  inout " << vname(p.name) << ";\n";
  }
}

// The cell's behaviour: a reg and its always block for a flip-flop or latch,
// an assign per output. `pin` names what drives or receives a pin (the pin
// itself in a module, a net in an inlined instance; empty for an unconnected
// output, which is then not written); `sfx` keeps internal names unique.
void write_behaviour(std::ostringstream& o, const LibCell& c, const std::function<std::string(const LibPin&)>& pin,
                     const std::string& sfx) {
  std::string q, qn;
  if (!c.sequentials.empty()) {
    q = c.sequentials.front().q_var;
    qn = c.sequentials.front().qn_var;
  }
  const std::string iq = "kld_iq" + sfx, clk = "kld_clk" + sfx, d = "kld_d" + sfx, clr = "kld_clr" + sfx,
                    pre = "kld_pre" + sfx;
  auto rename = [&](const std::string& v) -> std::string {
    if (!q.empty() && v == q) return iq;
    if (!qn.empty() && v == qn) return "(~" + iq + ")";
    if (const LibPin* p = c.pin(v)) return pin(*p);
    throw Error("cell " + c.name + ": function uses `" + v + "`, which is no pin of the cell");
  };
  auto expr = [&](const std::string& f) { return BoolFunction::parse(f).to_verilog(rename); };
  if (!c.sequentials.empty()) {
    const SequentialGroup& s = c.sequentials.front();
    o << "  reg " << iq << ";\n";
    o << "  wire " << clk << " = " << expr(s.clocked_on) << ";\n";
    o << "  wire " << d << " = " << expr(s.next_state) << ";\n";
    // Yosys's proc recognises an asynchronous control only as a plain `if` on
    // a signal of the sensitivity list; the first `if` wins when both are
    // active, which is what clear_preset_var1 (L or H) says.
    std::vector<std::pair<std::string, std::string>> controls;  // (wire, value)
    if (!s.clear.empty()) controls.emplace_back(clr, "1'b0");
    if (!s.preset.empty()) controls.emplace_back(pre, "1'b1");
    if (controls.size() == 2 && s.clear_preset_var1 == "H") std::swap(controls[0], controls[1]);
    if (!s.clear.empty()) o << "  wire " << clr << " = " << expr(s.clear) << ";\n";
    if (!s.preset.empty()) o << "  wire " << pre << " = " << expr(s.preset) << ";\n";
    if (s.latch) {
      o << "  /* verilator lint_off LATCH */\n  always @*\n";
      std::string els;
      for (const auto& ctl : controls) {
        o << "    " << els << "if (" << ctl.first << ") " << iq << " = " << ctl.second << ";\n";
        els = "else ";
      }
      o << "    " << els << "if (" << clk << ") " << iq << " = " << d << ";\n";
      o << "  /* verilator lint_on LATCH */\n";
    } else {
      o << "  always @(posedge " << clk;
      for (const auto& ctl : controls) o << " or posedge " << ctl.first;
      o << ")\n";
      std::string els;
      for (const auto& ctl : controls) {
        o << "    " << els << "if (" << ctl.first << ") " << iq << " <= " << ctl.second << ";\n";
        els = "else ";
      }
      o << "    " << els << iq << " <= " << d << ";\n";
    }
  }
  for (const LibPin& p : c.pins) {
    if (p.direction != PinDirection::Output) continue;
    const std::string target = pin(p);
    if (!target.empty()) o << "  assign " << target << " = " << expr(p.function) << ";\n";
  }
}

void write_cell(std::ostringstream& o, const LibCell& c) {
  write_ports(o, c, false);
  write_behaviour(o, c, [](const LibPin& p) { return vname(p.name); }, "");
  o << "endmodule\n\n";
}

}  // namespace

CellModels cell_models(const Library& lib, const CellModelOptions& opt) {
  const std::set<std::string> wanted(opt.cells.begin(), opt.cells.end());
  for (const std::string& w : wanted)
    if (!lib.cell(w)) throw Error("cell " + w + " is not in library " + lib.name);
  CellModels m;
  std::ostringstream o;
  o << "// Verilog models of the cells of Liberty library " << lib.name << ", written by kaleido " << version()
    << "\n// from the cells' function, ff and latch attributes (gen/ppa/cell_models.cpp). For simulation\n"
    << "// and equivalence checking of mapped netlists; no timing.\n";
  o << "/* verilator lint_off UNUSED */\n/* verilator lint_off UNDRIVEN */\n/* verilator lint_off DECLFILENAME */\n"
    << "/* verilator lint_off MULTITOP */\n\n";
  for (const LibCell& c : lib.cells) {
    if (!wanted.empty() && !wanted.count(c.name)) continue;
    std::string why = why_unmodelled(c, opt);
    if (why.empty()) {
      try {
        std::ostringstream one;
        write_cell(one, c);
        o << one.str();
        continue;
      } catch (const Error& e) {
        why = e.what();
      }
    }
    m.unmodelled[c.name] = why;
    write_ports(o, c, true);
    o << "  // Not modelled: " << why << ".\nendmodule\n\n";
  }
  o << "/* verilator lint_on MULTITOP */\n/* verilator lint_on DECLFILENAME */\n/* verilator lint_on UNDRIVEN */\n"
    << "/* verilator lint_on UNUSED */\n";
  m.verilog = o.str();
  return m;
}

std::string cell_models_verilog(const Library& lib, const std::vector<std::string>& cells) {
  CellModelOptions opt;
  opt.cells = cells;
  return cell_models(lib, opt).verilog;
}

void write_cell_models(const Library& lib, const std::filesystem::path& path, const std::vector<std::string>& cells) {
  write_file_atomic(path, cell_models_verilog(lib, cells));
}

std::string cell_inline_verilog(const LibCell& c, const std::vector<std::string>& pin_exprs, const std::string& id) {
  if (pin_exprs.size() != c.pins.size())
    throw InternalError("cell " + c.name + ": " + std::to_string(pin_exprs.size()) + " pin connections for " +
                        std::to_string(c.pins.size()) + " pins");
  const std::string why = why_unmodelled(c, CellModelOptions{});
  if (!why.empty()) throw Error("cannot model cell " + c.name + ": " + why);
  std::ostringstream o;
  write_behaviour(o, c, [&](const LibPin& p) { return pin_exprs[static_cast<size_t>(&p - c.pins.data())]; }, "_" + id);
  return o.str();
}

}  // namespace kaleido::ppa
