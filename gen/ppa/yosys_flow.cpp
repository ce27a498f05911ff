#include "ppa/yosys_flow.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"
#include "common/version.hpp"
#include "ppa/liberty.hpp"
#include "ppa/sram_liberty.hpp"
#include "ppa/tools.hpp"

namespace kaleido::ppa {

namespace fs = std::filesystem;

std::string fill_template(const std::string& text, const std::map<std::string, std::string>& values,
                          const std::string& template_name) {
  std::string out;
  size_t pos = 0;
  for (;;) {
    const size_t open = text.find("{{", pos);
    if (open == std::string::npos) break;
    const size_t close = text.find("}}", open);
    if (close == std::string::npos) break;
    const std::string key = text.substr(open + 2, close - open - 2);
    auto it = values.find(key);
    if (it == values.end()) throw Error(template_name + ": placeholder {{" + key + "}} has no value");
    out.append(text, pos, open - pos).append(it->second);
    pos = close + 2;
  }
  out.append(text, pos, std::string::npos);
  return out;
}

std::vector<fs::path> rtl_files_in(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw FileError(dir.string(), "is not a folder of RTL files");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".v" || ext == ".sv")) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw FileError(dir.string(), "contains no .v or .sv file");
  return files;
}

std::string rtl_content_hash(const std::vector<fs::path>& files) {
  std::vector<std::pair<std::string, fs::path>> named;
  for (const fs::path& f : files) named.emplace_back(f.filename().string(), f);
  std::sort(named.begin(), named.end());
  uint64_t h = kFnv1aOffset;
  auto mix = [&h](const std::string& bytes) {
    h = fnv1a(fnv1a(h, bytes), "\xff");  // separator: ("ab", "c") and ("a", "bc") differ
  };
  for (const auto& [name, path] : named) {
    mix(name);
    mix(read_file(path));
  }
  return fmt::format("{:016x}", h);
}

namespace {

// Verilog text without // and /* */ comments (strings are not special-cased: the generated RTL has
// no comment markers inside strings, and a stray one only makes the closure larger).
std::string without_comments(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 2, "//") == 0) {
      i = text.find('\n', i);
      if (i == std::string::npos) break;
    } else if (text.compare(i, 2, "/*") == 0) {
      const size_t end = text.find("*/", i + 2);
      i = end == std::string::npos ? text.size() : end + 2;
      out += ' ';
    } else {
      out += text[i++];
    }
  }
  return out;
}

// The identifiers of Verilog text, in order, keywords included (escaped identifiers are not needed:
// the generated RTL has none).
std::vector<std::string> identifiers(const std::string& text) {
  const auto starts = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  const auto continues = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; };
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    if (starts(text[i]) && (i == 0 || !continues(text[i - 1]))) {
      size_t j = i + 1;
      while (j < text.size() && continues(text[j])) ++j;
      out.push_back(text.substr(i, j - i));
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

}  // namespace

std::vector<fs::path> rtl_files_for_top(const std::vector<fs::path>& files, const std::string& top) {
  // Design units another file can name: modules, and the SystemVerilog units a module may import or
  // instantiate. A file declaring none (definitions read by `include, say) is always kept.
  static const std::set<std::string> kUnits = {"module", "macromodule", "interface", "package", "primitive",
                                               "program"};
  std::vector<std::vector<std::string>> words;
  std::map<std::string, size_t> declared_in;  // unit -> file index
  std::vector<bool> needed(files.size(), false);
  for (size_t f = 0; f < files.size(); ++f) {
    words.push_back(identifiers(without_comments(read_file(files[f]))));
    const std::vector<std::string>& w = words.back();
    bool declares = false;
    for (size_t k = 0; k + 1 < w.size(); ++k)
      if (kUnits.count(w[k])) {
        declared_in.emplace(w[k + 1], f);
        declares = true;
      }
    needed[f] = !declares;
  }
  const auto top_file = declared_in.find(top);
  if (top_file == declared_in.end())
    throw ConfigError("--top", top, "no RTL file given declares this module");
  std::vector<size_t> todo = {top_file->second};
  needed[top_file->second] = true;
  while (!todo.empty()) {
    const size_t f = todo.back();
    todo.pop_back();
    for (const std::string& w : words[f]) {
      const auto d = declared_in.find(w);
      if (d != declared_in.end() && !needed[d->second]) {
        needed[d->second] = true;
        todo.push_back(d->second);
      }
    }
  }
  std::vector<fs::path> out;
  for (size_t f = 0; f < files.size(); ++f)
    if (needed[f]) out.push_back(files[f]);
  return out;
}

