#include "equiv/equiv.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "common/markdown.hpp"
#include "common/process.hpp"
#include "common/version.hpp"
#include "equiv/miter.hpp"
#include "equiv/yosys_json.hpp"
#include "ppa/cell_models.hpp"
#include "ppa/liberty.hpp"
#include "ppa/sdc.hpp"
#include "ppa/synth.hpp"
#include "ppa/yosys_flow.hpp"

namespace kaleido::equiv {

namespace fs = std::filesystem;

std::string status_text(Status s) {
  switch (s) {
    case Status::Equivalent: return "equivalent";
    case Status::NotEquivalent: return "NOT equivalent";
    case Status::Unknown: return "unknown";
  }
  return "unknown";
}

bool EquivResult::all_equivalent() const {
  if (proofs.empty()) return false;
  for (const ProofResult& p : proofs)
    if (p.status != Status::Equivalent) return false;
  return true;
}

size_t EquivResult::count(Status s) const {
  return static_cast<size_t>(std::count_if(proofs.begin(), proofs.end(), [&](const ProofResult& p) { return p.status == s; }));
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Yosys splits commands on whitespace: refuse paths it cannot take.
std::string yosys_path(const fs::path& p) {
  const std::string s = fs::absolute(p).lexically_normal().string();
  if (s.find_first_of(" \t\";") != std::string::npos)
    throw Error("path `" + s + "` contains a space, quote or semicolon, which Yosys scripts cannot take; move it");
  return s;
}

std::string read_template(const std::string& rel) {
  const fs::path p = fs::path(source_dir()) / rel;
  if (!fs::exists(p)) throw FileError(p.string(), "Yosys script template is missing (KALEIDO_SOURCE_DIR wrong?)");
  return read_file(p);
}

std::vector<std::string> module_names_in(const std::string& verilog) {
  std::vector<std::string> out;
  static const std::regex mod_re(R"((?:^|\n)\s*module\s+\\?([A-Za-z_][A-Za-z0-9_$]*))");
  for (auto it = std::sregex_iterator(verilog.begin(), verilog.end(), mod_re); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1].str());
  return out;
}

bool matches_any(const std::vector<std::string>& patterns, const std::string& name) {
  for (const std::string& p : patterns)
    if (ppa::glob_match(p, name)) return true;
  return false;
}

// Intermediate files: out/work, unless `out` lies in the source tree (outside
// build*/ and out/), where merged PDK Liberty files must not land.
fs::path choose_work_dir(const fs::path& out) {
  const fs::path src = fs::weakly_canonical(fs::path(source_dir()));
  const fs::path o = fs::weakly_canonical(out);
  auto rel = o.lexically_relative(src);
  const std::string first = rel.empty() ? "" : rel.begin()->string();
  const bool inside = !rel.empty() && first != "..";
  if (inside && first.rfind("build", 0) != 0 && first != "out") {
    const fs::path tmp = fs::temp_directory_path() / ("kaleido-equiv-" + std::to_string(std::hash<std::string>{}(o.string())));
    return tmp;
  }
  return o / "work";
}

// Runs a Yosys script; throws Error with the log's ERROR lines on failure or timeout.
double run_yosys_script(const std::string& yosys, const fs::path& script, const fs::path& log, const fs::path& work,
                        double timeout_s, const std::string& what) {
  const ProcessResult run = run_process({yosys, "-q", "-l", log.string(), script.string()},
                                        {work, work / (script.stem().string() + ".stdout"), timeout_s, {}});
  if (run.timed_out)
    throw Error("yosys did not finish " + what + " within " + std::to_string(static_cast<long long>(timeout_s)) +
                " s (log " + log.string() + "); no result");
  if (run.exit_code != 0) {
    const std::string text = (fs::exists(log) ? read_file(log) : std::string()) + "\n" + run.output;
    std::string errors;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (line.find("ERROR") != std::string::npos) errors += "  " + line + "\n";
    throw Error("yosys failed " + what + " (exit code " + std::to_string(run.exit_code) + "; log " + log.string() +
                ")\n" + (errors.empty() ? tail_lines(text, 15) : errors));
  }
  return run.seconds;
}

std::string stub_verilog(const JsonModule& m) {
  std::ostringstream o;
  o << "(* blackbox *)\nmodule " << m.name << " (";
  for (size_t i = 0; i < m.ports.size(); ++i) o << (i ? ", " : "") << m.ports[i].name;
  o << ");\n";
  for (const JsonPort& p : m.ports) {
    o << "  " << p.direction;
    if (p.bits.size() > 1 || p.offset != 0)
      o << " [" << (p.offset + static_cast<int>(p.bits.size()) - 1) << ":" << p.offset << "]";
    o << " " << p.name << ";\n";
  }
  o << "endmodule\n\n";
  return o.str();
}

// Modules below `top` in the reference design, children before parents.
std::vector<std::string> modules_bottom_up(const JsonDesign& d, const std::string& top) {
  std::vector<std::string> order;
  std::set<std::string> seen;
  std::function<void(const std::string&)> visit = [&](const std::string& name) {
    if (!seen.insert(name).second) return;
    const JsonModule* m = d.module(name);
    if (!m || m->blackbox) return;
    std::set<std::string> children;
    for (const JsonCell& c : m->cells)
      if (!c.type.empty() && (c.type[0] != '$' || d.module(c.type))) children.insert(c.type);  // $paramod too
    for (const std::string& c : children) visit(c);
    order.push_back(name);
  };
  visit(top);
  return order;
}

uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Input values of one pattern, grouped by signal: "in a_i" -> "0101...".
std::vector<std::pair<std::string, std::string>> describe_inputs(const Aig& aig, const std::vector<bool>& values) {
  std::map<std::string, std::map<long long, bool>> groups;
  std::vector<std::string> order;
  static const std::regex indexed(R"(^(.*)\[(-?[0-9]+)\]$)");
  for (size_t i = 0; i < aig.num_inputs(); ++i) {
    std::string name = aig.input_name(i);
    long long idx = 0;
    std::smatch m;
    if (std::regex_match(name, m, indexed)) {
      idx = std::stoll(m[2].str());
      name = m[1].str();
    }
    if (!groups.count(name)) order.push_back(name);
    groups[name][idx] = values[i];
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& n : order) {
    std::string bits;
    for (auto it = groups[n].rbegin(); it != groups[n].rend(); ++it) bits.push_back(it->second ? '1' : '0');
    out.emplace_back(n, bits);
  }
  return out;
}

// Outputs of the miter that are 1 for the given input values.
std::vector<std::string> differing_outputs(const Aig& aig, const std::vector<bool>& values, size_t limit) {
  std::vector<uint64_t> words(values.size());
  for (size_t i = 0; i < values.size(); ++i) words[i] = values[i] ? 1u : 0u;
  const std::vector<uint64_t> out = aig.simulate(words);
  std::vector<std::string> names;
  size_t total = 0;
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] & 1u) {
      if (names.size() < limit) names.push_back(aig.output_name(i));
      ++total;
    }
  if (total > names.size()) names.push_back("... " + std::to_string(total - names.size()) + " more");
  return names;
}

