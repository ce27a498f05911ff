#include "sweep/sweep_spec.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "common/suggest.hpp"
#include "common/version.hpp"

namespace kaleido::sweep {

namespace fs = std::filesystem;
using nlohmann::ordered_json;  // keeps the file's order of axes and keys

namespace {

struct Alias {
  const char* name;
  std::vector<const char*> pdk_files;  // empty = the project's generic library
};

const std::vector<Alias>& aliases() {
  static const std::vector<Alias> a = {
      {"generic", {}},
      {"sky130_hd", {"sky130_fd_sc_hd__tt_025C_1v80.lib.gz"}},
      {"ihp_sg13g2", {"sg13g2_stdcell_typ_1p20V_25C.lib.gz"}},
      {"asap7",
       {"asap7sc7p5t_SIMPLE_RVT_FF_nldm_211120.lib.gz", "asap7sc7p5t_INVBUF_RVT_FF_nldm_220122.lib.gz",
        "asap7sc7p5t_SEQ_RVT_FF_nldm_220123.lib.gz"}},
  };
  return a;
}

const char* const kTopKeys[] = {"name", "description", "base", "axes", "tops", "activity", "recipe"};
const char* const kExtraKeys[] = {"clock_ns", "liberty"};

// Keys of a point: every hardware parameter (hw::hw_fields()), the clock and
// the library, and on axes the rows_cols shorthand.
std::vector<std::string> point_keys(bool with_rows_cols) {
  std::vector<std::string> keys = hw::hw_field_keys();
  keys.insert(keys.end(), std::begin(kExtraKeys), std::end(kExtraKeys));
  if (with_rows_cols) keys.push_back("rows_cols");
  return keys;
}

// One partly-built point: HwConfig plus clock and library.
struct Draft {
  hw::HwConfig config;
  double clock_ns = 2.0;  // the default clock of constraints/r8c8_d8a32_g8_27531cf5.sdc
  LibrarySpec library{"generic", {}, ""};
};

class Parser {
 public:
  Parser(const fs::path& base_dir, const std::string& origin) : base_dir_(base_dir), origin_(origin) {}

  [[noreturn]] void fail(const std::string& param, const ordered_json& value, const std::string& rule) const {
    throw ConfigError(origin_ + ": " + param, value.dump(), rule);
  }

  int integer(const std::string& param, const ordered_json& v) const {
    if (!v.is_number_integer()) fail(param, v, "must be an integer");
    const int64_t x = v.get<int64_t>();
    if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max()) fail(param, v, "out of range");
    return static_cast<int>(x);
  }

  double clock(const std::string& param, const ordered_json& v) const {
    if (!v.is_number() || !(v.get<double>() > 0)) fail(param, v, "must be a clock period in ns, > 0");
    return v.get<double>();
  }

  LibrarySpec library(const std::string& param, const ordered_json& v) const {
    if (v.is_string()) {
      const std::string s = v.get<std::string>();
      for (const Alias& a : aliases())
        if (s == a.name) return from_alias(a);
      if (s.find('/') == std::string::npos && !ends_with(s, ".lib") && !ends_with(s, ".lib.gz"))
        fail(param, v, "unknown library alias; use one of " + join(library_aliases()) + ", or a path to a .lib/.lib.gz");
      return from_files(param, v, {s});
    }
    if (v.is_array() && !v.empty()) {
      std::vector<std::string> files;
      for (const ordered_json& f : v) {
        if (!f.is_string()) fail(param, v, "a split library is a list of file paths (strings)");
        files.push_back(f.get<std::string>());
      }
      return from_files(param, v, files);
    }
    fail(param, v, "must be a library alias, a Liberty file path, or a list of paths (one library split in files)");
  }

  // Sets one key of a point (from `base` or an axis value).
  void set(Draft& d, const std::string& where, const std::string& key, const ordered_json& v) const {
    const std::string param = where + "." + key;
    if (const hw::HwField* f = hw::find_hw_field(key)) {
      f->set(d.config, integer(param, v));
    } else if (key == "clock_ns") {
      d.clock_ns = clock(param, v);
    } else if (key == "liberty") {
      d.library = library(param, v);
    } else if (key == "rows_cols") {
      if (v.is_number_integer()) {
        d.config.rows = d.config.cols = integer(param, v);
      } else if (v.is_array() && v.size() == 2) {
        d.config.rows = integer(param + "[0]", v[0]);
        d.config.cols = integer(param + "[1]", v[1]);
      } else {
        fail(param, v, "must be N (an N x N array) or [ROWS, COLS]");
      }
    } else {
      throw ConfigError(origin_ + ": " + where, key, "unknown key" + suggestion(key, point_keys(where != "base")));
    }
  }

