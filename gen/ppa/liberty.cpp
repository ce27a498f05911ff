#include "ppa/liberty.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <zlib.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/text.hpp"

namespace kaleido::ppa {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- tree helpers

const LibAttribute* LibGroup::attribute(const std::string& n) const {
  for (const LibAttribute& a : attributes)
    if (a.name == n) return &a;
  return nullptr;
}

std::string LibGroup::value(const std::string& n, const std::string& fallback) const {
  const LibAttribute* a = attribute(n);
  if (!a || a->values.empty()) return fallback;
  return a->values.front().text;
}

void LibGroup::add_attribute(LibAttribute a) {
  attributes.push_back(std::move(a));
  order.emplace_back(false, attributes.size() - 1);
}

void LibGroup::add_group(LibGroup g) {
  groups.push_back(std::move(g));
  order.emplace_back(true, groups.size() - 1);
}

bool glob_match(const std::string& pattern, const std::string& text) {
  // Iterative '*' / '?' matcher with backtracking to the last star.
  size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// ---------------------------------------------------------------- reading

std::string read_text_maybe_gz(const fs::path& path) {
  if (!fs::exists(path)) throw FileError(path.string(), "does not exist");
  // gzread passes plain files through unchanged, so one path reads both.
  gzFile f = gzopen(path.string().c_str(), "rb");
  if (!f) throw FileError(path.string(), std::string("cannot be opened: ") + std::strerror(errno));
  std::string out;
  std::vector<char> buf(1 << 16);
  for (;;) {
    const int n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      int errnum = 0;
      const std::string msg = gzerror(f, &errnum);
      gzclose(f);
      throw FileError(path.string(), "cannot be read (corrupt gzip?): " + msg);
    }
    if (n == 0) break;
    out.append(buf.data(), static_cast<size_t>(n));
  }
  gzclose(f);
  return out;
}

namespace {

class LibertyParser {
 public:
  LibertyParser(const std::string& text, const std::string& source) : s_(text), source_(source) {}

  LibFile parse() {
    LibFile file;
    file.path = source_;
    skip_space(&file.header_comment);
    if (at_end()) fail("no `library (...) { ... }` group (empty file?)");
    const std::string word = read_word();
    if (word != "library") fail("expected `library`, found `" + word + "`");
    file.library = parse_group_rest(word, line_);
    skip_space(nullptr);
    if (!at_end()) fail("unexpected text after the end of the library group");
    return file;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw FileError(source_, "line " + std::to_string(line_) + ": " + why);
  }
  bool at_end() const { return pos_ >= s_.size(); }

  // Skips whitespace, backslash line continuations and comments; appends
  // comments verbatim to `comments` when given.
  void skip_space(std::string* comments) {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (c == '\\') {
        size_t p = pos_ + 1;
        while (p < s_.size() && (s_[p] == ' ' || s_[p] == '\t' || s_[p] == '\r')) ++p;
        if (p < s_.size() && s_[p] == '\n') {
          pos_ = p;  // the newline is counted on the next iteration
        } else {
          return;
        }
      } else if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '*') {
        const int start_line = line_;
        const size_t end = s_.find("*/", pos_ + 2);
        if (end == std::string::npos)
          throw FileError(source_, "line " + std::to_string(start_line) +
                                       ": comment is not closed before the end of the file (truncated file?)");
        for (size_t i = pos_; i < end; ++i)
          if (s_[i] == '\n') ++line_;
        if (comments) comments->append(s_, pos_, end + 2 - pos_).append("\n");
        pos_ = end + 2;
      } else if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  static bool is_delim(char c) {
    return std::isspace(static_cast<unsigned char>(c)) || c == '{' || c == '}' || c == '(' || c == ')' || c == ':' ||
           c == ';' || c == ',' || c == '"';
  }

  std::string read_word() {
    const size_t start = pos_;
    while (pos_ < s_.size() && !is_delim(s_[pos_])) {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size() && (s_[pos_ + 1] == '\n' || s_[pos_ + 1] == '\r')) break;
      ++pos_;
    }
    return s_.substr(start, pos_ - start);
  }

  // A double-quoted string; backslash-newline inside it is a continuation.
  std::string read_string() {
    const int start_line = line_;
    ++pos_;  // opening quote
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      const char c = s_[pos_];
      if (c == '\\' && pos_ + 1 < s_.size()) {
        size_t p = pos_ + 1;
        while (p < s_.size() && (s_[p] == ' ' || s_[p] == '\t' || s_[p] == '\r')) ++p;
        if (p < s_.size() && s_[p] == '\n') {
          ++line_;
          pos_ = p + 1;
          continue;
        }
        out += c;
        out += s_[pos_ + 1];
        pos_ += 2;
        continue;
      }
      if (c == '\n') ++line_;
      out += c;
      ++pos_;
    }
    if (pos_ >= s_.size())
      throw FileError(source_, "line " + std::to_string(start_line) +
                                   ": string is not closed before the end of the file (truncated file?)");
    ++pos_;  // closing quote
    return out;
  }