void fill_stats(ProofResult& p, const Miter& m) {
  p.compared = m.pairs.size();
  p.structurally_equal = m.structurally_equal;
  p.miter_outputs = m.aig.num_outputs();
  p.miter_inputs = m.aig.num_inputs();
  p.miter_ands = m.aig.cone_ands();
  p.gold_registers = m.gold_registers;
  p.gate_registers = m.gate_registers;
  p.matched_registers = m.matched_registers;
  p.constant_registers = m.constant_registers;
  p.registers_paired_by_position = m.registers_paired_by_position;
  p.unmatched_gold = m.unmatched_gold;
  p.unmatched_gate = m.unmatched_gate;
  p.instances = m.instances;
  p.problems = m.problems;
  p.gold_undefined_bits = m.gold_undefined_bits;
  p.gate_undefined_bits = m.gate_undefined_bits;
  p.kind = m.instances.empty() ? "module" : "module + wiring";
}

ProofResult prove_module(const JsonDesign& gold, const JsonDesign& gate, const std::string& name,
                         const std::map<std::string, std::string>& unmodelled, const EquivOptions& opt,
                         const std::string& abc, const fs::path& work) {
  const auto t0 = std::chrono::steady_clock::now();
  ProofResult p;
  p.module = name;
  p.kind = "module";
  p.method = "register-cut miter";
  // A cell without a model cannot be compared: say which.
  if (const JsonModule* tm = gate.module(name)) {
    std::set<std::string> bad;
    for (const JsonCell& c : tm->cells)
      if (unmodelled.count(c.type)) bad.insert(c.type + " (" + unmodelled.at(c.type) + ")");
    if (!bad.empty()) {
      p.status = Status::Unknown;
      for (const std::string& b : bad) p.problems.push_back("netlist uses cell " + b);
      p.reason = "the netlist uses library cells that have no model";
      p.seconds = seconds_since(t0);
      return p;
    }
  }
  Miter m;
  try {
    m = build_miter(gold, gate, name);
  } catch (const Error& e) {
    p.status = Status::Unknown;
    p.reason = std::string("the miter could not be built: ") + e.what();
    p.seconds = seconds_since(t0);
    return p;
  }
  fill_stats(p, m);
  if (!m.instances.empty()) p.method += ", submodules as black boxes";
  auto finish = [&](Status s, const std::string& reason) {
    p.status = s;
    p.reason = reason;
    p.seconds = seconds_since(t0);
    return p;
  };

  bool interface_problem = false;
  for (const std::string& pr : m.problems) interface_problem = interface_problem || pr.rfind("port ", 0) == 0;
  if (interface_problem) return finish(Status::NotEquivalent, "the module interfaces differ");
  if (!m.problems.empty())
    return finish(Status::Unknown, "the two sides cannot be put in correspondence (instances or clocks differ)");
  if (m.aig.num_outputs() == 0) {
    p.method += ", structural hashing";
    return finish(Status::Equivalent, "every compared signal is the same function by structural hashing");
  }

  // Random simulation: finds most real differences at once and names them.
  const std::string incomplete =
      m.correspondence_complete() ? "" : " (unmatched registers are free: the difference may be unreachable)";
  {
    uint64_t seed = std::hash<std::string>{}(name) | 1u;
    std::vector<uint64_t> words(m.aig.num_inputs());
    for (int round = 0; round < opt.sim_rounds; ++round) {
      for (uint64_t& w : words) w = splitmix64(seed);
      const std::vector<uint64_t> out = m.aig.simulate(words);
      for (size_t o = 0; o < out.size(); ++o) {
        if (!out[o]) continue;
        const int bit = __builtin_ctzll(out[o]);
        std::vector<bool> values(words.size());
        for (size_t i = 0; i < words.size(); ++i) values[i] = ((words[i] >> bit) & 1u) != 0;
        p.differing = differing_outputs(m.aig, values, 20);
        p.counterexample = describe_inputs(m.aig, values);
        p.method += ", random simulation";
        return finish(m.correspondence_complete() ? Status::NotEquivalent : Status::Unknown,
                      "random simulation found inputs and register values for which " + m.aig.output_name(o) +
                          " differs" + incomplete);
      }
    }
  }

  // The proof. A derived module's name ($paramod\m\P=4'1000) holds characters that yosys-abc's
  // command line and file names do not take: the files get a plain stem.
  std::string stem = name;
  for (char& ch : stem)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') ch = '_';
  p.aig = work / (stem + ".aig");
  p.log = work / (stem + ".abc.log");
  const fs::path cex = work / (stem + ".cex");
  write_file_atomic(p.aig, m.aig.to_aiger());
  fs::remove(cex);
  const std::string script = "read_aiger " + yosys_path(p.aig) + "; " + opt.abc_command + "; write_cex " + yosys_path(cex);
  p.command = "yosys-abc -c \"" + script + "\"";
  p.method += ", yosys-abc " + opt.abc_command;
  const ProcessResult run = run_process({abc, "-c", script}, {work, p.log, opt.proof_timeout_s, {}});
  if (run.timed_out)
    return finish(Status::Unknown, "yosys-abc did not decide within the time limit of " +
                                       std::to_string(static_cast<long long>(opt.proof_timeout_s)) + " s");
  const std::string& out = run.output;
  if (out.find("UNSATISFIABLE") != std::string::npos)
    return finish(Status::Equivalent, "yosys-abc proved that no compared signal can differ (UNSATISFIABLE)");
  if (out.find("SATISFIABLE") != std::string::npos) {
    std::smatch mo;
    std::string which;
    if (std::regex_search(out, mo, std::regex(R"(output = ([0-9]+))"))) {
      const size_t k = std::stoul(mo[1].str());
      if (k < m.aig.num_outputs()) which = m.aig.output_name(k);
    }
    if (fs::exists(cex)) {
      const std::string text = read_file(cex);
      std::string bits;
      for (char c : text) {
        if (c == '0' || c == '1') bits.push_back(c);
        else if (c == '#' || c == '\n') {
          if (!bits.empty()) break;
          if (c == '#') break;
        }
      }
      if (bits.size() == m.aig.num_inputs()) {
        std::vector<bool> values(bits.size());
        for (size_t i = 0; i < bits.size(); ++i) values[i] = bits[i] == '1';
        p.differing = differing_outputs(m.aig, values, 20);
        p.counterexample = describe_inputs(m.aig, values);
        if (p.differing.empty())
          return finish(Status::Unknown, "yosys-abc reported a difference, but its counterexample does not "
                                         "reproduce in the miter (log " + p.log.string() + ")");
      }
    }
    return finish(m.correspondence_complete() ? Status::NotEquivalent : Status::Unknown,
                  "yosys-abc found inputs and register values for which " + (which.empty() ? "an output" : which) +
                      " differs (SATISFIABLE)" + incomplete);
  }
  if (run.exit_code != 0)
    return finish(Status::Unknown, "yosys-abc failed (exit code " + std::to_string(run.exit_code) + "): " +
                                       tail_lines(out, 3));
  return finish(Status::Unknown, "yosys-abc gave no answer (undecided): " + tail_lines(out, 2));
}

}  // namespace

