#include "cli/config_file.hpp"

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/suggest.hpp"
#include "common/text.hpp"

namespace kaleido::cli {

namespace {

// What the file says about one key: where it is and what kind of value it has
// ("string", "integer", "float", "boolean", "array of <kind>", "table").
struct KeyInfo {
  int line = 0;  // 0: the parser gives no line (JSON keys)
  std::string kind;
};

// Keys and sections by their full dotted name ("golden.channels", "golden").
struct FileFacts {
  std::string file;
  std::map<std::string, KeyInfo> keys;
  std::map<std::string, int> sections;
};

[[noreturn]] void fail(const FileFacts& f, int line, const std::string& key, const std::string& what) {
  throw ConfigError::in_file(f.file, line, key, what);
}

// ---- TOML: a strict check of the subset CLI11 reads ------------------------

bool bare_key_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

// A dotted name of bare keys ("golden", "a.b"); false when malformed.
bool dotted_name(const std::string& s) {
  if (s.empty() || s.front() == '.' || s.back() == '.') return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '.' && s[i + 1] == '.') return false;
    if (s[i] != '.' && !bare_key_char(s[i])) return false;
  }
  return true;
}

// Parses one TOML value of `text` from `i`; returns its kind, or throws a
// message (std::string) saying what is wrong.
class TomlValue {
 public:
  explicit TomlValue(const std::string& text) : t_(text) {}

  std::string parse(size_t& i) const {
    skip_space(i);
    if (i >= t_.size()) throw std::string("the value is missing");
    const char c = t_[i];
    if (c == '"') return basic_string(i);
    if (c == '\'') return literal_string(i);
    if (c == '[') return array(i);
    if (c == '{') throw std::string("inline tables are not supported; use a [section]");
    return scalar(i);
  }

  void skip_space(size_t& i) const {
    while (i < t_.size() && (t_[i] == ' ' || t_[i] == '\t' || t_[i] == '\r' || t_[i] == '\n')) ++i;
  }

 private:
  std::string basic_string(size_t& i) const {
    for (++i; i < t_.size(); ++i) {
      if (t_[i] == '\\') {
        ++i;
        continue;
      }
      if (t_[i] == '\n') break;
      if (t_[i] == '"') {
        ++i;
        return "string";
      }
    }
    throw std::string("a string is not closed with \"");
  }

  std::string literal_string(size_t& i) const {
    const size_t end = t_.find('\'', i + 1);
    if (end == std::string::npos || t_.find('\n', i + 1) < end) throw std::string("a string is not closed with '");
    i = end + 1;
    return "string";
  }

  std::string array(size_t& i) const {
    ++i;
    std::string elem;
    for (;;) {
      skip_space(i);
      if (i < t_.size() && t_[i] == '#') {  // a comment inside a multi-line array
        while (i < t_.size() && t_[i] != '\n') ++i;
        continue;
      }
      if (i >= t_.size()) throw std::string("an array is not closed with ]");
      if (t_[i] == ']') {
        ++i;
        return "array of " + (elem.empty() ? std::string("nothing") : elem);
      }
      const std::string k = parse(i);
      skip_space(i);
      if (i >= t_.size()) throw std::string("an array is not closed with ]");
      elem = elem.empty() || elem == k ? k : (elem == "integer" && k == "float") || (elem == "float" && k == "integer")
                                                   ? "float"
                                                   : "mixed values";
      if (t_[i] == ',') {
        ++i;
      } else if (t_[i] != ']') {
        throw std::string("array elements must be separated by commas");
      }
    }
  }