  LibValue read_value() {
    if (s_[pos_] == '"') return {read_string(), true};
    std::string w = read_word();
    if (w.empty()) fail(std::string("unexpected '") + s_[pos_] + "'");
    return {w, false};
  }

  // `name : value ;` -- the value runs to ';' or the end of the line, so
  // unquoted expressions with spaces or parentheses survive.
  LibAttribute parse_simple(const std::string& name, int line) {
    LibAttribute a;
    a.name = name;
    a.line = line;
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '"') {
      a.values.push_back({read_string(), true});
      while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
      if (pos_ < s_.size() && s_[pos_] == ';') ++pos_;
      return a;
    }
    const size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != ';' && s_[pos_] != '\n' && s_[pos_] != '}') ++pos_;
    std::string raw = s_.substr(start, pos_ - start);
    while (!raw.empty() && std::isspace(static_cast<unsigned char>(raw.back()))) raw.pop_back();
    if (raw.empty()) fail("attribute `" + name + "` has no value");
    if (pos_ < s_.size() && s_[pos_] == ';') ++pos_;
    a.values.push_back({raw, false});
    return a;
  }

  std::vector<LibValue> parse_args() {
    std::vector<LibValue> args;  // '(' consumed
    for (;;) {
      skip_space(nullptr);
      if (at_end()) fail("unexpected end of file inside '(...)' (truncated file?)");
      if (s_[pos_] == ')') {
        ++pos_;
        return args;
      }
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == '{' || s_[pos_] == '}' || s_[pos_] == ';' || s_[pos_] == ':') fail("missing ')'");
      args.push_back(read_value());
    }
  }

  // After the group's type word: `(args) { statements }`.
  LibGroup parse_group_rest(const std::string& type, int line) {
    skip_space(nullptr);
    if (at_end() || s_[pos_] != '(') fail("expected '(' after `" + type + "`");
    ++pos_;
    LibGroup g;
    g.type = type;
    g.line = line;
    g.args = parse_args();
    skip_space(nullptr);
    if (at_end() || s_[pos_] != '{') fail("expected '{' to open group `" + type + "`");
    ++pos_;
    parse_body(g);
    return g;
  }

  void parse_body(LibGroup& g) {
    for (;;) {
      skip_space(nullptr);
      if (at_end()) {
        throw FileError(source_, "line " + std::to_string(line_) + ": unexpected end of file: group `" + g.type +
                                     (g.args.empty() ? std::string() : " (" + g.name() + ")") + "` opened at line " +
                                     std::to_string(g.line) + " is not closed (truncated file?)");
      }
      const char c = s_[pos_];
      if (c == '}') {
        ++pos_;
        skip_space(nullptr);
        if (pos_ < s_.size() && s_[pos_] == ';') ++pos_;
        return;
      }
      if (c == ';') {  // stray separator
        ++pos_;
        continue;
      }
      if (is_delim(c)) fail(std::string("unexpected '") + c + "'");
      const int line = line_;
      const std::string name = read_word();
      if (name.empty()) fail(std::string("unexpected '") + c + "'");
      skip_space(nullptr);
      if (at_end()) fail("unexpected end of file after `" + name + "` (truncated file?)");
      if (s_[pos_] == ':') {
        ++pos_;
        g.add_attribute(parse_simple(name, line));
      } else if (s_[pos_] == '(') {
        ++pos_;
        std::vector<LibValue> args = parse_args();
        skip_space(nullptr);
        if (pos_ < s_.size() && s_[pos_] == '{') {
          ++pos_;
          LibGroup child;
          child.type = name;
          child.line = line;
          child.args = std::move(args);
          parse_body(child);
          g.add_group(std::move(child));
        } else {
          LibAttribute a;
          a.name = name;
          a.values = std::move(args);
          a.complex = true;
          a.line = line;
          if (pos_ < s_.size() && s_[pos_] == ';') ++pos_;
          g.add_attribute(std::move(a));
        }
      } else {
        fail("expected ':' or '(' after `" + name + "`");
      }
    }
  }

  const std::string& s_;
  std::string source_;
  size_t pos_ = 0;
  int line_ = 1;
};

std::string quote_if(const LibValue& v) { return v.quoted ? "\"" + v.text + "\"" : v.text; }

}  // namespace