EquivResult run_equivalence(const EquivOptions& opt) {
  const auto t_total = std::chrono::steady_clock::now();
  auto progress = [&](const std::string& s) {
    if (opt.progress) opt.progress(s);
  };
  EquivResult r;
  r.top = opt.top;
  if (opt.top.empty()) throw ConfigError("--top", "(empty)", "name the top module");
  if (!(opt.proof_timeout_s > 0)) throw ConfigError("--timeout", std::to_string(opt.proof_timeout_s), "must be positive");
  const std::string yosys = find_program("yosys", "yosys");
  const std::string abc = find_program("yosys-abc", "yosys");

  std::vector<fs::path> rtl = opt.rtl_files;
  if (!opt.rtl_dir.empty()) {
    const std::vector<fs::path> in_dir = ppa::rtl_files_in(opt.rtl_dir);
    rtl.insert(rtl.end(), in_dir.begin(), in_dir.end());
  }
  if (rtl.empty()) throw ConfigError("--rtl", "(none)", "give a folder of Verilog or generator options");
  for (const fs::path& f : rtl)
    if (!fs::exists(f)) throw FileError(f.string(), "RTL file does not exist");
  // Only the files the top needs, as `kaleido synth` reads them: Yosys names cells from one counter
  // over everything it reads, so unrelated modules change ABC's input order and hence the netlist,
  // and a proof that took 0.2 s could then run past its time limit (the 2x2 array's PE did).
  rtl = ppa::rtl_files_for_top(rtl, opt.top);
  for (const fs::path& f : rtl) r.rtl_files.push_back(fs::absolute(f).string());
  std::vector<fs::path> libs = opt.liberty;
  if (libs.empty()) libs.push_back(generic_liberty());
  for (const fs::path& l : libs)
    if (!fs::exists(l)) throw FileError(l.string(), "Liberty file does not exist");
  if (!opt.netlist.empty() && !fs::exists(opt.netlist)) throw FileError(opt.netlist.string(), "netlist does not exist");
  if (opt.out_dir.empty()) throw ConfigError("--out", "(empty)", "name an output folder");

  const fs::path out = fs::absolute(opt.out_dir).lexically_normal();
  const fs::path work = choose_work_dir(out);
  fs::create_directories(out);
  fs::create_directories(work);
  r.work_dir = work;

  // Library: model for the cell models, prepared file for synthesis.
  std::vector<ppa::LibFile> parsed;
  for (const fs::path& l : libs) {
    parsed.push_back(ppa::parse_liberty_file(l));
    r.liberty_sources.push_back(fs::absolute(l).string());
  }
  r.library_name = parsed.front().library.name();
  const ppa::LibFile merged = ppa::merge_liberty(parsed, ppa::default_dont_use(r.library_name));
  const ppa::Library lib = ppa::library_from_files({merged});
  ppa::CellModelOptions model_opt;
  model_opt.latches = false;
  const ppa::CellModels models = ppa::cell_models(lib, model_opt);
  for (const auto& [cell, why] : models.unmodelled) r.unmodelled_cells.push_back(cell + ": " + why);
  const fs::path models_v = work / "cell_models.v";
  write_file_atomic(models_v, models.verilog);

  // Netlist: given, or synthesised with the PPA flow's Yosys script.
  fs::path netlist = opt.netlist;
  if (netlist.empty()) {
    progress("synthesising " + opt.top + " onto " + lib.name + " (Yosys) ...");
    const fs::path prepared = work / (lib.name + ".prepared.lib");
    write_file_atomic(prepared, ppa::liberty_text(merged));
    const ppa::LibCell& buffer = ppa::pick_driving_buffer(lib);
    double buf_cap = 0;
    for (const ppa::LibPin& pin : buffer.pins)
      if (pin.direction == ppa::PinDirection::Input) buf_cap = pin.load_f();
    ppa::YosysJob job;
    job.rtl_files = rtl;
    if (!opt.rtl_dir.empty()) job.include_dirs.push_back(opt.rtl_dir);
    job.top = opt.top;
    job.liberty = prepared;
    job.period_ps = opt.clock_period_ns * 1000.0;
    job.abc_driving_cell = buffer.name;
    job.abc_load_ff = 4.0 * buf_cap * 1e15;
    job.blackbox_patterns = opt.blackbox_patterns;
    job.recipe = opt.synth_recipe;
    job.work_dir = work / "synth";
    const ppa::YosysResult yr = ppa::run_yosys(job);
    r.yosys_synthesis_s = yr.seconds;
    r.synthesis_log = yr.log;
    netlist = yr.netlist_v;
    r.netlist_synthesised = true;
    progress("  netlist " + netlist.string() + " (" + std::to_string(static_cast<int>(yr.seconds + 0.5)) + " s)");
  }
  r.netlist = fs::absolute(netlist).string();

  // Reference side.
  progress("reference: Yosys coarse synthesis of the RTL (synth -run begin:fine) ...");
  std::string read_rtl;
  std::string incdir = opt.rtl_dir.empty() ? "" : " -I" + yosys_path(opt.rtl_dir);
  bool any_blackbox = false;
  for (const fs::path& f : rtl) {
    read_rtl += "read_verilog -sv" + incdir + " " + yosys_path(f) + "\n";
    for (const std::string& mod : module_names_in(read_file(f)))
      any_blackbox = any_blackbox || matches_any(opt.blackbox_patterns, mod);
  }
  std::string blackbox;
  if (any_blackbox) {
    blackbox = "blackbox";
    for (const std::string& p : opt.blackbox_patterns) blackbox += " " + p;
  }
  const fs::path gold_json = work / "reference.json";
  const fs::path gold_ys = work / "reference.ys";
  write_file_atomic(gold_ys, "# Written by kaleido " + version() + " from scripts/equiv/reference.ys.in\n" +
                                 ppa::fill_template(read_template("scripts/equiv/reference.ys.in"),
                                                    {{"READ_RTL", read_rtl},
                                                     {"TOP", opt.top},
                                                     {"BLACKBOX", blackbox},
                                                     {"JSON", yosys_path(gold_json)}},
                                                    "reference.ys.in"));
  r.reference_log = work / "reference.log";
  r.yosys_reference_s =
      run_yosys_script(yosys, gold_ys, r.reference_log, work, opt.yosys_timeout_s, "on the RTL (reference side)");
  const JsonDesign gold = read_yosys_json(gold_json);

  // Netlist side: black boxes the netlist does not define get stubs from the reference.
  progress("netlist: cells replaced by their Liberty models ...");
  const std::string netlist_text = read_file(netlist);
  const std::vector<std::string> netlist_modules = module_names_in(netlist_text);
  if (netlist_modules.empty()) throw FileError(netlist.string(), "contains no Verilog module");
  if (std::find(netlist_modules.begin(), netlist_modules.end(), opt.top) == netlist_modules.end())
    throw FileError(netlist.string(), "does not define the top module " + opt.top);
  std::string stubs;
  for (const auto& [name, mod] : gold.modules)
    if (mod.blackbox && std::find(netlist_modules.begin(), netlist_modules.end(), name) == netlist_modules.end())
      stubs += stub_verilog(mod);
  std::string read_stubs;
  if (!stubs.empty()) {
    const fs::path stubs_v = work / "blackbox_stubs.v";
    write_file_atomic(stubs_v, "// Ports of the black boxes, from the reference side.\n" + stubs);
    read_stubs = "read_verilog -lib " + yosys_path(stubs_v);
  }
  const fs::path gate_json = work / "netlist.json";
  const fs::path gate_ys = work / "netlist.ys";
  write_file_atomic(gate_ys, "# Written by kaleido " + version() + " from scripts/equiv/netlist.ys.in\n" +
                                 ppa::fill_template(read_template("scripts/equiv/netlist.ys.in"),
                                                    {{"NETLIST", yosys_path(netlist)},
                                                     {"CELL_MODELS", yosys_path(models_v)},
                                                     {"READ_STUBS", read_stubs},
                                                     {"TOP", opt.top},
                                                     {"JSON", yosys_path(gate_json)}},
                                                    "netlist.ys.in"));
  r.netlist_log = work / "netlist.log";
  r.yosys_netlist_s = run_yosys_script(yosys, gate_ys, r.netlist_log, work, opt.yosys_timeout_s,
                                       "reading the netlist " + netlist.string());
  const JsonDesign gate = read_yosys_json(gate_json);

  // Proofs, submodules first.
  std::vector<std::string> order = modules_bottom_up(gold, opt.top);
  if (order.empty()) throw Error("module " + opt.top + " has no logic to compare (a black box?)");
  if (!opt.modules.empty()) {
    for (const std::string& want : opt.modules)
      if (std::find(order.begin(), order.end(), want) == order.end()) {
        std::string list;
        for (const std::string& o : order) list += (list.empty() ? "" : ", ") + o;
        throw ConfigError("--modules", want, "is not a module below " + opt.top + " (modules: " + list + ")");
      }
    order.erase(std::remove_if(order.begin(), order.end(),
                               [&](const std::string& n) {
                                 return std::find(opt.modules.begin(), opt.modules.end(), n) == opt.modules.end();
                               }),
                order.end());
  }
  for (const std::string& name : order) {
    progress("proving " + name + " ...");
    ProofResult p = prove_module(gold, gate, name, models.unmodelled, opt, abc, work);
    progress(fmt::format("  {:<20} {:<15} {:7.1f} s  ({} compared, {}/{} registers matched)", name,
                         status_text(p.status), p.seconds, p.compared, p.matched_registers, p.gold_registers));
    if (p.status != Status::Equivalent) progress("    " + p.reason);
    r.proofs.push_back(std::move(p));
  }
  r.total_s = seconds_since(t_total);
  if (opt.write_reports) {
    r.json_report = out / "equiv.json";
    r.md_report = out / "equiv.md";
    write_file_atomic(r.json_report, result_json(r).dump(2) + "\n");
    write_file_atomic(r.md_report, result_markdown(r));
  }
  return r;
}