  std::string scalar(size_t& i) const {
    size_t end = i;
    while (end < t_.size() && !std::isspace(static_cast<unsigned char>(t_[end])) && t_[end] != ',' && t_[end] != ']' &&
           t_[end] != '#')
      ++end;
    const std::string w = t_.substr(i, end - i);
    i = end;
    if (w == "true" || w == "false") return "boolean";
    std::string digits;  // TOML allows '_' between digits
    for (char ch : w)
      if (ch != '_') digits += ch;
    if (!digits.empty()) {
      char* stop = nullptr;
      const bool hex = digits.rfind("0x", 0) == 0 || digits.rfind("0o", 0) == 0 || digits.rfind("0b", 0) == 0;
      const int base = !hex ? 10 : digits[1] == 'x' ? 16 : digits[1] == 'o' ? 8 : 2;
      std::strtoll(hex ? digits.c_str() + 2 : digits.c_str(), &stop, base);
      if (*stop == '\0' && digits != "+" && digits != "-") return "integer";
      std::strtod(digits.c_str(), &stop);
      if (*stop == '\0' && std::isdigit(static_cast<unsigned char>(digits.back()))) return "float";
      if (w == "inf" || w == "+inf" || w == "-inf" || w == "nan" || w == "+nan" || w == "-nan") return "float";
    }
    throw std::string("`" + w + "` is not a TOML value (strings need quotes: \"" + w + "\")");
  }

  const std::string& t_;
};

// Index of the end of a value that may span lines (an array): the brackets
// outside strings are balanced.
bool balanced(const std::string& s) {
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (c == '\\' && quote == '"') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (c == '[') {
      ++depth;
    } else if (c == ']') {
      --depth;
    }
  }
  return depth <= 0;
}

FileFacts check_toml(const std::string& text, const std::string& file) {
  FileFacts f;
  f.file = file;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::string section;
  for (size_t n = 0; n < lines.size(); ++n) {
    const int line_no = static_cast<int>(n) + 1;
    const std::string l = trim(lines[n]);
    if (l.empty() || l[0] == '#') continue;
    if (l[0] == '[') {
      const size_t close = l.find(']');
      if (l.rfind("[[", 0) == 0) fail(f, line_no, l, "arrays of tables ([[...]]) are not supported");
      if (close == std::string::npos) fail(f, line_no, l, "a section header must end with ]");
      const std::string rest = trim(l.substr(close + 1));
      if (!rest.empty() && rest[0] != '#') fail(f, line_no, l, "unexpected text after the section header");
      section = trim(l.substr(1, close - 1));
      if (!dotted_name(section)) fail(f, line_no, l, "a section name is letters, digits, '_' and '-' (dots nest)");
      if (!f.sections.emplace(section, line_no).second)
        fail(f, line_no, "[" + section + "]", "section given twice (first on line " +
                                                  std::to_string(f.sections[section]) + ")");
      continue;
    }
    const size_t eq = l.find('=');
    if (eq == std::string::npos) fail(f, line_no, l, "expected `key = value` or a [section]");
    const std::string key = trim(l.substr(0, eq));
    if (!dotted_name(key)) fail(f, line_no, key, "a key is letters, digits, '_' and '-' (dots nest)");
    std::string value = l.substr(eq + 1);
    size_t last = n;
    while (!balanced(value) && last + 1 < lines.size()) value += "\n" + lines[++last];
    const std::string full = section.empty() ? key : section + "." + key;
    KeyInfo info{line_no, ""};
    try {
      const TomlValue v(value);
      size_t i = 0;
      info.kind = v.parse(i);
      while (i < value.size() && (value[i] == ' ' || value[i] == '\t' || value[i] == '\r')) ++i;
      if (i < value.size() && value[i] != '#') throw std::string("unexpected text after the value");
    } catch (const std::string& why) {
      fail(f, line_no, key, why);
    }
    if (!f.keys.emplace(full, info).second)
      fail(f, line_no, key, "given twice (first on line " + std::to_string(f.keys[full].line) + ")");
    n = last;
  }
  return f;
}

// ---- JSON --------------------------------------------------------------------