 private:
  static bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  }
  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  }

  static LibrarySpec from_alias(const Alias& a) {
    LibrarySpec l;
    l.label = a.name;
    if (a.pdk_files.empty()) return l;
    const std::string shared = shared_dir();
    const fs::path pdk = shared.empty() ? fs::path(source_dir()).parent_path() / "shared" / "pdk" : fs::path(shared) / "pdk";
    for (const char* f : a.pdk_files) {
      l.files.push_back(pdk / f);
      if (l.unavailable.empty() && !fs::exists(pdk / f))
        l.unavailable = "library " + l.label + " not installed: " + (pdk / f).string() + " does not exist";
    }
    return l;
  }

  LibrarySpec from_files(const std::string& param, const ordered_json& v, const std::vector<std::string>& files) const {
    LibrarySpec l;
    for (const std::string& f : files) {
      const fs::path p(f);
      l.files.push_back(p.is_absolute() ? p : (base_dir_ / p).lexically_normal());
    }
    std::string stem = l.files.front().filename().string();
    for (const char* ext : {".gz", ".lib"})
      if (ends_with(stem, ext)) stem.resize(stem.size() - std::string(ext).size());
    if (stem.empty()) fail(param, v, "the file name gives no library label");
    l.label = stem;
    return l;
  }

  fs::path base_dir_;
  std::string origin_;
};