nlohmann::json result_json(const EquivResult& r) {
  nlohmann::json j;
  j["tool"] = "kaleido equiv";
  j["version"] = version();
  j["top"] = r.top;
  j["rtl_files"] = r.rtl_files;
  j["liberty"] = r.liberty_sources;
  j["library"] = r.library_name;
  j["netlist"] = r.netlist;
  j["netlist_synthesised_here"] = r.netlist_synthesised;
  j["reference"] = "Yosys 'synth -run begin:fine' of the RTL (coarse-grained; alumacc, wreduce, fsm, ... trusted)";
  j["method"] =
      "per module: registers cut into shared inputs (matched by net name) and compared next states; submodule "
      "instances cut at their ports (matched by instance name); black boxes (SRAMs) not compared inside; "
      "random simulation, then yosys-abc on the combinational miter";
  j["all_equivalent"] = r.all_equivalent();
  j["summary"] = {{"equivalent", r.count(Status::Equivalent)},
                  {"not_equivalent", r.count(Status::NotEquivalent)},
                  {"unknown", r.count(Status::Unknown)}};
  j["times_s"] = {{"synthesis", r.yosys_synthesis_s},
                  {"yosys_reference", r.yosys_reference_s},
                  {"yosys_netlist", r.yosys_netlist_s},
                  {"total", r.total_s}};
  j["work_dir"] = r.work_dir.string();
  j["logs"] = {{"synthesis", r.synthesis_log.string()},
               {"reference", r.reference_log.string()},
               {"netlist", r.netlist_log.string()}};
  nlohmann::json proofs = nlohmann::json::array();
  for (const ProofResult& p : r.proofs) {
    nlohmann::json q;
    q["module"] = p.module;
    q["kind"] = p.kind;
    q["method"] = p.method;
    q["status"] = p.status == Status::Equivalent ? "equivalent"
                  : p.status == Status::NotEquivalent ? "not_equivalent"
                                                      : "unknown";
    q["reason"] = p.reason;
    q["seconds"] = p.seconds;
    q["aig"] = p.aig.string();
    q["log"] = p.log.string();
    q["command"] = p.command;
    q["compared"] = p.compared;
    q["structurally_equal"] = p.structurally_equal;
    q["miter"] = {{"inputs", p.miter_inputs}, {"outputs", p.miter_outputs}, {"ands", p.miter_ands}};
    q["registers"] = {{"reference", p.gold_registers},
                      {"netlist", p.gate_registers},
                      {"matched_classes", p.matched_registers},
                      {"constant_on_one_side", p.constant_registers},
                      {"paired_by_position", p.registers_paired_by_position},
                      {"unmatched_reference", p.unmatched_gold},
                      {"unmatched_netlist", p.unmatched_gate}};
    q["instances"] = p.instances;
    q["problems"] = p.problems;
    q["undefined_bits_read_as_0"] = {{"reference", p.gold_undefined_bits}, {"netlist", p.gate_undefined_bits}};
    if (!p.differing.empty()) {
      q["counterexample"]["differing"] = p.differing;
      nlohmann::json in = nlohmann::json::object();
      for (const auto& [n, v] : p.counterexample) in[n] = v;
      q["counterexample"]["values"] = in;
    }
    proofs.push_back(q);
  }
  j["proofs"] = proofs;
  j["unmodelled_cells"] = r.unmodelled_cells;
  return j;
}