std::string json_kind(const nlohmann::json& v) {
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "float";
  if (v.is_object()) return "table";
  if (v.is_null()) return "null";
  std::string elem;
  for (const auto& e : v) {
    const std::string k = json_kind(e);
    elem = elem.empty() || elem == k ? k : "mixed values";
  }
  return "array of " + (elem.empty() ? std::string("nothing") : elem);
}

std::string scalar(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump();
}

void flatten(const nlohmann::json& obj, std::vector<std::string>& parents, std::vector<CLI::ConfigItem>& out,
             FileFacts& facts) {
  for (const auto& [key, value] : obj.items()) {
    std::string full;
    for (const std::string& p : parents) full += p + ".";
    full += key;
    if (value.is_object()) {
      facts.sections.emplace(full, 0);
      parents.push_back(key);
      flatten(value, parents, out, facts);
      parents.pop_back();
      continue;
    }
    facts.keys.emplace(full, KeyInfo{0, json_kind(value)});
    CLI::ConfigItem item;
    item.parents = parents;
    item.name = key;
    if (value.is_array()) {
      std::string joined;  // lists become one comma-separated value, as on the command line
      for (const auto& e : value) joined += (joined.empty() ? "" : ",") + scalar(e);
      item.inputs.push_back(joined);
    } else {
      item.inputs.push_back(scalar(value));
    }
    out.push_back(std::move(item));
  }
}

int line_of_offset(const std::string& text, size_t offset) {
  int line = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) line += text[i] == '\n';
  return line;
}

// ---- Checking the keys against the command line --------------------------------

std::vector<const CLI::App*> named_subcommands(const CLI::App* app) {
  return app->get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); });
}

// The option a config key sets, found as CLI11 finds it.
const CLI::Option* option_for(const CLI::App* app, const std::string& name) {
  const CLI::Option* op = app->get_option_no_throw("--" + name);
  if (!op && name.size() == 1) op = app->get_option_no_throw("-" + name);
  if (!op) op = app->get_option_no_throw(name);
  return op;
}

std::vector<std::string> key_names(const CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app->get_options()) {
    if (o == app->get_help_ptr() || o == app->get_help_all_ptr() || o == app->get_config_ptr()) continue;
    if (!o->get_lnames().empty()) names.push_back(o->get_lnames().front());
    else if (o->get_positional()) names.push_back(o->get_name(true, false));
  }
  return names;
}

std::string section_text(const std::vector<std::string>& parents) {
  if (parents.empty()) return "at the top of the file (outside any [section])";
  std::string s;
  for (const std::string& p : parents) s += (s.empty() ? "" : ".") + p;
  return "in [" + s + "]";
}

bool is_integer_text(const std::string& s, bool allow_negative) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || (allow_negative && s[i] == '-'))) ++i;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

// The kind of value an option takes, from CLI11's type name ("INT", "UINT:POSITIVE", ...).
std::string expected_kind(const CLI::Option* op) {
  if (op->get_expected_min() == 0) return "boolean";
  std::string t = op->get_type_name();
  t = t.substr(0, t.find_first_of(":[ "));
  if (t == "INT") return "integer";
  if (t == "UINT") return "non-negative integer";
  if (t == "FLOAT") return "number";
  return "";  // text: anything goes
}