LibFile parse_liberty_text(const std::string& text, const std::string& source) {
  return LibertyParser(text, source).parse();
}

LibFile parse_liberty_file(const fs::path& path) {
  return parse_liberty_text(read_text_maybe_gz(path), path.string());
}

void write_liberty(std::ostream& out, const LibGroup& g, int indent) {
  const std::string pad(static_cast<size_t>(indent) * 2, ' ');
  out << pad << g.type << " (";
  for (size_t i = 0; i < g.args.size(); ++i) out << (i ? ", " : "") << quote_if(g.args[i]);
  out << ") {\n";
  const std::string inner(static_cast<size_t>(indent + 1) * 2, ' ');
  for (const auto& [is_group, idx] : g.order) {
    if (is_group) {
      write_liberty(out, g.groups[idx], indent + 1);
      continue;
    }
    const LibAttribute& a = g.attributes[idx];
    if (!a.complex) {
      out << inner << a.name << " : ";
      for (size_t i = 0; i < a.values.size(); ++i) out << (i ? " " : "") << quote_if(a.values[i]);
      out << ";\n";
    } else if (a.values.size() > 1 && a.name == "values") {
      out << inner << a.name << " ( \\\n";
      for (size_t i = 0; i < a.values.size(); ++i)
        out << inner << "  " << quote_if(a.values[i]) << (i + 1 < a.values.size() ? ", \\\n" : " \\\n");
      out << inner << ");\n";
    } else {
      out << inner << a.name << " (";
      for (size_t i = 0; i < a.values.size(); ++i) out << (i ? ", " : "") << quote_if(a.values[i]);
      out << ");\n";
    }
  }
  out << pad << "}\n";
}

// ---------------------------------------------------------------- units

namespace {

// "1ns", "10ps", "1.0nW": the number times the SI value of the unit.
double parse_unit(const std::string& text, const std::map<std::string, double>& units, const std::string& what,
                  const std::string& source, int line) {
  std::string t;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) t += c;
  size_t i = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.' || t[i] == 'e' || t[i] == '-' ||
                          t[i] == '+')) {
    // An 'e' followed by a letter starts the unit, not an exponent.
    if (t[i] == 'e' && (i + 1 >= t.size() || std::isalpha(static_cast<unsigned char>(t[i + 1])))) break;
    ++i;
  }
  const double scale = i == 0 ? 1.0 : std::strtod(t.substr(0, i).c_str(), nullptr);
  const std::string unit = to_lower(t.substr(i));
  auto it = units.find(unit);
  if (it == units.end() || !(scale > 0))
    throw FileError(source, "line " + std::to_string(line) + ": cannot read " + what + " \"" + text + "\"");
  return scale * it->second;
}

const std::map<std::string, double> kTimeUnits{{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12},
                                               {"fs", 1e-15}};
const std::map<std::string, double> kCapUnits{{"f", 1}, {"mf", 1e-3}, {"uf", 1e-6}, {"nf", 1e-9}, {"pf", 1e-12},
                                              {"ff", 1e-15}};
const std::map<std::string, double> kPowerUnits{{"w", 1}, {"mw", 1e-3}, {"uw", 1e-6}, {"nw", 1e-9}, {"pw", 1e-12},
                                                {"fw", 1e-15}};
const std::map<std::string, double> kVoltUnits{{"v", 1}, {"mv", 1e-3}};

double number(const LibAttribute& a, size_t i, const std::string& source) {
  if (i >= a.values.size())
    throw FileError(source, "line " + std::to_string(a.line) + ": attribute `" + a.name + "` has too few values");
  const std::string& t = a.values[i].text;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(t.c_str(), &end);
  while (end && *end && std::isspace(static_cast<unsigned char>(*end))) ++end;
  if (t.empty() || errno == ERANGE || !end || *end != '\0' || !std::isfinite(v))
    throw FileError(source, "line " + std::to_string(a.line) + ": attribute `" + a.name + "`: \"" + t +
                                "\" is not a number");
  return v;
}

std::vector<double> number_list(const LibAttribute& a, const std::string& source) {
  std::vector<double> out;
  for (const LibValue& v : a.values) {
    std::string item;
    auto flush = [&] {
      if (item.empty()) return;
      char* end = nullptr;
      const double x = std::strtod(item.c_str(), &end);
      if (!end || *end != '\0' || !std::isfinite(x))
        throw FileError(source, "line " + std::to_string(a.line) + ": `" + a.name + "`: \"" + item +
                                    "\" is not a number");
      out.push_back(x);
      item.clear();
    };
    for (char c : v.text) {
      if (c == ',' || std::isspace(static_cast<unsigned char>(c)))
        flush();
      else
        item += c;
    }
    flush();
  }
  return out;
}