std::string result_markdown(const EquivResult& r) {
  std::ostringstream o;
  o << "# Equivalence: " << r.top << "\n\n";
  o << "kaleido " << version() << ". Netlist `" << r.netlist << "`"
    << (r.netlist_synthesised ? " (synthesised here)" : " (given)") << " on library " << r.library_name
    << ", against Yosys's coarse-grained result of the RTL (`synth -run begin:fine`). Method: "
    << "docs/equivalence.md.\n\n";
  o << "**" << (r.all_equivalent() ? "All modules equivalent." : "NOT all modules proven equivalent.") << "** "
    << r.count(Status::Equivalent) << " equivalent, " << r.count(Status::NotEquivalent) << " not equivalent, "
    << r.count(Status::Unknown) << " unknown.\n\n";
  markdown::Table table(
      {"module", "kind", "status", "time (s)", "compared", "registers matched", "miter ANDs", "method"});
  for (const ProofResult& p : r.proofs)
    table.add_row({p.module, p.kind, status_text(p.status), fixed(p.seconds, 2), std::to_string(p.compared),
                   fmt::format("{} of {} / {}{}", p.matched_registers, p.gold_registers, p.gate_registers,
                               p.registers_paired_by_position
                                   ? fmt::format(" ({} by position)", p.registers_paired_by_position)
                                   : std::string()),
                   std::to_string(p.miter_ands), p.method});
  o << table.render() << "\n";
  o << fmt::format("Yosys: synthesis {:.1f} s, reference {:.1f} s, netlist {:.1f} s; total {:.1f} s.\n\n",
                   r.yosys_synthesis_s, r.yosys_reference_s, r.yosys_netlist_s, r.total_s);
  for (const ProofResult& p : r.proofs) {
    if (p.status == Status::Equivalent && p.unmatched_gold.empty() && p.unmatched_gate.empty()) continue;
    o << "## " << p.module << ": " << status_text(p.status) << "\n\n" << p.reason << "\n\n";
    for (const std::string& pr : p.problems) o << "- " << pr << "\n";
    if (!p.unmatched_gold.empty()) o << "- registers only in the reference: " << p.unmatched_gold.size() << "\n";
    if (!p.unmatched_gate.empty()) o << "- registers only in the netlist: " << p.unmatched_gate.size() << "\n";
    if (!p.differing.empty()) {
      o << "- differing: ";
      for (size_t i = 0; i < p.differing.size(); ++i) o << (i ? ", " : "") << "`" << p.differing[i] << "`";
      o << "\n";
    }
    if (!p.log.empty()) o << "- log: `" << p.log.string() << "`\n";
    o << "\n";
  }
  return o.str();
}

}  // namespace kaleido::equiv