void check_value(const FileFacts& f, const std::string& full, const CLI::ConfigItem& item, const CLI::Option* op) {
  const std::string want = expected_kind(op);
  if (want.empty()) return;
  const auto it = f.keys.find(full);
  const KeyInfo info = it == f.keys.end() ? KeyInfo{} : it->second;
  std::string kind = info.kind;
  const bool array = kind.rfind("array of ", 0) == 0;
  if (array) {
    kind = kind.substr(9);
    if (op->get_items_expected_max() <= 1 && want != "boolean")
      fail(f, info.line, item.name, "wrong type " + section_text(item.parents) + ": expected one " + want +
                                        ", got a list");
  }
  const bool ok = want == "boolean"   ? kind == "boolean"
                  : want == "number" ? kind == "integer" || kind == "float"
                                      : kind == "integer";
  std::string value;
  for (const std::string& in : item.inputs) value += (value.empty() ? "" : ",") + in;
  if (!ok && kind != "nothing")
    fail(f, info.line, item.name + " = " + value,
         "wrong type " + section_text(item.parents) + ": expected " + (array ? "a list of " : "") +
             (want == "integer" || want == "boolean" ? std::string(want == "integer" ? "an " : "a ") : "a ") + want +
             ", got " + (kind == "string" ? "a string" : kind == "mixed values" ? "mixed values" : kind));
  if (want == "non-negative integer") {
    std::stringstream all(value);
    for (std::string v; std::getline(all, v, ',');)
      if (!is_integer_text(trim(v), false))
        fail(f, info.line, item.name + " = " + value, "must be a non-negative integer " + section_text(item.parents));
  }
}

void check_items(const CLI::App* root, const std::vector<CLI::ConfigItem>& items, const FileFacts& f) {
  for (const CLI::ConfigItem& item : items) {
    if (item.name == "++" || item.name == "--") continue;
    const CLI::App* app = root;
    std::string path;
    for (const std::string& p : item.parents) {
      const CLI::App* next = nullptr;
      std::vector<std::string> names;
      for (const CLI::App* s : named_subcommands(app)) {
        names.push_back(s->get_name());
        if (s->check_name(p)) next = s;
      }
      path += (path.empty() ? "" : ".") + p;
      if (!next) {
        const auto sec = f.sections.find(path);
        fail(f, sec == f.sections.end() ? 0 : sec->second, "[" + path + "]",
             "unknown section" + std::string(names.empty() ? "" : "; sections name commands") + suggestion(p, names));
      }
      app = next;
    }
    const std::string full = item.fullname();
    const auto key = f.keys.find(full);
    const int line = key == f.keys.end() ? 0 : key->second.line;
    const CLI::Option* op = option_for(app, item.name);
    if (!op || op == app->get_help_ptr() || op == app->get_help_all_ptr()) {
      for (const CLI::App* s : named_subcommands(app))
        if (s->check_name(item.name))
          fail(f, line, item.name, "names a command: its options go in a section [" + item.name + "]");
      fail(f, line, item.name, "unknown key " + section_text(item.parents) + suggestion(item.name, key_names(app)));
    }
    if (!op->get_configurable()) fail(f, line, item.name, "cannot be set from a config file");
    check_value(f, full, item, op);
  }
}

}  // namespace

std::vector<CLI::ConfigItem> JsonOrTomlConfig::from_config(std::istream& input) const {
  std::stringstream buffer;
  buffer << input.rdbuf();
  const std::string text = buffer.str();
  const CLI::Option* config = app_->get_config_ptr();
  const std::string file = config && config->count() > 0 ? config->as<std::string>() : "config file";
  const auto first = text.find_first_not_of(" \t\r\n");
  std::vector<CLI::ConfigItem> result;
  FileFacts facts;
  if (first == std::string::npos || text[first] != '{') {
    facts = check_toml(text, file);
    std::istringstream toml(text);
    result = CLI::ConfigTOML::from_config(toml);
  } else {
    facts.file = file;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      fail(facts, line_of_offset(text, e.byte == 0 ? 0 : e.byte - 1), "(syntax)", std::string("not valid JSON: ") + e.what());
    }
    std::vector<std::string> parents;
    flatten(j, parents, result, facts);
  }
  check_items(app_, result, facts);
  return result;
}

void add_config_option(CLI::App& app) {
  app.config_formatter(std::make_shared<JsonOrTomlConfig>(&app));
  app.set_config("--config", "", "Read options from a TOML or JSON file (strict: unknown keys are errors); "
                                 "command-line values override it");
}

}  // namespace kaleido::cli
