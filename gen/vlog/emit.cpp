// Text emission: lowRISC-flavoured Verilog-2005, 2-space indent, begin/end
// on every branch, one declaration per line, comments and waivers attached
// to the lines they explain. Output depends only on the build calls.
#include <algorithm>
#include <sstream>

#include "common/version.hpp"
#include "vlog/module.hpp"

namespace kaleido::vlog::detail {

namespace {

constexpr size_t kMaxLine = 100;  // lowRISC style: lines of at most 100 characters

size_t indent_of(const std::string& line) {
  const size_t n = line.find_first_not_of(' ');
  return n == std::string::npos ? 0 : n;
}

// Splits `text` at spaces into pieces of at most `width` characters (a single
// word longer than that stays whole).
std::vector<std::string> fill(const std::string& text, size_t width) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string word, cur;
  while (in >> word) {
    if (!cur.empty() && cur.size() + 1 + word.size() > width) {
      out.push_back(cur);
      cur.clear();
    }
    cur += (cur.empty() ? "" : " ") + word;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Breaks every line longer than kMaxLine: comments are refilled at their own
// indent; code is broken between tokens (the emitter separates operators and
// operands with spaces, and Verilog ignores whitespace between tokens), the
// continuation lines indented four more spaces.
std::string wrap_lines(const std::string& text) {
  std::ostringstream out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() <= kMaxLine) {
      out << line << "\n";
      continue;
    }
    const size_t ind = indent_of(line);
    const std::string pad(ind, ' ');
    if (line.compare(ind, 2, "//") == 0) {
      for (const std::string& piece : fill(line.substr(ind + 2), kMaxLine - ind - 3)) out << pad << "// " << piece << "\n";
      continue;
    }
    std::string code = line, note;
    const size_t slashes = line.find(" // ");
    if (slashes != std::string::npos) {
      code = line.substr(0, slashes);
      note = line.substr(slashes + 4);
    }
    if (!note.empty())
      for (const std::string& piece : fill(note, kMaxLine - ind - 3)) out << pad << "// " << piece << "\n";
    const std::vector<std::string> pieces = fill(code.substr(ind), kMaxLine - ind - 4);
    for (size_t k = 0; k < pieces.size(); ++k) out << (k == 0 ? pad : pad + "    ") << pieces[k] << "\n";
  }
  return out.str();
}

std::string range(int width, bool is_signed) {
  std::string s = is_signed ? "signed " : "";
  if (width > 1) s += "[" + std::to_string(width - 1) + ":0] ";
  return s;
}

class Emitter {
 public:
  Emitter(const Module& m, const Analysis& a) : m_(m), a_(a) {}

  std::string run(const FileHeader& h) {
    header(h);
    out_ << "\nmodule " << m_.name();
    std::vector<const Decl*> params, localparams;
    for (const auto& p : m_.param_decls()) (p->overridable ? params : localparams).push_back(p.get());
    if (!params.empty()) {
      out_ << " #(\n";
      for (size_t i = 0; i < params.size(); ++i)
        decl_lines("  ", *params[i], param_text(*params[i]) + (i + 1 < params.size() ? "," : ""));
      out_ << ")";
    }
    out_ << " (\n";
    const auto& ports = m_.port_decls();
    for (size_t i = 0; i < ports.size(); ++i) {
      const Decl& d = *ports[i];
      const std::string kind = d.kind == DeclKind::Input ? "input wire " : (is_reg(d) ? "output reg " : "output wire ");
      decl_lines("  ", d, kind + range(d.width, d.is_signed) + d.name + (i + 1 < ports.size() ? "," : ""));
    }
    out_ << ");\n";
    if (!localparams.empty()) {
      out_ << "\n";
      for (const Decl* p : localparams) decl_lines("  ", *p, param_text(*p) + ";");
    }
    std::vector<std::string> genvars;
    collect_genvars(m_, genvars);
    scope_body("  ", m_, genvars, true);
    out_ << "\nendmodule\n";
    return wrap_lines(out_.str());
  }

 private:
  const Module& m_;
  const Analysis& a_;
  std::ostringstream out_;

  bool is_reg(const Decl& d) const { return a_.regs.count(&d) > 0; }

  // Without the ';' (a module parameter in the header list is followed by ',' or nothing).
  static std::string param_text(const Decl& d) {
    if (d.kind == DeclKind::IntParam) return "localparam integer " + d.name + " = " + std::to_string(d.ivalue);
    return std::string(d.overridable ? "parameter " : "localparam ") + range(d.width, d.is_signed) +
           (d.width == 1 ? "[0:0] " : "") + d.name + " = " + d.init.str();
  }

  void comment(const std::string& ind, const std::string& text) {
    if (text.empty()) return;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
      out_ << ind << "//" << (line.empty() ? "" : " " + line) << "\n";
    }
  }