LibUnits read_units(const LibGroup& lib, const std::string& source) {
  LibUnits u;
  if (const LibAttribute* a = lib.attribute("time_unit"))
    u.time_s = parse_unit(a->values.at(0).text, kTimeUnits, "time_unit", source, a->line);
  if (const LibAttribute* a = lib.attribute("capacitive_load_unit")) {
    if (a->values.size() < 2)
      throw FileError(source, "line " + std::to_string(a->line) + ": capacitive_load_unit needs (number, unit)");
    u.cap_f = parse_unit(a->values[0].text + a->values[1].text, kCapUnits, "capacitive_load_unit", source, a->line);
  }
  if (const LibAttribute* a = lib.attribute("leakage_power_unit"))
    u.leakage_w = parse_unit(a->values.at(0).text, kPowerUnits, "leakage_power_unit", source, a->line);
  if (const LibAttribute* a = lib.attribute("voltage_unit"))
    u.voltage_v = parse_unit(a->values.at(0).text, kVoltUnits, "voltage_unit", source, a->line);
  return u;
}

bool same_units(const LibUnits& a, const LibUnits& b) {
  auto eq = [](double x, double y) { return std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y)); };
  return eq(a.time_s, b.time_s) && eq(a.cap_f, b.cap_f) && eq(a.leakage_w, b.leakage_w) && eq(a.voltage_v, b.voltage_v);
}

}  // namespace

// ---------------------------------------------------------------- merging

LibFile merge_liberty(const std::vector<LibFile>& files, const std::vector<std::string>& dont_use) {
  if (files.empty()) throw Error("no Liberty file given to merge");
  LibFile out;
  out.path = files.front().path;
  LibGroup& merged = out.library;
  merged = files.front().library;
  const LibUnits units = read_units(merged, files.front().path);
  std::set<std::string> cells, named_groups;
  for (const LibGroup& g : merged.groups) {
    if (g.type == "cell") cells.insert(g.name());
    else named_groups.insert(g.type + "/" + g.name());
  }
  auto corner = [](const LibGroup& g) {
    return "nom_voltage " + g.value("nom_voltage", "?") + ", nom_temperature " + g.value("nom_temperature", "?");
  };
  for (size_t f = 1; f < files.size(); ++f) {
    const LibGroup& lib = files[f].library;
    if (corner(lib) != corner(merged))
      out.warnings.push_back(files[f].path + " is at another corner (" + corner(lib) + ") than " +
                             files.front().path + " (" + corner(merged) + "); the merged library takes the first's");
    if (!same_units(units, read_units(lib, files[f].path)))
      throw FileError(files[f].path, "units differ from " + files.front().path +
                                         " (time, capacitance, leakage or voltage unit); cannot merge");
    for (const auto& [is_group, idx] : lib.order) {
      if (!is_group) continue;
      const LibGroup& g = lib.groups[idx];
      if (g.type == "cell") {
        if (!cells.insert(g.name()).second)
          throw FileError(files[f].path, "line " + std::to_string(g.line) + ": cell " + g.name() +
                                             " is already defined by an earlier file; cannot merge");
        merged.add_group(g);
      } else if (named_groups.insert(g.type + "/" + g.name()).second) {
        // Templates and other named groups of later files, placed before the
        // first cell so that every reference follows its definition.
        auto first_cell = std::find_if(merged.order.begin(), merged.order.end(), [&](const auto& o) {
          return o.first && merged.groups[o.second].type == "cell";
        });
        merged.groups.push_back(g);
        merged.order.insert(first_cell, {true, merged.groups.size() - 1});
      }
    }
  }
  if (!dont_use.empty()) {
    for (LibGroup& g : merged.groups) {
      if (g.type != "cell") continue;
      bool match = false;
      for (const std::string& pat : dont_use) match = match || glob_match(pat, g.name());
      if (match && !g.attribute("dont_use")) g.add_attribute({"dont_use", {{"true", false}}, false, g.line});
    }
  }
  std::ostringstream head;
  head << "/* Liberty library prepared by kaleido (kaleido_ppa) for synthesis and timing.\n";
  head << "   Sources, merged in this order (cells and templates of all; header of the first):\n";
  for (const LibFile& f : files) head << "     " << f.path << "\n";
  if (!dont_use.empty()) {
    head << "   Cells marked dont_use by pattern:";
    for (const std::string& p : dont_use) head << " " << p;
    head << "\n";
  }
  for (const std::string& w : out.warnings) head << "   Warning: " << w << "\n";
  head << "   Each source's own leading comment (licence) follows. */\n";
  for (const LibFile& f : files) {
    if (f.header_comment.empty()) continue;
    head << "/* ---- header of " << fs::path(f.path).filename().string() << " ---- */\n" << f.header_comment << "\n";
  }
  out.header_comment = head.str();
  return out;
}