namespace {

// Yosys splits commands on whitespace; quoting is not reliable across
// versions, so paths with spaces are refused up front.
std::string yosys_path(const fs::path& p) {
  const std::string s = fs::absolute(p).lexically_normal().string();
  if (s.find_first_of(" \t\"") != std::string::npos)
    throw Error("path `" + s + "` contains a space or quote, which Yosys scripts cannot take; move it");
  return s;
}

fs::path template_path(const std::string& rel) {
  const fs::path p = fs::path(source_dir()) / rel;
  if (!fs::exists(p)) throw FileError(p.string(), "Yosys script template is missing (KALEIDO_SOURCE_DIR wrong?)");
  return p;
}

std::string read_template(const std::string& rel) { return read_file(template_path(rel)); }

// Read ports of an elaborated (`proc`) memory module: each $memrd's address
// comes from an input port, its data goes to an output port directly
// (asynchronous read) or through a register (registered read).
std::vector<SramReadPort> trace_read_ports(const nlohmann::json& m) {
  std::map<long long, std::pair<std::string, bool>> port_of;  // bit -> (port, is output)
  for (const auto& [pname, p] : m.at("ports").items())
    for (const auto& b : p.at("bits"))
      if (b.is_number()) port_of[b.get<long long>()] = {pname, p.at("direction") == "output"};
  auto port_of_bits = [&](const nlohmann::json& bits, bool want_output) -> std::string {
    std::string name;
    for (const auto& b : bits) {
      if (!b.is_number()) return "";
      auto it = port_of.find(b.get<long long>());
      if (it == port_of.end() || it->second.second != want_output) return "";
      if (!name.empty() && name != it->second.first) return "";
      name = it->second.first;
    }
    return name;
  };
  std::vector<SramReadPort> ports;
  if (!m.contains("cells")) return ports;
  const auto& cells = m.at("cells");
  for (const auto& [cname, c] : cells.items()) {
    const std::string type = c.at("type").get<std::string>();
    if (type != "$memrd" && type != "$memrd_v2") continue;
    const auto& conn = c.at("connections");
    SramReadPort rp;
    rp.addr_port = port_of_bits(conn.at("ADDR"), false);
    if (conn.contains("EN") && conn.at("EN").size() == 1) rp.enable_port = port_of_bits(conn.at("EN"), false);
    const auto& params = c.at("parameters");
    const bool clocked = params.contains("CLK_ENABLE") && params.at("CLK_ENABLE").get<std::string>().find('1') !=
                                                             std::string::npos;
    rp.data_port = port_of_bits(conn.at("DATA"), true);
    rp.registered = clocked;
    if (rp.data_port.empty()) {
      // Data through a register to an output port: a registered read.
      const auto& data = conn.at("DATA");
      for (const auto& [dname, d] : cells.items()) {
        const std::string dt = d.at("type").get<std::string>();
        if (dt != "$dff" && dt != "$adff" && dt != "$dffe") continue;
        if (d.at("connections").at("D") != data) continue;
        rp.data_port = port_of_bits(d.at("connections").at("Q"), true);
        rp.registered = true;
      }
    }
    if (rp.addr_port.empty() || rp.data_port.empty()) return {};  // not traceable: fall back to names
    ports.push_back(rp);
  }
  return ports;
}

std::vector<SramShape> read_sram_shapes(const fs::path& json_path, const std::vector<std::string>& patterns) {
  std::vector<SramShape> out;
  if (!fs::exists(json_path)) return out;
  const nlohmann::json d = nlohmann::json::parse(read_file(json_path));
  if (!d.contains("modules")) return out;
  for (const auto& [name, m] : d.at("modules").items()) {
    bool match = false;
    for (const std::string& p : patterns) match = match || glob_match(p, name);
    if (!match) continue;
    SramShape s;
    s.module = name;
    if (m.contains("memories") && !m.at("memories").empty()) {
      // Several memories in one module: count their bits as one macro.
      long long bits_total = 0;
      int widest = 0;
      std::ostringstream how;
      for (const auto& [mname, mem] : m.at("memories").items()) {
        const int w = mem.at("width").get<int>();
        const int n = mem.at("size").get<int>();
        bits_total += static_cast<long long>(w) * n;
        widest = std::max(widest, w);
        how << (how.tellp() > 0 ? ", " : "") << "memory " << mname << ": " << n << " words x " << w << " bits";
      }
      s.bits = widest;
      s.words = static_cast<int>((bits_total + widest - 1) / widest);
      s.how = how.str();
    } else {
      // No inferred memory: size from the ports (widest output = word, address width = words).
      int data = 0, addr = 0;
      for (const auto& [pname, p] : m.at("ports").items()) {
        const int w = static_cast<int>(p.at("bits").size());
        if (p.at("direction") == "output") data = std::max(data, w);
        if (p.at("direction") == "input" && pname.find("addr") != std::string::npos) addr = std::max(addr, w);
      }
      s.bits = std::max(1, data);
      s.words = addr > 0 && addr < 31 ? (1 << addr) : 1;
      s.how = "no memory found; from ports: widest output " + std::to_string(s.bits) + " bits, address " +
              std::to_string(addr) + " bits";
    }
    s.read_ports = trace_read_ports(m);
    int addr_ports = 0;
    for (const auto& [pname, p] : m.at("ports").items())
      if (p.at("direction") == "input" && pname.find("addr") != std::string::npos) ++addr_ports;
    s.address_ports = std::max(1, addr_ports);
    out.push_back(s);
  }
  return out;
}

}  // namespace