  void waivers_on(const std::string& ind, const std::vector<Waiver>& ws) {
    for (const Waiver& w : ws) {
      out_ << ind << "// Lint waiver (" << w.code << "): " << w.justification << "\n";
      out_ << ind << "/* verilator lint_off " << w.code << " */\n";
    }
  }

  void waivers_off(const std::string& ind, const std::vector<Waiver>& ws) {
    for (auto it = ws.rbegin(); it != ws.rend(); ++it) out_ << ind << "/* verilator lint_on " << it->code << " */\n";
  }

  void decl_lines(const std::string& ind, const Decl& d, const std::string& text) {
    comment(ind, d.comment);
    waivers_on(ind, d.waivers);
    out_ << ind << text << "\n";
    waivers_off(ind, d.waivers);
  }

  void header(const FileHeader& h) {
    if (h.generator.empty() || h.generator.find('\n') != std::string::npos)
      throw BuildError("module " + m_.name() + ": the file header needs a one-line generator name");
    out_ << "// Generated by kaleido " << version() << " (" << h.generator << "). Generated file, do not edit.\n";
    out_ << "// Module: " << m_.name() << "\n";
    if (!m_.description().empty()) out_ << "// Description: " << m_.description() << "\n";
    if (h.params.empty()) {
      out_ << "// Parameters: none\n";
    } else {
      out_ << "// Parameters:\n";
      for (const auto& kv : h.params) {
        if (kv.first.empty() || (kv.first + kv.second).find('\n') != std::string::npos)
          throw BuildError("module " + m_.name() + ": header parameter '" + kv.first +
                           "' must be a one-line key/value");
        out_ << "//   " << kv.first << " = " << kv.second << "\n";
      }
    }
    const auto ws = m_.waivers();
    out_ << "// Lint waivers:" << (ws.empty() ? " none" : "") << "\n";
    for (const auto& w : ws) out_ << "//   " << w.code << " on " << w.target << ": " << w.justification << "\n";
    const auto us = m_.unused_bits();
    out_ << "// Deliberately unused bits:" << (us.empty() ? " none" : "") << "\n";
    for (const auto& u : us) out_ << "//   " << u.bits << ": " << u.justification << "\n";
  }

  void collect_genvars(const Scope& s, std::vector<std::string>& out) {
    for (const auto& item : s.items())
      if (item->kind() == Item::Kind::Generate) {
        const auto& g = static_cast<const GenerateFor&>(*item);
        if (std::find(out.begin(), out.end(), g.genvar().name) == out.end()) out.push_back(g.genvar().name);
        collect_genvars(g, out);
      }
  }

  // Declarations, then items; groups separated by blank lines.
  void scope_body(const std::string& ind, const Scope& s, const std::vector<std::string>& genvars, bool blank) {
    if (!s.decls().empty()) {
      if (blank) out_ << "\n";
      blank = true;
      for (const auto& p : s.decls()) {
        const Decl& d = *p;
        if (d.kind == DeclKind::Memory)
          decl_lines(ind, d,
                     "reg " + range(d.width, d.is_signed) + d.name + " [0:" + std::to_string(d.depth - 1) + "];");
        else if (d.kind == DeclKind::Param)
          decl_lines(ind, d, param_text(d) + ";");
        else
          decl_lines(ind, d, std::string(is_reg(d) ? "reg " : "wire ") + range(d.width, d.is_signed) + d.name + ";");
      }
    }
    if (!genvars.empty()) {
      if (blank) out_ << "\n";
      blank = true;
      for (const auto& g : genvars) out_ << ind << "genvar " << g << ";\n";
    }
    const Item* prev = nullptr;
    for (const auto& item : s.items()) {
      const bool plain = [](const Item* i) {
        return i && i->kind() == Item::Kind::Assign && i->comment().empty() && i->waivers().empty();
      }(item.get());
      const bool prev_plain =
          prev && prev->kind() == Item::Kind::Assign && prev->comment().empty() && prev->waivers().empty();
      if (blank && !(plain && prev_plain)) out_ << "\n";
      blank = true;
      emit_item(ind, *item, &s == &m_);
      prev = item.get();
    }
  }