bool valid_name(const std::string& s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// The configuration's name (which identifies every parameter), the library
// and the clock: the same point always gets the same id.
std::string point_id(const Draft& d) { return d.config.name() + "_" + d.library.label + "_" + clock_text(d.clock_ns) + "ns"; }

std::string describe(const hw::HwConfig& c) {
  std::string s;
  for (const auto& [k, v] : c.parameter_list()) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

}  // namespace

std::string SweepPoint::label() const { return config.name() + " " + library.label + " " + clock_text(clock_ns) + "ns"; }

std::vector<std::string> library_aliases() {
  std::vector<std::string> v;
  for (const Alias& a : aliases()) v.push_back(a.name);
  return v;
}

std::string clock_text(double ns) { return sig(ns, 6); }

SweepSpec parse_sweep(const nlohmann::ordered_json& j, const fs::path& base_dir, const std::string& origin) {
  const Parser p(base_dir, origin);
  if (!j.is_object()) p.fail("(file)", ordered_json("..."), "a sweep is a JSON object");
  for (const auto& [k, v] : j.items()) {
    if (std::find(std::begin(kTopKeys), std::end(kTopKeys), k) == std::end(kTopKeys))
      throw ConfigError(origin + ": key", k,
                        "unknown" + suggestion(k, std::vector<std::string>(std::begin(kTopKeys), std::end(kTopKeys))));
  }
  SweepSpec s;
  s.source = j;
  if (!j.contains("name") || !j["name"].is_string() || !valid_name(j["name"].get<std::string>()))
    p.fail("name", j.value("name", ordered_json()), "required: letters, digits, '_' or '-'");
  s.name = j["name"].get<std::string>();
  if (j.contains("description")) {
    if (!j["description"].is_string()) p.fail("description", j["description"], "must be a string");
    s.description = j["description"].get<std::string>();
  }
  if (j.contains("activity")) {
    const ordered_json& a = j["activity"];
    if (!a.is_number() || !(a.get<double>() >= 0)) p.fail("activity", a, "must be a number >= 0 (transitions per cycle)");
    s.activity = a.get<double>();
  }
  if (j.contains("recipe")) {
    const ordered_json& r = j["recipe"];
    const std::string rule = "must be one of " + ppa::synth_recipe_names() + " (the synthesis recipe)";
    if (!r.is_string()) p.fail("recipe", r, rule);
    try {
      s.recipe = ppa::synth_recipe(r.get<std::string>()).name;
    } catch (const ConfigError&) {
      p.fail("recipe", r, rule);
    }
  }
  if (!j.contains("tops")) {
    s.tops = {"kld_top", "kld_plain_top"};
  } else {
    const ordered_json& t = j["tops"];
    if (!t.is_array() || t.empty()) p.fail("tops", t, "must be a non-empty list of module names");
    for (const ordered_json& m : t) {
      if (!m.is_string() || m.get<std::string>().rfind("kld_", 0) != 0 || !valid_name(m.get<std::string>()))
        p.fail("tops", m, "each top must be a generated module name (kld_top, kld_plain_top, kld_...)");
      if (std::find(s.tops.begin(), s.tops.end(), m.get<std::string>()) != s.tops.end())
        p.fail("tops", m, "listed twice");
      s.tops.push_back(m.get<std::string>());
    }
  }

  Draft base;
  if (j.contains("base")) {
    if (!j["base"].is_object()) p.fail("base", j["base"], "must be an object of parameters");
    for (const auto& [k, v] : j["base"].items()) p.set(base, "base", k, v);
  }

  // "axes": one object (one cartesian product) or a list of them (their union).
  std::vector<ordered_json> products;
  if (!j.contains("axes")) {
    products.push_back(ordered_json::object());
  } else if (j["axes"].is_object()) {
    products.push_back(j["axes"]);
  } else if (j["axes"].is_array() && !j["axes"].empty()) {
    for (const ordered_json& a : j["axes"]) {
      if (!a.is_object()) p.fail("axes", a, "each entry of a list of axes must be an object");
      products.push_back(a);
    }
  } else {
    p.fail("axes", j["axes"], "must be an object of axes or a non-empty list of them");
  }

  std::set<std::string> seen;
  std::map<std::string, std::vector<fs::path>> files_by_label;
  for (size_t pi = 0; pi < products.size(); ++pi) {
    const std::string where = products.size() == 1 ? "axes" : "axes[" + std::to_string(pi) + "]";
    const ordered_json& ax = products[pi];
    if (ax.contains("rows_cols") && (ax.contains("rows") || ax.contains("cols")))
      p.fail(where, ordered_json("rows_cols"), "rows_cols cannot be combined with rows or cols axes");
    std::vector<std::pair<std::string, const ordered_json*>> axes;
    for (const auto& [k, v] : ax.items()) {
      if (!v.is_array() || v.empty()) p.fail(where + "." + k, v, "an axis is a non-empty list of values");
      axes.emplace_back(k, &v);
    }
    // Cartesian product, last axis fastest, values in file order.
    size_t total = 1;
    for (const auto& a : axes) total *= a.second->size();
    for (size_t n = 0; n < total; ++n) {
      Draft d = base;
      size_t rest = n;
      std::vector<size_t> idx(axes.size());
      for (size_t a = axes.size(); a-- > 0;) {
        idx[a] = rest % axes[a].second->size();
        rest /= axes[a].second->size();
      }
      for (size_t a = 0; a < axes.size(); ++a) p.set(d, where, axes[a].first, (*axes[a].second)[idx[a]]);
      SweepPoint pt;
      pt.config = d.config;
      pt.clock_ns = d.clock_ns;
      pt.library = d.library;
      pt.id = point_id(d);
      try {
        pt.config.validate();
      } catch (const ConfigError& e) {
        throw ConfigError(origin + ": point " + pt.id, describe(pt.config), std::string("invalid configuration: ") + e.what());
      }
      // Two different files must not share a label (the label names the folder).
      auto [lib, fresh] = files_by_label.emplace(pt.library.label, pt.library.files);
      if (!fresh && lib->second != pt.library.files)
        p.fail("liberty", ordered_json(pt.library.label), "two different libraries have this label; rename one file");
      if (seen.insert(pt.id).second) s.points.push_back(pt);
      else ++s.duplicates_removed;
    }
  }
  return s;
}

SweepSpec load_sweep(const fs::path& file) {
  const std::string text = read_file(file);
  nlohmann::ordered_json j;
  try {
    j = ordered_json::parse(text);
  } catch (const ordered_json::parse_error& e) {
    throw FileError(file.string(), std::string("not valid JSON (TOML is not supported for sweeps): ") + e.what());
  }
  return parse_sweep(j, fs::absolute(file).parent_path(), file.string());
}

}  // namespace kaleido::sweep