const std::vector<SynthRecipe>& synth_recipes() {
  static const std::vector<SynthRecipe> recipes = {
      {"yosys", "Yosys 0.23 synth, Brent-Kung carries, Yosys's abc -D script (area rewriting, retiming)",
       false, false},
      {"delay", "Yosys 0.23 synth, Brent-Kung carries, delay-driven ABC (&dch, &nf -D, gate sizing)", false,
       true},
      {"delay-ks", "Yosys 0.23 synth, Kogge-Stone carries, delay-driven ABC (&dch, &nf -D, gate sizing)",
       true, true},
  };
  return recipes;
}

std::string synth_recipe_names() {
  std::string names;
  for (const SynthRecipe& r : synth_recipes()) names += (names.empty() ? "" : ", ") + r.name;
  return names;
}

const SynthRecipe& synth_recipe(const std::string& name) {
  for (const SynthRecipe& r : synth_recipes())
    if (r.name == name) return r;
  throw ConfigError("synthesis recipe", name, "must be one of " + synth_recipe_names());
}

int separate_macro_pins(nlohmann::json& netlist, const std::vector<std::string>& patterns, int pins_per_output) {
  if (!netlist.contains("modules")) throw Error("separate_macro_pins: not a Yosys JSON netlist (no modules)");
  if (pins_per_output < 1) throw Error("separate_macro_pins: pins per output must be at least 1");
  const size_t per = static_cast<size_t>(pins_per_output);
  nlohmann::json& modules = netlist["modules"];
  const auto is_macro = [&](const std::string& type) {
    for (const std::string& p : patterns)
      if (glob_match(p, type)) return true;
    return false;
  };
  int added = 0;
  for (auto& [name, module] : modules.items()) {
    if (is_macro(name) || !module.contains("cells")) continue;
    nlohmann::json& cells = module["cells"];
    // Net bit -> the macro input pins it drives: (cell, port, bit index).
    std::map<int64_t, std::vector<std::tuple<std::string, std::string, size_t>>> sinks;
    int64_t next_bit = 2;  // 0 and 1 are never net bits in Yosys JSON
    const auto see = [&](const nlohmann::json& bits) {
      for (const auto& b : bits)
        if (b.is_number_integer()) next_bit = std::max<int64_t>(next_bit, b.get<int64_t>() + 1);
    };
    if (module.contains("ports"))
      for (const auto& [port, p] : module["ports"].items()) see(p["bits"]);
    if (module.contains("netnames"))
      for (const auto& [net, n] : module["netnames"].items()) see(n["bits"]);
    for (const auto& [cell, c] : cells.items()) {
      for (const auto& [port, bits] : c["connections"].items()) see(bits);
      if (!is_macro(c["type"].get<std::string>())) continue;
      const nlohmann::json dirs = c.value("port_directions", nlohmann::json::object());
      for (const auto& [port, bits] : c["connections"].items()) {
        if (dirs.value(port, "") != "input" || is_clock_port_name(port)) continue;
        for (size_t i = 0; i < bits.size(); ++i)
          if (bits[i].is_number_integer()) sinks[bits[i].get<int64_t>()].emplace_back(cell, port, i);
      }
    }
    for (const auto& [bit, pins] : sinks) {
      if (pins.size() <= per) continue;
      for (size_t first = 0; first < pins.size(); first += per) {
        const int64_t own = next_bit++;
        for (size_t k = first; k < std::min(pins.size(), first + per); ++k) {
          const auto& [cell, port, i] = pins[k];
          cells[cell]["connections"][port][i] = own;
        }
        cells["$kaleido_macro_pins$" + std::to_string(own)] = {
            {"hide_name", 1},
            {"type", "$_BUF_"},
            {"parameters", nlohmann::json::object()},
            {"attributes", nlohmann::json::object()},
            {"port_directions", {{"A", "input"}, {"Y", "output"}}},
            {"connections", {{"A", {bit}}, {"Y", {own}}}}};
        ++added;
      }
    }
  }
  return added;
}