std::string liberty_text(const LibFile& f) {
  std::ostringstream text;
  text << f.header_comment;
  write_liberty(text, f.library);
  return text.str();
}

void write_merged_liberty(const std::vector<fs::path>& sources, const fs::path& out,
                          const std::vector<std::string>& dont_use) {
  if (sources.empty()) throw Error("no Liberty file given to merge");
  std::vector<LibFile> files;
  for (const fs::path& p : sources) files.push_back(parse_liberty_file(p));
  write_file_atomic(out, liberty_text(merge_liberty(files, dont_use)));
}

// ---------------------------------------------------------------- model

double LutTable::lookup(double slew_s, double load_f) const {
  if (values.empty()) return 0.0;
  const double x1 = axis1_is_load ? load_f : slew_s;
  const double x2 = axis2_is_load ? load_f : slew_s;
  // Index and fraction along one axis; the fraction may leave [0,1] to extrapolate.
  auto locate = [](const std::vector<double>& axis, double x, size_t& i, double& frac) {
    if (axis.size() < 2) {
      i = 0;
      frac = 0;
      return;
    }
    i = 0;
    while (i + 2 < axis.size() && x > axis[i + 1]) ++i;
    const double span = axis[i + 1] - axis[i];
    frac = span != 0 ? (x - axis[i]) / span : 0.0;
  };
  const size_t n2 = index2.empty() ? 1 : index2.size();
  auto at = [&](size_t r, size_t c) { return values[std::min(r * n2 + c, values.size() - 1)]; };
  size_t i1 = 0, i2 = 0;
  double f1 = 0, f2 = 0;
  locate(index1, x1, i1, f1);
  locate(index2, x2, i2, f2);
  const bool has1 = index1.size() >= 2, has2 = index2.size() >= 2;
  if (!has1 && !has2) return values.front();
  if (has1 && !has2) return at(i1, 0) * (1 - f1) + at(i1 + 1, 0) * f1;
  if (!has1 && has2) return at(0, i2) * (1 - f2) + at(0, i2 + 1) * f2;
  const double v00 = at(i1, i2), v01 = at(i1, i2 + 1), v10 = at(i1 + 1, i2), v11 = at(i1 + 1, i2 + 1);
  return (1 - f1) * (1 - f2) * v00 + (1 - f1) * f2 * v01 + f1 * (1 - f2) * v10 + f1 * f2 * v11;
}

double LibPin::load_f() const {
  const double rf = std::max(rise_capacitance_f, fall_capacitance_f);
  return rf > 0 ? rf : capacitance_f;
}

const LibPin* LibCell::pin(const std::string& n) const {
  for (const LibPin& p : pins)
    if (p.name == n) return &p;
  return nullptr;
}

int LibCell::pin_index(const std::string& n) const {
  for (size_t i = 0; i < pins.size(); ++i)
    if (pins[i].name == n) return static_cast<int>(i);
  return -1;
}

double LibCell::leakage_w() const {
  if (cell_leakage_w) return *cell_leakage_w;
  std::map<std::string, std::pair<double, int>> cond;  // pg pin -> (sum, count)
  std::map<std::string, double> uncond;
  for (const LeakageGroup& l : leakage) {
    if (l.when.empty()) {
      uncond[l.related_pg_pin] += l.power_w;
    } else {
      cond[l.related_pg_pin].first += l.power_w;
      cond[l.related_pg_pin].second += 1;
    }
  }
  double total = 0;
  for (const auto& [pg, sc] : cond) total += sc.first / sc.second;
  for (const auto& [pg, v] : uncond)
    if (!cond.count(pg)) total += v;
  return total;
}

double LibCell::leakage_opensta2019_w() const {
  if (cell_leakage_w) return *cell_leakage_w;
  double cond = 0, uncond = 0;
  bool found_cond = false;
  for (const LeakageGroup& l : leakage) {
    if (l.when.empty()) {
      uncond += l.power_w;
      continue;
    }
    found_cond = true;
    // Observed on Debian's build (debug output of report_power): 0.5 for every
    // input port of the condition but the first (inv A: 1, AND2 (A*B)*Y: 0.5,
    // dfrtp (RESET_B*CLK)*D*!Q: 0.25).
    int inputs = 0;
    const BoolFunction when = BoolFunction::parse(l.when);
    for (const std::string& v : when.variables()) {
      const LibPin* p = pin(v);
      if (p && (p->direction == PinDirection::Input || p->direction == PinDirection::Inout)) ++inputs;
    }
    cond += l.power_w * std::pow(0.5, std::max(0, inputs - 1));
  }
  return found_cond ? cond : uncond;
}

