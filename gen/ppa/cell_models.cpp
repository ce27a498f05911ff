#include "ppa/cell_models.hpp"

#include <cctype>
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

void write_cell(std::ostringstream& o, const LibCell& c) {
  std::vector<const LibPin*> ins, outs;
  for (const LibPin& p : c.pins) {
    if (p.direction == PinDirection::Input) ins.push_back(&p);
    else if (p.direction == PinDirection::Output || p.direction == PinDirection::Inout) outs.push_back(&p);
  }
  o << "module " << vname(c.name) << " (";
  bool first = true;
  for (const LibPin& p : c.pins) {
    if (p.direction == PinDirection::Internal) continue;
    o << (first ? "" : ", ") << vname(p.name);
    first = false;
  }
  o << ");\n";
  for (const LibPin* p : ins) o << "  input " << vname(p->name) << ";\n";
  for (const LibPin* p : outs) o << "  output " << vname(p->name) << ";\n";

  std::string why;
  if (c.has_statetable) why = "behaviour given as a statetable";
  if (c.sequentials.size() > 1) why = "more than one ff/latch group";
  for (const LibPin* p : outs)
    if (p->function.empty()) why = "output " + p->name + " has no function";
  if (!why.empty()) {
    o << "  // Not modelled: " << why << ".\n";
    for (const LibPin* p : outs) o << "  assign " << vname(p->name) << " = 1'bx;\n";
    o << "endmodule\n\n";
    return;
  }

  std::string q, qn;
  if (!c.sequentials.empty()) {
    q = c.sequentials.front().q_var;
    qn = c.sequentials.front().qn_var;
  }
  auto rename = [&](const std::string& v) -> std::string {
    if (!q.empty() && v == q) return "kld_iq";
    if (!qn.empty() && v == qn) return "(~kld_iq)";
    for (const LibPin& p : c.pins)
      if (p.name == v) return vname(v);
    throw Error("cell " + c.name + ": function uses `" + v + "`, which is no pin of the cell");
  };
  auto expr = [&](const std::string& f) { return BoolFunction::parse(f).to_verilog(rename); };

  if (!c.sequentials.empty()) {
    const SequentialGroup& s = c.sequentials.front();
    o << "  reg kld_iq;\n";
    o << "  wire kld_clk = " << expr(s.clocked_on) << ";\n";
    o << "  wire kld_clr = " << (s.clear.empty() ? "1'b0" : expr(s.clear)) << ";\n";
    o << "  wire kld_pre = " << (s.preset.empty() ? "1'b0" : expr(s.preset)) << ";\n";
    // Both clear and preset: clear_preset_var1 says what the state becomes.
    const std::string both = s.clear_preset_var1 == "H" ? "1'b1" : "1'b0";
    if (s.latch) {
      o << "  /* verilator lint_off LATCH */\n";
      o << "  always @* begin\n";
      o << "    if (kld_clr && kld_pre) kld_iq = " << both << ";\n";
      o << "    else if (kld_clr) kld_iq = 1'b0;\n";
      o << "    else if (kld_pre) kld_iq = 1'b1;\n";
      o << "    else if (kld_clk) kld_iq = " << expr(s.next_state) << ";\n";
      o << "  end\n";
      o << "  /* verilator lint_on LATCH */\n";
    } else {
      o << "  always @(posedge kld_clk or posedge kld_clr or posedge kld_pre) begin\n";
      o << "    if (kld_clr && kld_pre) kld_iq <= " << both << ";\n";
      o << "    else if (kld_clr) kld_iq <= 1'b0;\n";
      o << "    else if (kld_pre) kld_iq <= 1'b1;\n";
      o << "    else kld_iq <= " << expr(s.next_state) << ";\n";
      o << "  end\n";
    }
  }
  for (const LibPin* p : outs) o << "  assign " << vname(p->name) << " = " << expr(p->function) << ";\n";
  o << "endmodule\n\n";
}

}  // namespace

std::string cell_models_verilog(const Library& lib, const std::vector<std::string>& cells) {
  std::set<std::string> wanted(cells.begin(), cells.end());
  std::ostringstream o;
  o << "// Verilog models of the cells of Liberty library " << lib.name << ", written by kaleido " << version()
    << "\n// from the cells' function, ff and latch attributes (gen/ppa/cell_models.cpp). For simulation\n"
    << "// and equivalence checking of mapped netlists; no timing.\n";
  o << "/* verilator lint_off UNUSED */\n/* verilator lint_off DECLFILENAME */\n/* verilator lint_off MULTITOP */\n\n";
  for (const LibCell& c : lib.cells) {
    if (!wanted.empty() && !wanted.count(c.name)) continue;
    write_cell(o, c);
  }
  o << "/* verilator lint_on MULTITOP */\n/* verilator lint_on DECLFILENAME */\n/* verilator lint_on UNUSED */\n";
  for (const std::string& w : wanted)
    if (!lib.cell(w)) throw Error("cell " + w + " is not in library " + lib.name);
  return o.str();
}

void write_cell_models(const Library& lib, const std::filesystem::path& path, const std::vector<std::string>& cells) {
  write_file_atomic(path, cell_models_verilog(lib, cells));
}

}  // namespace kaleido::ppa