  void emit_item(const std::string& ind, const Item& item, bool top) {
    comment(ind, item.comment().empty() || item.kind() == Item::Kind::Unused ? "" : item.comment());
    waivers_on(ind, item.waivers());
    switch (item.kind()) {
      case Item::Kind::Assign: {
        const auto& a = static_cast<const AssignItem&>(item);
        out_ << ind << "assign " << a.lhs().str() << " = " << a.rhs().str() << ";\n";
        break;
      }
      case Item::Kind::Always:
        emit_always(ind, static_cast<const Always&>(item));
        break;
      case Item::Kind::Instance: {
        const auto& inst = static_cast<const InstanceItem&>(item);
        out_ << ind << inst.module() << " ";
        if (!inst.overrides().empty()) {
          out_ << "#(\n";
          for (size_t i = 0; i < inst.overrides().size(); ++i)
            out_ << ind << "  ." << inst.overrides()[i].name << "(" << inst.overrides()[i].value.str() << ")"
                 << (i + 1 < inst.overrides().size() ? "," : "") << "\n";
          out_ << ind << ") ";
        }
        out_ << inst.name() << " (\n";
        for (size_t i = 0; i < inst.ports().size(); ++i)
          out_ << ind << "  ." << inst.ports()[i].name << "(" << inst.connections()[i].str() << ")"
               << (i + 1 < inst.ports().size() ? "," : "") << "\n";
        out_ << ind << ");\n";
        break;
      }
      case Item::Kind::Generate: {
        const auto& g = static_cast<const GenerateFor&>(item);
        std::string in = ind;
        if (top) {
          out_ << ind << "generate\n";
          in += "  ";
        }
        const std::string v = g.genvar().name;
        out_ << in << "for (" << v << " = " << g.begin() << "; " << v << " < " << g.end().str() << "; " << v << " = "
             << v << " + 1) begin : " << g.label() << "\n";
        scope_body(in + "  ", g, {}, false);
        out_ << in << "end\n";
        if (top) out_ << ind << "endgenerate\n";
        break;
      }
      case Item::Kind::Comment:
        break;
      case Item::Kind::Unused: {
        const auto& u = static_cast<const UnusedItem&>(item);
        out_ << ind << "// Deliberately unused: " << u.comment() << "\n";
        out_ << ind << "wire " << u.sink().name << ";\n";
        out_ << ind << "assign " << u.sink().name << " = " << reduce_xor(u.bits()).str() << ";\n";
        break;
      }
    }
    waivers_off(ind, item.waivers());
  }

  void emit_always(const std::string& ind, const Always& a) {
    if (a.comb()) {
      out_ << ind << "always @* begin\n";
      block(ind + "  ", a.body());
    } else if (!a.has_reset()) {
      out_ << ind << "always @(posedge " << a.clock().str() << ") begin\n";
      block(ind + "  ", a.body());
    } else {
      out_ << ind << "always @(posedge " << a.clock().str() << " or negedge " << a.reset().str() << ") begin\n";
      out_ << ind << "  if (!" << a.reset().str() << ") begin\n";
      block(ind + "    ", a.on_reset());
      out_ << ind << "  end else begin\n";
      block(ind + "    ", a.body());
      out_ << ind << "  end\n";
    }
    out_ << ind << "end\n";
  }

  void block(const std::string& ind, const Block& b) {
    const std::string op = b.blocking() ? " = " : " <= ";
    for (const auto& s : b.stmts()) {
      comment(ind, s->comment());
      switch (s->kind()) {
        case Stmt::Kind::Assign: {
          const auto& a = static_cast<const AssignStmt&>(*s);
          out_ << ind << a.lhs().str() << op << a.rhs().str() << ";\n";
          break;
        }
        case Stmt::Kind::If: {
          const auto& i = static_cast<const IfStmt&>(*s);
          for (size_t k = 0; k < i.branches().size(); ++k) {
            out_ << (k == 0 ? ind + "if (" : " else if (") << i.branches()[k].first.str() << ") begin\n";
            block(ind + "  ", *i.branches()[k].second);
            out_ << ind << "end";
          }
          if (i.else_block()) {
            out_ << " else begin\n";
            block(ind + "  ", *i.else_block());
            out_ << ind << "end";
          }
          out_ << "\n";
          break;
        }
        case Stmt::Kind::Case: {
          const auto& c = static_cast<const CaseStmt&>(*s);
          out_ << ind << "case (" << c.selector().str() << ")\n";
          for (const auto& it : c.items()) {
            out_ << ind << "  ";
            for (size_t k = 0; k < it.labels.size(); ++k) out_ << (k ? ", " : "") << it.labels[k].str();
            out_ << ": begin\n";
            block(ind + "    ", *it.body);
            out_ << ind << "  end\n";
          }
          out_ << ind << "  default: begin\n";
          block(ind + "    ", *c.default_block());
          out_ << ind << "  end\n";
          out_ << ind << "endcase\n";
          break;
        }
        case Stmt::Kind::Comment:
          break;
      }
    }
  }
};

}  // namespace

std::string emit_module(const Module& m, const FileHeader& header, const Analysis& a) {
  return Emitter(m, a).run(header);
}

}  // namespace kaleido::vlog::detail