bool LibCell::is_ground_pg(const std::string& pg) const {
  if (pg.empty()) return false;
  auto it = pg_pin_voltage.find(pg);
  return it != pg_pin_voltage.end() && it->second == 0.0;
}

double WireLoadModel::wire_cap_f(int fanout) const {
  if (fanout <= 0) return 0.0;
  double length = 0;
  if (fanout_length.empty()) {
    length = slope * fanout;
  } else {
    const auto& last = fanout_length.back();
    bool found = false;
    for (const auto& [f, len] : fanout_length)
      if (f == fanout) {
        length = len;
        found = true;
      }
    if (!found) {
      if (fanout > last.first) {
        length = last.second + slope * (fanout - last.first);
      } else {
        // Between table points: interpolate linearly.
        auto hi = std::find_if(fanout_length.begin(), fanout_length.end(), [&](const auto& e) { return e.first > fanout; });
        if (hi == fanout_length.begin()) {
          length = hi->second * fanout / std::max(1, hi->first);
        } else {
          auto lo = hi - 1;
          length = lo->second + (hi->second - lo->second) * (fanout - lo->first) / (hi->first - lo->first);
        }
      }
    }
  }
  return length * cap_per_length_f;
}

const LibCell* Library::cell(const std::string& n) const {
  auto it = index.find(n);
  return it == index.end() ? nullptr : &cells[it->second];
}

const WireLoadModel* Library::wire_load() const {
  for (const WireLoadModel& w : wire_loads)
    if (w.name == default_wire_load) return &w;
  return nullptr;
}

namespace {

struct Templates {
  // name -> (variable names, index_1, index_2) in library units
  struct T {
    std::vector<std::string> vars;
    std::vector<double> i1, i2;
  };
  std::map<std::string, T> by_name;
};

bool is_load_variable(const std::string& v) { return v.find("capacitance") != std::string::npos; }

class ModelBuilder {
 public:
  explicit ModelBuilder(Library& lib) : lib_(lib) {}

  void add_file(const LibFile& f) {
    source_ = f.path;
    const LibGroup& g = f.library;
    const LibUnits u = read_units(g, source_);
    if (lib_.sources.empty()) {
      lib_.units = u;
      lib_.name = g.name();
    } else if (!same_units(lib_.units, u)) {
      throw FileError(source_, "units differ from " + lib_.sources.front() + "; cannot merge");
    }
    lib_.sources.push_back(source_);
    units_ = u;
    for (const LibAttribute& a : g.attributes)
      if (a.name == "voltage_map" && a.complex && a.values.size() >= 2 && !lib_.voltage_map.count(a.values[0].text))
        lib_.voltage_map[a.values[0].text] = number(a, 1, source_) * units_.voltage_v;
    read_voltage(g);
    for (const LibGroup& c : g.groups) {
      if (c.type == "lu_table_template" || c.type == "power_lut_template") add_template(c);
      else if (c.type == "wire_load") add_wire_load(c);
    }
    if (lib_.default_wire_load.empty()) lib_.default_wire_load = g.value("default_wire_load");
    for (const LibGroup& c : g.groups)
      if (c.type == "cell") add_cell(c);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& why) const {
    throw FileError(source_, "line " + std::to_string(line) + ": " + why);
  }

  void read_voltage(const LibGroup& g) {
    if (lib_.voltage_v > 0) return;
    const std::string def = g.value("default_operating_conditions");
    for (const LibGroup& oc : g.groups) {
      if (oc.type != "operating_conditions") continue;
      if (!def.empty() && oc.name() != def) continue;
      if (const LibAttribute* v = oc.attribute("voltage")) lib_.voltage_v = number(*v, 0, source_) * units_.voltage_v;
      if (lib_.voltage_v > 0) return;
    }
    if (const LibAttribute* v = g.attribute("nom_voltage")) lib_.voltage_v = number(*v, 0, source_) * units_.voltage_v;
    if (lib_.voltage_v > 0) return;
    for (const LibAttribute& a : g.attributes)
      if (a.name == "voltage_map" && a.complex && a.values.size() >= 2)
        lib_.voltage_v = std::max(lib_.voltage_v, number(a, 1, source_) * units_.voltage_v);
  }

  void add_template(const LibGroup& t) {
    Templates::T tt;
    for (int k = 1; k <= 3; ++k) {
      const std::string v = t.value("variable_" + std::to_string(k));
      if (!v.empty()) tt.vars.push_back(v);
    }
    if (const LibAttribute* a = t.attribute("index_1")) tt.i1 = number_list(*a, source_);
    if (const LibAttribute* a = t.attribute("index_2")) tt.i2 = number_list(*a, source_);
    templates_.by_name[t.name()] = tt;
  }