YosysResult run_yosys(const YosysJob& job) {
  const std::string yosys = find_tool("yosys", "yosys");
  if (job.rtl_files.empty()) throw Error("no RTL file to synthesise");
  if (job.top.empty()) throw ConfigError("top", "(empty)", "name the top module");
  if (!(job.period_ps > 0)) throw ConfigError("clock period", std::to_string(job.period_ps) + " ps", "must be positive");
  const SynthRecipe& recipe = synth_recipe(job.recipe);
  fs::create_directories(job.work_dir);
  const fs::path work = fs::absolute(job.work_dir);
  YosysResult r;
  r.script = work / "synth.ys";
  r.log = work / "yosys.log";
  r.netlist_v = work / (job.top + ".mapped.v");
  r.netlist_json = work / (job.top + ".mapped.json");
  r.stat_report = work / "yosys_stat.txt";
  const fs::path constr = work / "abc.constr";
  const fs::path sram_json = work / "srams.json";
  fs::remove(sram_json);

  std::ostringstream abc;
  abc << "set_driving_cell " << job.abc_driving_cell << "\n";
  abc << "set_load " << job.abc_load_ff << "\n";
  write_file_atomic(constr, abc.str());

  std::string incdirs;
  for (const fs::path& d : job.include_dirs) incdirs += " -I" + yosys_path(d);
  std::ostringstream read;
  for (const fs::path& f : job.rtl_files) {
    if (!fs::exists(f)) throw FileError(f.string(), "RTL file does not exist");
    read << "read_verilog -sv" << incdirs << " " << yosys_path(f) << "\n";
  }
  std::string sram_block;
  if (!job.blackbox_patterns.empty()) {
    std::string select;
    for (const std::string& p : job.blackbox_patterns) select += (select.empty() ? "" : " ") + p;
    // Only when the design has such modules: `blackbox` on an empty selection is an error.
    bool any = false;
    for (const fs::path& f : job.rtl_files) {
      const std::string text = read_file(f);
      std::smatch m;
      std::regex mod_re(R"(\bmodule\s+([A-Za-z_][A-Za-z0-9_$]*))");
      for (auto it = std::sregex_iterator(text.begin(), text.end(), mod_re); it != std::sregex_iterator(); ++it)
        for (const std::string& p : job.blackbox_patterns) any = any || glob_match(p, (*it)[1].str());
    }
    if (any)
      sram_block = fill_template(read_template("scripts/yosys/sram_block.ys.in"),
                                 {{"SRAM_SELECT", select}, {"SRAM_JSON", yosys_path(sram_json)}}, "sram_block.ys.in");
  }
  const std::string period_ps = std::to_string(static_cast<long long>(std::llround(job.period_ps)));
  const std::string flatten = job.flatten ? " -flatten" : "";
  const std::string synth =
      recipe.kogge_stone_carries
          ? fill_template(read_template("scripts/yosys/synth_kogge_stone.ys.in"),
                          {{"TOP", job.top},
                           {"FLATTEN", flatten},
                           {"CARRY_MAP", yosys_path(template_path("scripts/yosys/kogge_stone_lcu.v"))}},
                          "synth_kogge_stone.ys.in")
          : "synth -top " + job.top + flatten + "\n";
  std::string abc_command = "abc -liberty " + yosys_path(job.liberty) + " -D " + period_ps + " -constr " +
                            yosys_path(constr);
  if (recipe.delay_abc_script) {
    // ABC reads one command line; the template may wrap it.
    std::string text = fill_template(read_template("scripts/yosys/abc_delay.abc.in"), {{"PERIOD_PS", period_ps}},
                                     "abc_delay.abc.in");
    std::replace(text.begin(), text.end(), '\n', ' ');
    const fs::path abc_script = work / "abc_delay.abc";
    write_file_atomic(abc_script, text + "\n");
    abc_command += " -script " + yosys_path(abc_script);
  }
  // With black boxes, Yosys stops before ABC and writes the netlist; separate_macro_pins edits it
  // and a second Yosys run maps it from there (the marker line splits the filled script).
  const fs::path premap = work / (job.top + ".premap.json"), premap_pins = work / (job.top + ".premap_pins.json");
  const std::string resume_marker = "# -- kaleido: separate_macro_pins (gen/ppa/yosys_flow.cpp), then Yosys resumes --";
  const bool two_parts = job.macro_pin_outputs && !sram_block.empty();
  const std::string macro_pins = two_parts ? "write_json " + yosys_path(premap) + "\n" + resume_marker + "\n" +
                                                 "read_json " + yosys_path(premap_pins) + "\nhierarchy -top " +
                                                 job.top + "\n"
                                           : "";
  const std::map<std::string, std::string> values = {
      {"LIBERTY", yosys_path(job.liberty)},
      {"READ_RTL", read.str()},
      {"TOP", job.top},
      {"SRAM_BLOCK", sram_block},
      {"SYNTH", synth},
      {"MACRO_PINS", macro_pins},
      {"ABC", abc_command},
      {"STAT_REPORT", yosys_path(r.stat_report)},
      {"NETLIST_V", yosys_path(r.netlist_v)},
      {"NETLIST_JSON", yosys_path(r.netlist_json)},
  };
  const std::string header = "# Written by kaleido " + version() + " from scripts/yosys/synth.ys.in\n";
  std::string script = header + fill_template(read_template("scripts/yosys/synth.ys.in"), values, "synth.ys.in");
  // Runs one script; its log is `log`; `product` must exist afterwards.
  const auto run_part = [&](const fs::path& script_path, const fs::path& log_path, const fs::path& product) {
    const ToolRun run = run_tool({yosys, "-q", "-l", log_path.string(), script_path.string()}, work,
                                 work / (log_path.stem().string() + ".stdout"));
    r.seconds += run.seconds;
    const std::string log = fs::exists(log_path) ? read_file(log_path) : run.output;
    if (run.exit_code != 0 || !fs::exists(product)) {
      std::string errors;
      std::istringstream in(log + "\n" + run.output);
      for (std::string line; std::getline(in, line);)
        if (line.rfind("ERROR", 0) == 0) errors += "  " + line + "\n";
      throw Error("yosys failed (exit code " + std::to_string(run.exit_code) + ") synthesising " + job.top +
                  "; log " + log_path.string() + "\n" + (errors.empty() ? tail_lines(log, 15) : errors));
    }
    return log;
  };
  if (two_parts) {
    const size_t cut = script.find(resume_marker);
    if (cut == std::string::npos)
      throw Error("scripts/yosys/synth.ys.in has no {{MACRO_PINS}} slot after dfflibmap (in " +
                  template_path("scripts/yosys/synth.ys.in").string() + ")");
    const fs::path first = work / "synth_premap.ys";
    fs::remove(premap);
    write_file_atomic(first, script.substr(0, cut));
    run_part(first, work / "yosys_premap.log", premap);
    nlohmann::json netlist = nlohmann::json::parse(read_file(premap));
    r.macro_pin_buffers = separate_macro_pins(netlist, job.blackbox_patterns, job.macro_pins_per_output);
    write_file_atomic(premap_pins, netlist.dump());
    script = header + script.substr(cut);
  }
  write_file_atomic(r.script, script);
  fs::remove(r.netlist_json);
  const std::string log = run_part(r.script, r.log, r.netlist_json);
  // "Chip area for module '\name': 123.4" and "Chip area for top module '\name': 456.7"
  const std::regex area_re(R"(Chip area for (top )?module '\\?([^']+)': ([0-9.eE+-]+))");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), area_re); it != std::sregex_iterator(); ++it) {
    const double v = std::stod((*it)[3].str());
    if ((*it)[1].matched) r.stat_top_area = v;
    else r.stat_module_area[(*it)[2].str()] = v;
  }
  r.srams = read_sram_shapes(sram_json, job.blackbox_patterns);
  return r;
}

}  // namespace kaleido::ppa