  void add_wire_load(const LibGroup& w) {
    WireLoadModel m;
    m.name = w.name();
    if (const LibAttribute* a = w.attribute("capacitance")) m.cap_per_length_f = number(*a, 0, source_) * units_.cap_f;
    if (const LibAttribute* a = w.attribute("slope")) m.slope = number(*a, 0, source_);
    for (const LibAttribute& a : w.attributes)
      if (a.name == "fanout_length" && a.values.size() >= 2)
        m.fanout_length.emplace_back(static_cast<int>(number(a, 0, source_)), number(a, 1, source_));
    std::sort(m.fanout_length.begin(), m.fanout_length.end());
    lib_.wire_loads.push_back(m);
  }

  // value_scale converts table values (time or energy) to SI.
  LutTable read_table(const LibGroup& t, double value_scale) {
    LutTable out;
    std::vector<std::string> vars;
    std::vector<double> i1, i2;
    const std::string tname = t.name();
    if (!tname.empty() && tname != "scalar") {
      auto it = templates_.by_name.find(tname);
      if (it == templates_.by_name.end()) fail(t.line, "table `" + t.type + "` uses undefined template `" + tname + "`");
      vars = it->second.vars;
      i1 = it->second.i1;
      i2 = it->second.i2;
    }
    if (const LibAttribute* a = t.attribute("index_1")) i1 = number_list(*a, source_);
    if (const LibAttribute* a = t.attribute("index_2")) i2 = number_list(*a, source_);
    const LibAttribute* v = t.attribute("values");
    if (!v) fail(t.line, "table `" + t.type + "` has no values");
    out.values = number_list(*v, source_);
    for (double& x : out.values) x *= value_scale;
    out.axis1_is_load = vars.size() >= 1 && is_load_variable(vars[0]);
    out.axis2_is_load = vars.size() >= 2 ? is_load_variable(vars[1]) : !out.axis1_is_load;
    const double s1 = out.axis1_is_load ? units_.cap_f : units_.time_s;
    const double s2 = out.axis2_is_load ? units_.cap_f : units_.time_s;
    if (vars.size() >= 1 || !i1.empty()) {
      out.index1 = i1;
      for (double& x : out.index1) x *= s1;
    }
    if (vars.size() >= 2 || !i2.empty()) {
      out.index2 = i2;
      for (double& x : out.index2) x *= s2;
    }
    const size_t expect = std::max<size_t>(1, out.index1.size()) * std::max<size_t>(1, out.index2.size());
    if (out.values.size() != expect && out.values.size() != 1)
      fail(v->line, "table `" + t.type + "` has " + std::to_string(out.values.size()) + " values; its indices need " +
                        std::to_string(expect));
    if (out.values.size() == 1) {
      out.index1.clear();
      out.index2.clear();
    }
    return out;
  }

  void add_pin(LibCell& cell, const LibGroup& p, const std::string& name) {
    LibPin pin;
    pin.name = name;
    const std::string dir = p.value("direction", "input");
    if (dir == "input") pin.direction = PinDirection::Input;
    else if (dir == "output") pin.direction = PinDirection::Output;
    else if (dir == "inout") pin.direction = PinDirection::Inout;
    else if (dir == "internal") pin.direction = PinDirection::Internal;
    else fail(p.line, "pin " + name + ": unknown direction `" + dir + "`");
    if (const LibAttribute* a = p.attribute("capacitance")) pin.capacitance_f = number(*a, 0, source_) * units_.cap_f;
    if (const LibAttribute* a = p.attribute("rise_capacitance"))
      pin.rise_capacitance_f = number(*a, 0, source_) * units_.cap_f;
    if (const LibAttribute* a = p.attribute("fall_capacitance"))
      pin.fall_capacitance_f = number(*a, 0, source_) * units_.cap_f;
    if (const LibAttribute* a = p.attribute("max_capacitance"))
      pin.max_capacitance_f = number(*a, 0, source_) * units_.cap_f;
    pin.function = p.value("function");
    pin.three_state = p.value("three_state");
    pin.is_clock = p.value("clock") == "true";
    for (const LibGroup& g : p.groups) {
      if (g.type == "internal_power") {
        InternalPowerGroup ip;
        ip.related_pin = g.value("related_pin");
        ip.related_pg_pin = g.value("related_pg_pin");
        ip.when = g.value("when");
        for (const LibGroup& t : g.groups) {
          if (t.type == "rise_power") ip.rise = read_table(t, units_.energy_j());
          else if (t.type == "fall_power") ip.fall = read_table(t, units_.energy_j());
          else if (t.type == "power") ip.rise = ip.fall = read_table(t, units_.energy_j());
        }
        pin.power.push_back(std::move(ip));
      } else if (g.type == "timing") {
        TimingGroup tg;
        tg.related_pin = g.value("related_pin");
        tg.timing_type = g.value("timing_type");
        tg.timing_sense = g.value("timing_sense");
        for (const LibGroup& t : g.groups) {
          if (t.type == "cell_rise") tg.cell_rise = read_table(t, units_.time_s);
          else if (t.type == "cell_fall") tg.cell_fall = read_table(t, units_.time_s);
          else if (t.type == "rise_transition") tg.rise_transition = read_table(t, units_.time_s);
          else if (t.type == "fall_transition") tg.fall_transition = read_table(t, units_.time_s);
        }
        pin.timing.push_back(std::move(tg));
      }
    }
    if (!pin.function.empty()) check_function(p.line, pin.function);
    cell.pins.push_back(std::move(pin));
  }

  void check_function(int line, const std::string& f) {
    try {
      BoolFunction::parse(f);
    } catch (const Error& e) {
      fail(line, e.what());
    }
  }

  void add_cell(const LibGroup& c) {
    LibCell cell;
    cell.name = c.name();
    cell.source = source_;
    if (lib_.index.count(cell.name)) fail(c.line, "cell " + cell.name + " is defined twice");
    if (const LibAttribute* a = c.attribute("area")) cell.area = number(*a, 0, source_);
    cell.dont_use = c.value("dont_use") == "true";
    if (const LibAttribute* a = c.attribute("cell_leakage_power"))
      cell.cell_leakage_w = number(*a, 0, source_) * units_.leakage_w;
    for (const LibGroup& g : c.groups) {
      if (g.type == "pin") {
        for (const LibValue& n : g.args) add_pin(cell, g, n.text);
      } else if (g.type == "bus" || g.type == "bundle") {
        for (const LibGroup& p : g.groups)
          if (p.type == "pin")
            for (const LibValue& n : p.args) add_pin(cell, p, n.text);
      } else if (g.type == "leakage_power") {
        LeakageGroup l;
        if (const LibAttribute* a = g.attribute("value")) l.power_w = number(*a, 0, source_) * units_.leakage_w;
        l.when = g.value("when");
        l.related_pg_pin = g.value("related_pg_pin");
        cell.leakage.push_back(l);
      } else if (g.type == "ff" || g.type == "latch") {
        SequentialGroup s;
        s.latch = g.type == "latch";
        if (g.args.size() >= 1) s.q_var = g.args[0].text;
        if (g.args.size() >= 2) s.qn_var = g.args[1].text;
        s.next_state = g.value(s.latch ? "data_in" : "next_state");
        s.clocked_on = g.value(s.latch ? "enable" : "clocked_on");
        s.clear = g.value("clear");
        s.preset = g.value("preset");
        s.clear_preset_var1 = g.value("clear_preset_var1");
        s.clear_preset_var2 = g.value("clear_preset_var2");
        for (const std::string* f : {&s.next_state, &s.clocked_on, &s.clear, &s.preset})
          if (!f->empty()) check_function(g.line, *f);
        cell.sequentials.push_back(s);
      } else if (g.type == "pg_pin") {
        const std::string vname = g.value("voltage_name", g.name());
        auto it = lib_.voltage_map.find(vname);
        const std::string type = g.value("pg_type");
        double v = it != lib_.voltage_map.end() ? it->second : (type.find("ground") != std::string::npos ? 0.0 : -1.0);
        if (v >= 0) cell.pg_pin_voltage[g.name()] = v;
      } else if (g.type == "statetable" || g.type == "ff_bank" || g.type == "latch_bank") {
        cell.has_statetable = true;
      }
    }
    lib_.index[cell.name] = lib_.cells.size();
    lib_.cells.push_back(std::move(cell));
  }

  Library& lib_;
  std::string source_;
  LibUnits units_;
  Templates templates_;
};

}  // namespace

Library library_from_files(const std::vector<LibFile>& files) {
  Library lib;
  ModelBuilder b(lib);
  for (const LibFile& f : files) b.add_file(f);
  return lib;
}

Library read_liberty(const std::vector<fs::path>& files) {
  if (files.empty()) throw Error("no Liberty file given");
  std::vector<LibFile> parsed;
  for (const fs::path& p : files) parsed.push_back(parse_liberty_file(p));
  return library_from_files(parsed);
}

Library read_liberty(const fs::path& file) { return read_liberty(std::vector<fs::path>{file}); }

}  // namespace kaleido::ppa
