#include "ppa/synth.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <regex>
#include <sstream>
#include <thread>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "common/markdown.hpp"
#include "common/parallel.hpp"
#include "common/version.hpp"
#include "ppa/gatelevel_sim.hpp"
#include "ppa/liberty.hpp"
#include "ppa/netlist.hpp"
#include "ppa/sdc.hpp"
#include "ppa/sram_liberty.hpp"
#include "ppa/tools.hpp"
#include "ppa/yosys_flow.hpp"

namespace kaleido::ppa {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<std::string> default_dont_use(const std::string& library_name) {
  if (library_name.rfind("sky130_fd_sc", 0) == 0) return {"*__lpflow_*", "*__probe_*", "*__probec_*"};
  return {};
}

double fmax_mhz(double period_ns, double worst_slack_ns) {
  check_period(period_ns);
  const double min_period = period_ns - worst_slack_ns;
  if (!(min_period > 0)) return std::numeric_limits<double>::infinity();
  return 1000.0 / min_period;
}

namespace {

// Setup endpoints OpenSTA lists for the report's "worst registers": every endpoint of the largest
// designs here (about 26,000 in the 16x16 kld_top), for a third of a second of OpenSTA's time.
constexpr int kEndpointsListed = 40000;
// Register groups the Markdown report shows (the JSON has every group).
constexpr size_t kRegisterRowsShown = 12;

class Stopwatch {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - t_).count();
    t_ = now;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point t_ = std::chrono::steady_clock::now();
};

std::string lib_label(const SynthResult& r) {
  std::string files;
  for (const std::string& s : r.liberty_sources) files += (files.empty() ? "" : ", ") + fs::path(s).filename().string();
  return r.library_name + " (" + files + ")";
}

// out/work, unless `out` lies in the repository outside its ignored build and
// output folders: then a temp folder, so that merged PDK Liberty files are
// never written into the source tree.
fs::path choose_work_dir(const SynthOptions& opt, const fs::path& out) {
  if (!opt.work_dir.empty()) return fs::absolute(opt.work_dir);
  if (in_tracked_tree(out.string()))
    return fs::temp_directory_path() / ("kaleido_synth_" + opt.top + "_" + std::to_string(::getpid()));
  return out / "work";
}

}  // namespace

SynthResult run_synthesis_flow(const SynthOptions& opt) {
  Stopwatch total, step;
  SynthResult r;
  // Records a step's time and reports it (synthesis of a large array takes minutes).
  const auto step_done = [&](const std::string& name, double seconds) {
    r.times.push_back({name, seconds});
    if (opt.progress && name != "total") opt.progress(name + " done (" + fixed(seconds, 1) + " s)");
  };
  check_period(opt.clock_period_ns);
  if (opt.top.empty()) throw ConfigError("--top", "(empty)", "name the top module");
  if (opt.out_dir.empty()) throw ConfigError("--out", "(empty)", "name an output folder");
  if (!(opt.vectorless_activity >= 0)) throw ConfigError("activity", sig(opt.vectorless_activity, 4), "must be >= 0");
  // Missing tools fail before any work.
  if (!opt.sdc_only) find_tool("yosys", "yosys");
  if (opt.run_sta && !opt.sdc_only) find_tool("sta", "opensta");

  std::vector<fs::path> rtl = opt.rtl_files;
  if (!opt.rtl_dir.empty()) {
    const std::vector<fs::path> in_dir = rtl_files_in(opt.rtl_dir);
    rtl.insert(rtl.end(), in_dir.begin(), in_dir.end());
  }
  if (rtl.empty()) throw ConfigError("--rtl", "(none)", "give a folder or files of Verilog");
  rtl = rtl_files_for_top(rtl, opt.top);
  for (const fs::path& f : rtl) r.rtl_files.push_back(fs::absolute(f).string());
  r.rtl_hash = rtl_content_hash(rtl);
  std::vector<fs::path> libs = opt.liberty;
  if (libs.empty()) libs.push_back(generic_liberty());
  for (const fs::path& l : libs)
    if (!fs::exists(l)) throw FileError(l.string(), "Liberty file does not exist");

  const fs::path out = fs::absolute(opt.out_dir).lexically_normal();
  const fs::path work = choose_work_dir(opt, out);
  fs::create_directories(out);
  fs::create_directories(work);
  r.work_dir = work;
  r.top = opt.top;
  r.flattened = opt.flatten;
  r.recipe = synth_recipe(opt.recipe).name;  // refused before any tool runs
  r.clock_period_ns = opt.clock_period_ns;
  r.vectorless_activity = opt.vectorless_activity;

  // 1. Library: model, and one prepared file for the tools (merged, dont_use marked).
  // Parsed once; the model is built from the merged tree the tools will read.
  std::vector<LibFile> parsed;
  for (const fs::path& l : libs) {
    parsed.push_back(parse_liberty_file(l));
    r.liberty_sources.push_back(fs::absolute(l).string());
  }
  r.library_name = parsed.front().library.name();
  r.dont_use = default_dont_use(r.library_name);
  r.dont_use.insert(r.dont_use.end(), opt.dont_use.begin(), opt.dont_use.end());
  const LibFile merged = merge_liberty(parsed, r.dont_use);
  r.warnings.insert(r.warnings.end(), merged.warnings.begin(), merged.warnings.end());
  const Library lib = library_from_files({merged});
  const fs::path prepared = work / (lib.name + ".prepared.lib");
  write_file_atomic(prepared, liberty_text(merged));
  r.prepared_liberty = prepared.string();
  r.voltage_v = lib.voltage_v;
  const LibCell& buffer = pick_driving_buffer(lib);
  r.driving_cell = buffer.name;
  double buf_cap = 0;
  for (const LibPin& p : buffer.pins)
    if (p.direction == PinDirection::Input) buf_cap = p.load_f();
  r.output_load_f = 4.0 * buf_cap;  // an FO4-like load on every output
  step_done("liberty", step.lap());
  const std::string config = opt.config_name.empty() ? opt.top : opt.config_name;
  auto make_spec = [&](bool has_clock, bool has_reset) {
    SdcSpec sdc;
    sdc.design = opt.top;
    sdc.clock_port = opt.clock_port;
    sdc.clock_port_exists = has_clock;
    sdc.reset_port = has_reset ? opt.reset_port : "";
    sdc.period_ns = opt.clock_period_ns;
    sdc.input_delay_ns = opt.input_delay_ns;
    sdc.output_delay_ns = opt.output_delay_ns;
    sdc.driving_cell = buffer.name;
    sdc.driving_pin = output_pin_name(buffer);
    sdc.output_load_f = r.output_load_f;
    sdc.units = lib.units;
    sdc.library_name = lib.name;
    return sdc;
  };
  auto write_constraints = [&](const SdcSpec& sdc) {
    const fs::path sdc_path = out / (config + ".sdc");
    write_sdc(sdc, sdc_path);
    if (!opt.sdc_dir.empty()) {
      fs::create_directories(opt.sdc_dir);
      write_sdc(sdc, opt.sdc_dir / (config + ".sdc"));
    }
    r.sdc = sdc_path.string();
  };
  if (opt.sdc_only) {
    // Ports from the top module's declaration, without synthesis.
    bool has_clock = false, has_reset = false;
    for (const fs::path& f : rtl) {
      const std::string text = read_file(f);
      const std::regex mod_re("\\bmodule\\s+" + opt.top + "\\b");
      std::smatch m;
      if (!std::regex_search(text, m, mod_re)) continue;
      const std::string body = text.substr(static_cast<size_t>(m.position(0)));
      const size_t end = body.find("endmodule");
      const std::string decl = body.substr(0, end);
      has_clock = has_clock || std::regex_search(decl, std::regex("\\b" + opt.clock_port + "\\b"));
      has_reset = has_reset || (!opt.reset_port.empty() &&
                                std::regex_search(decl, std::regex("\\b" + opt.reset_port + "\\b")));
    }
    write_constraints(make_spec(has_clock, has_reset));
    step_done("total", total.lap());
    return r;
  }

  // 2. Synthesis.
  YosysJob yj;
  yj.rtl_files = rtl;
  if (!opt.rtl_dir.empty()) yj.include_dirs.push_back(opt.rtl_dir);
  yj.top = opt.top;
  yj.liberty = prepared;
  yj.period_ps = opt.clock_period_ns * 1000.0;
  yj.abc_driving_cell = buffer.name;
  yj.abc_load_ff = r.output_load_f * 1e15;
  yj.blackbox_patterns = opt.sram_patterns;
  yj.flatten = opt.flatten;
  yj.recipe = opt.recipe;
  yj.macro_pin_outputs = opt.macro_pin_outputs;
  // An ABC output carries the output load; a macro pin, an inverter's input (sram_liberty.hpp).
  yj.macro_pins_per_output =
      std::max(1, static_cast<int>(std::lround(r.output_load_f / sram_technology(lib).inv_cap_f)));
  yj.work_dir = work;
  if (opt.progress) opt.progress("yosys: synthesising " + opt.top + " (minutes for large arrays) ...");
  const YosysResult yr = run_yosys(yj);
  if (opt.macro_pin_outputs) r.macro_pin_buffers = yr.macro_pin_buffers;
  r.macro_pins_per_output = yj.macro_pins_per_output;
  step_done("yosys", yr.seconds);
  step.lap();
  r.yosys_log = yr.log;
  r.yosys_module_area = yr.stat_module_area;
  r.yosys_top_area = yr.stat_top_area;
  r.sram_shapes = yr.srams;
  r.netlist_v = out / (opt.top + ".mapped.v");
  r.netlist_json = out / (opt.top + ".mapped.json");
  fs::copy_file(yr.netlist_v, r.netlist_v, fs::copy_options::overwrite_existing);
  fs::copy_file(yr.netlist_json, r.netlist_json, fs::copy_options::overwrite_existing);

  // 3. Netlist: hierarchy, area, cells.
  const json design = json::parse(read_file(yr.netlist_json));
  const FlatNetlist net = flatten_yosys_json(design, opt.top, lib);
  r.modules = module_areas(net);
  for (const HierNode& h : net.nodes) {
    InstanceArea ia;
    ia.path = h.path;
    ia.module = h.module;
    ia.area_um2 = h.area;
    ia.own_area_um2 = h.own_area;
    ia.cells = h.cells;
    for (int p = h.parent; p >= 0; p = net.nodes[static_cast<size_t>(p)].parent) ++ia.depth;
    r.instances.push_back(ia);
  }
  r.logic_area_um2 = net.nodes.front().area;
  for (const NetlistCell& c : net.cells) {
    ++r.cell_counts[c.cell->name];
    ++r.cells;
    if (c.cell->is_sequential()) ++r.sequential_cells;
  }
  step_done("netlist", step.lap());

  // 4. SRAM macros.
  if (!net.blackboxes.empty()) r.sram_tech = sram_technology(lib);
  for (const NetlistBlackBox& b : net.blackboxes) {
    SramReport s;
    s.instance = b.path;
    s.module = b.module;
    const SramShape* shape = nullptr;
    for (const SramShape& sh : yr.srams)
      if (sh.module == b.module) shape = &sh;
    if (!shape)
      throw Error("black box " + b.path + " (module " + b.module +
                  ") is not an SRAM the flow recognised; only modules matching the SRAM patterns may stay unmapped");
    s.cost = sram_cost(shape->words, shape->bits, r.sram_tech, shape->address_ports);
    s.shape_source = shape->how;
    r.sram_area_um2 += s.cost.area_um2;
    r.srams.push_back(s);
  }

  // SRAM timing views, so that OpenSTA times paths through the memories.
  fs::path sram_lib;
  SramTiming sram_t;
  if (!r.srams.empty()) {
    std::vector<SramMacroView> views;
    for (const NetlistBlackBox& b : net.blackboxes) {
      bool known = false;
      for (const SramMacroView& v : views) known = known || v.module == b.module;
      if (known) continue;
      SramMacroView v;
      v.module = b.module;
      for (const auto& [name, nets] : b.inputs) v.ports.push_back({name, true, static_cast<int>(nets.size())});
      for (const auto& [name, nets] : b.outputs) v.ports.push_back({name, false, static_cast<int>(nets.size())});
      for (const SramShape& sh : yr.srams)
        if (sh.module == b.module) v.shape = sh;
      for (const SramReport& s : r.srams)
        if (s.module == b.module) v.cost = s.cost;
      views.push_back(v);
    }
    sram_lib = work / (opt.top + ".srams.lib");
    write_file_atomic(sram_lib, sram_liberty(lib, views));
    sram_t = sram_timing(r.srams.front().cost, lib);
    for (SramReport& s : r.srams) s.access_time_ns = sram_timing(s.cost, lib).access_s * 1e9;
  }

  // 5. SDC.
  write_constraints(make_spec(net.port(opt.clock_port) != nullptr,
                              !opt.reset_port.empty() && net.port(opt.reset_port) != nullptr));
  const fs::path sdc_path = r.sdc;

  // 6. OpenSTA.
  PowerSetup ps;
  ps.period_s = opt.clock_period_ns * 1e-9;
  ps.output_load_f = r.output_load_f;
  ps.driving_cell = buffer.name;
  ps.clock_port = opt.clock_port;
  if (!r.srams.empty()) {
    ps.macro_pin_cap_f = sram_t.pin_cap_f;
    ps.macro_clock_pin_cap_f = sram_t.clock_pin_cap_f;
    ps.macro_output_slew_s = sram_t.transition_s;
  }
  if (opt.run_sta) {
    StaJob sj;
    sj.liberty = prepared;
    if (!sram_lib.empty()) sj.extra_liberty.push_back(sram_lib);
    // OpenSTA reads our own structural netlist (one-bit assigns only).
    const fs::path sta_netlist = work / (opt.top + ".sta.v");
    write_file_atomic(sta_netlist, sta_verilog(design, opt.top, lib));
    sj.netlist_v = sta_netlist;
    r.sta_netlist_v = sta_netlist;
    sj.sdc = sdc_path;
    sj.top = opt.top;
    sj.activity = opt.vectorless_activity;
    sj.units = lib.units;
    sj.work_dir = work;
    sj.endpoints = kEndpointsListed;
    r.sta = run_sta(sj);
    r.sta_log = r.sta.log;
    step_done("opensta", r.sta.seconds);
    step.lap();
    r.timed = r.sta.constrained;
    r.fmax_mhz = r.timed ? fmax_mhz(opt.clock_period_ns, r.sta.worst_slack_ns) : 0.0;
    if (r.timed) {
      r.critical_from = describe_timing_point(net, r.sta.path.startpoint);
      r.critical_to = describe_timing_point(net, r.sta.path.endpoint);
      r.worst_registers = group_endpoints(net, r.sta.endpoints);
    }
    r.has_opensta_power = true;
    r.opensta_power = r.sta.power;
  }

  // 7. Our power model: uniform activity (both conventions).
  const PowerModel pm(net, lib, ps);
  const NetActivity uni = pm.uniform_activity(opt.vectorless_activity);
  r.vectorless.logic = pm.evaluate(uni, InternalPowerConvention::PerTransition);
  r.vectorless_opensta_convention = pm.evaluate(uni, InternalPowerConvention::OpenSta2019);
  const double f = 1.0 / ps.period_s;
  // SRAMs without simulation: one access per cycle at the uniform activity's
  // rate would be arbitrary; the vectorless figure assumes `activity` accesses per cycle.
  for (SramReport& s : r.srams)
    r.vectorless.sram_w += s.cost.leakage_w + s.cost.access_energy_j() * opt.vectorless_activity * f;
  r.vectorless.sram_source = "kaleido SRAM model, " + sig(opt.vectorless_activity, 4) +
                             " accesses per cycle assumed (the vectorless activity)";
  step_done("power model", step.lap());

  // 8. Activity-based power from gate-level simulations.
  // Toggles -> logic power, SRAM accesses -> SRAM power (annotating the SRAM rows of the report
  // only for the main stimulus). A counted window is either a replay of its own or a window of an
  // earlier replay of the same stimulus object that covers it (snapshots of the counts at both
  // ends). Replays of different stimulus objects run at once; those of one object in turn (a
  // stimulus may keep state, e.g. a random one).
  struct Replay {
    Stimulus* stimulus;
    SimOptions so;
    ToggleCounts toggles;
  };
  struct Counted {
    std::string name;  // "" = the main stimulus
    size_t replay = 0;
    int window = -1;  // index into the replay's windows; -1: the replay's own counted cycles
  };
  std::vector<Replay> replays;
  std::vector<Counted> counted;
  auto count = [&](const std::string& name, Stimulus& stimulus, uint64_t warmup, uint64_t cycles) {
    for (size_t i = 0; i < replays.size(); ++i) {
      SimOptions& so = replays[i].so;
      if (replays[i].stimulus != &stimulus || warmup < so.warmup || warmup + cycles > so.warmup + so.cycles) continue;
      so.windows.emplace_back(warmup, warmup + cycles);
      counted.push_back({name, i, static_cast<int>(so.windows.size()) - 1});
      return;
    }
    SimOptions so;
    so.clock_port = opt.clock_port;
    so.cycles = cycles;
    so.warmup = warmup;
    replays.push_back({&stimulus, so, {}});
    counted.push_back({name, replays.size() - 1, -1});
  };
  if (opt.stimulus) count("", *opt.stimulus, opt.sim_warmup, opt.sim_cycles);
  for (const NamedStimulus& ns : opt.extra_stimuli)
    count(ns.name, *ns.stimulus, ns.warmup < 0 ? opt.sim_warmup : static_cast<uint64_t>(ns.warmup), ns.cycles);
  if (!replays.empty()) {
    GateLevelOptions go;
    go.clock_port = opt.clock_port;
    go.srams = yr.srams;
    go.work_dir = work / "gatelevel";
    go.progress = opt.progress;
    GateLevelSim gate_level(net, go);
    step_done("gate-level model build (Verilator)", gate_level.build_seconds());
    step.lap();
    std::vector<std::vector<size_t>> by_stimulus;  // replay indices, one list per stimulus object
    for (size_t i = 0; i < replays.size(); ++i) {
      auto same = [&](const std::vector<size_t>& l) { return replays[l.front()].stimulus == replays[i].stimulus; };
      auto it = std::find_if(by_stimulus.begin(), by_stimulus.end(), same);
      if (it == by_stimulus.end()) by_stimulus.push_back({i});
      else it->push_back(i);
      if (opt.progress)
        opt.progress("gate-level replay of " + std::to_string(replays[i].so.cycles) + " cycles (" +
                     replays[i].stimulus->describe() + "), " + std::to_string(replays[i].so.windows.size()) +
                     " further window(s) counted in it ...");
    }
    const int jobs = opt.replay_jobs > 0 ? opt.replay_jobs : static_cast<int>(std::thread::hardware_concurrency());
    parallel_for(static_cast<int64_t>(by_stimulus.size()), jobs, 1, [&](int64_t b, int64_t e) {
      for (int64_t g = b; g < e; ++g)
        for (size_t i : by_stimulus[static_cast<size_t>(g)]) replays[i].toggles = gate_level.run(*replays[i].stimulus, replays[i].so);
    });
    step_done("gate-level replays (" + std::to_string(replays.size()) + ", " +
                  std::to_string(std::min<size_t>(by_stimulus.size(), static_cast<size_t>(std::max(1, jobs)))) +
                  " at once; " + std::to_string(counted.size() - replays.size()) + " window(s) inside them)",
              step.lap());
  }
  // The block of every hierarchy node: its ancestor directly below the top (0: the top itself).
  std::vector<int> block_of_node(net.nodes.size(), 0);
  for (size_t i = 1; i < net.nodes.size(); ++i) {
    int b = static_cast<int>(i);
    while (net.nodes[static_cast<size_t>(b)].parent > 0) b = net.nodes[static_cast<size_t>(b)].parent;
    block_of_node[i] = b;
  }
  std::map<std::string, int> block_of_macro;  // SRAM instance path -> block node
  for (const NetlistBlackBox& bb : net.blackboxes) block_of_macro[bb.path] = block_of_node[static_cast<size_t>(bb.node)];
  const auto power_of = [&](const ToggleCounts& toggles, bool annotate_srams) {
    PowerReport p;
    std::vector<double> per_cell, macro_net;
    p.logic = pm.evaluate(pm.simulated_activity(toggles), InternalPowerConvention::PerTransition, &per_cell,
                          &macro_net);
    // Blocks in hierarchy order, the top first; each gets its cells, its memories and their output nets.
    std::vector<int> slot(net.nodes.size(), -1);
    const auto block = [&](int node) -> BlockPower& {
      const int b = block_of_node[static_cast<size_t>(node)];
      if (slot[static_cast<size_t>(b)] < 0) {
        slot[static_cast<size_t>(b)] = static_cast<int>(p.blocks.size());
        p.blocks.push_back({net.nodes[static_cast<size_t>(b)].path, net.nodes[static_cast<size_t>(b)].module});
      }
      return p.blocks[static_cast<size_t>(slot[static_cast<size_t>(b)])];
    };
    block(0);
    for (size_t i = 1; i < net.nodes.size(); ++i)
      if (net.nodes[i].parent == 0) block(static_cast<int>(i));
    for (size_t ci = 0; ci < net.cells.size(); ++ci) {
      BlockPower& bp = block(net.cells[ci].node);
      bp.logic_w += per_cell[ci];
      bp.leakage_w += net.cells[ci].cell->leakage_w();
    }
    for (const NetlistBlackBox& bb : net.blackboxes)
      for (const auto& port : bb.outputs)
        for (int n : port.second)
          if (n >= 0) block(bb.node).sram_w += macro_net[static_cast<size_t>(n)];
    for (SramReport& s : r.srams) {
      for (const SramAccessCount& a : toggles.srams) {
        if (a.path != s.instance) continue;
        const double cyc = static_cast<double>(toggles.cycles);
        const double reads = static_cast<double>(a.reads) / cyc, writes = static_cast<double>(a.writes) / cyc;
        const double w = s.cost.leakage_w + (reads * s.cost.read_energy_j + writes * s.cost.write_energy_j) * f;
        p.sram_w += w;
        p.sram_leakage_w += s.cost.leakage_w;
        const auto it = block_of_macro.find(s.instance);
        if (it == block_of_macro.end()) throw InternalError("SRAM " + s.instance + " is not in the netlist");
        BlockPower& bp = block(it->second);
        bp.sram_w += w;
        bp.leakage_w += s.cost.leakage_w;
        if (!annotate_srams) continue;
        s.reads_per_cycle = reads;
        s.writes_per_cycle = writes;
        s.power_w = w;
        s.activity_source = a.modelled ? "simulated accesses (" + a.ports + ")"
                                       : "ports not recognised, SRAM not simulated: 0 accesses (" + a.ports + ")";
      }
    }
    p.sram_source = "kaleido SRAM model, accesses counted in the gate-level simulation";
    return p;
  };
  for (const Counted& c : counted) {
    const Replay& rp = replays[c.replay];
    const ToggleCounts& toggles = c.window < 0 ? rp.toggles : rp.toggles.windows.at(static_cast<size_t>(c.window));
    if (c.name.empty()) {
      r.toggles = toggles;
      r.activity = power_of(toggles, true);
      r.has_activity_power = true;
      continue;
    }
    ActivityRun run;
    run.name = c.name;
    run.power = power_of(toggles, false);
    run.cycles = toggles.cycles;
    run.stimulus = toggles.stimulus;
    run.srams = toggles.srams;
    r.extra_activity.push_back(run);
  }
  step_done("activity power", step.lap());
  step_done("total", total.lap());

  if (opt.write_reports) {
    r.json_report = out / "synth.json";
    r.md_report = out / "synth.md";
    write_file_atomic(r.json_report, result_json(r).dump(2) + "\n");
    write_file_atomic(r.md_report, result_markdown(r));
  }
  return r;
}

// ---------------------------------------------------------------- reports

namespace {

json metric(double value, const std::string& unit, const std::string& source) {
  json m = {{"unit", unit}, {"source", source}};
  if (std::isfinite(value)) m["value"] = value;
  else m["value"] = nullptr;
  return m;
}

}  // namespace

json blocks_json(const std::vector<BlockPower>& blocks) {
  json out = json::array();
  for (const BlockPower& b : blocks)
    out.push_back({{"block", b.block.empty() ? "(top)" : b.block},
                   {"module", b.module},
                   {"logic_w", b.logic_w},
                   {"sram_w", b.sram_w},
                   {"leakage_w", b.leakage_w}});
  return out;
}

namespace {

json breakdown_json(const PowerBreakdown& b) {
  return {{"internal_w", b.internal_w},
          {"switching_w", b.switching_w},
          {"leakage_w", b.leakage_w},
          {"total_w", b.total_w()},
          {"sequential_w", b.sequential_w},
          {"combinational_w", b.combinational_w},
          {"input_net_switching_w", b.input_net_switching_w},
          {"activity_source", b.activity_source},
          {"convention", b.convention}};
}

}  // namespace

json result_json(const SynthResult& r) {
  const std::string lib = lib_label(r);
  const std::string clock = "clock " + sig(r.clock_period_ns, 4) + " ns";
  const std::string area_src = std::string("Yosys 0.23 ") + (r.flattened ? "flat" : "hierarchical") +
                               " synthesis (recipe " + r.recipe + "), cell areas from " + lib;
  json metrics;
  metrics["design__instance__area"] = metric(r.total_area_um2(), "um^2", area_src + " + SRAM model (macros)");
  metrics["design__instance__area__stdcell"] = metric(r.logic_area_um2, "um^2", area_src);
  metrics["design__instance__area__macros"] = metric(r.sram_area_um2, "um^2", sram_model_description());
  metrics["design__instance__count"] =
      metric(static_cast<double>(r.cells + static_cast<int>(r.srams.size())), "", area_src);
  metrics["design__instance__count__stdcell"] = metric(r.cells, "", area_src);
  metrics["design__instance__count__sequential"] = metric(r.sequential_cells, "", area_src);
  metrics["design__instance__count__macros"] = metric(static_cast<double>(r.srams.size()), "", "SRAM black boxes");
  if (r.timed) {
    const std::string sta_src = "OpenSTA (Debian sta 2019) on the mapped netlist, " + lib + ", " + clock + ", SDC " +
                                fs::path(r.sdc).filename().string();
    metrics["timing__setup__ws"] = metric(r.sta.worst_slack_ns, "ns", sta_src + ", report_worst_slack");
    metrics["timing__setup__wns"] = metric(r.sta.wns_ns, "ns", sta_src + ", report_wns");
    metrics["timing__setup__tns"] = metric(r.sta.tns_ns, "ns", sta_src + ", report_tns");
    metrics["timing__fmax"] = metric(r.fmax_mhz, "MHz", "1 / (clock period - timing__setup__ws); " + sta_src);
    metrics["timing__critical_path__delay"] =
        metric(r.sta.path.arrival_ns, "ns", "data arrival time of the worst path; " + sta_src);
  }
  if (r.has_opensta_power) {
    const std::string src = "OpenSTA report_power, vectorless: set_power_activity -global -activity " +
                            sig(r.vectorless_activity, 4) + " -duty 0.5, " + lib + ", " + clock;
    metrics["power__internal__total"] = metric(r.opensta_power.internal_w, "W", src);
    metrics["power__switching__total"] = metric(r.opensta_power.switching_w, "W", src);
    metrics["power__leakage__total"] = metric(r.opensta_power.leakage_w, "W", src);
    metrics["power__total"] = metric(r.opensta_power.total_w, "W", src + "; SRAM macros excluded");
  }
  const std::string model_src = "kaleido power model (gen/ppa/power_model.hpp), " + lib + ", " + clock + "; ";
  metrics["kaleido__power__vectorless__total"] =
      metric(r.vectorless.logic.total_w(), "W", model_src + r.vectorless.logic.activity_source);
  if (r.has_activity_power) {
    metrics["kaleido__power__activity__internal"] =
        metric(r.activity.logic.internal_w, "W", model_src + r.activity.logic.activity_source);
    metrics["kaleido__power__activity__switching"] =
        metric(r.activity.logic.switching_w, "W", model_src + r.activity.logic.activity_source);
    metrics["kaleido__power__activity__leakage"] =
        metric(r.activity.logic.leakage_w, "W", model_src + r.activity.logic.activity_source);
    metrics["kaleido__power__activity__total"] =
        metric(r.activity.logic.total_w(), "W", model_src + r.activity.logic.activity_source);
    metrics["kaleido__power__activity__sram"] = metric(r.activity.sram_w, "W", r.activity.sram_source);
  }
  metrics["kaleido__power__vectorless__sram"] = metric(r.vectorless.sram_w, "W", r.vectorless.sram_source);

  json j;
  j["kaleido_version"] = version();
  j["warnings"] = r.warnings;
  j["design"] = {{"top", r.top},
                 {"rtl_files", r.rtl_files},
                 {"rtl_hash", r.rtl_hash},
                 {"synthesis", r.flattened ? "flat" : "hierarchical"},
                 {"recipe", r.recipe},
                 {"macro_pin_outputs", r.macro_pin_buffers},
                 {"macro_pins_per_output", r.macro_pins_per_output}};
  j["library"] = {{"name", r.library_name},
                  {"sources", r.liberty_sources},
                  {"prepared_file", r.prepared_liberty},
                  {"dont_use", r.dont_use},
                  {"voltage_v", r.voltage_v}};
  j["constraints"] = {{"clock_period_ns", r.clock_period_ns},
                      {"sdc", r.sdc},
                      {"driving_cell", r.driving_cell},
                      {"output_load_f", r.output_load_f}};
  j["metrics"] = metrics;
  json mods = json::array();
  for (const ModuleAreaRow& m : r.modules)
    mods.push_back({{"module", m.module},
                    {"instances", m.instances},
                    {"own_area_um2", m.own_area},
                    {"own_cells", m.own_cells},
                    {"area_per_instance_um2", m.area_per_instance},
                    {"yosys_stat_area_um2", r.yosys_module_area.count(m.module) ? json(r.yosys_module_area.at(m.module))
                                                                                 : json(nullptr)}});
  j["area_by_module"] = mods;
  json insts = json::array();
  for (const InstanceArea& i : r.instances)
    insts.push_back({{"path", i.path.empty() ? "(top)" : i.path},
                     {"module", i.module},
                     {"depth", i.depth},
                     {"area_um2", i.area_um2},
                     {"own_area_um2", i.own_area_um2},
                     {"cells", i.cells}});
  j["area_by_instance"] = insts;
  j["cells"] = r.cell_counts;
  if (r.timed)
    j["critical_path"] = {{"startpoint", r.sta.path.startpoint},
                          {"endpoint", r.sta.path.endpoint},
                          {"path_group", r.sta.path.path_group},
                          {"arrival_ns", r.sta.path.arrival_ns},
                          {"required_ns", r.sta.path.required_ns},
                          {"slack_ns", r.sta.path.slack_ns},
                          {"from", r.critical_from},
                          {"to", r.critical_to}};
  if (r.timed) {
    json groups = json::array();
    for (const EndpointGroup& g : r.worst_registers)
      groups.push_back({{"name", g.name},
                        {"kind", g.kind},
                        {"module", g.module},
                        {"worst_slack_ns", g.worst_slack_ns},
                        {"arrival_ns", g.arrival_ns},
                        {"endpoints", g.endpoints},
                        {"violating", g.violating}});
    j["worst_registers"] = {{"endpoints_listed", r.sta.endpoints.size()}, {"groups", groups}};
  }
  json power;
  if (r.has_opensta_power)
    power["opensta_vectorless"] = {{"internal_w", r.opensta_power.internal_w},
                                   {"switching_w", r.opensta_power.switching_w},
                                   {"leakage_w", r.opensta_power.leakage_w},
                                   {"total_w", r.opensta_power.total_w},
                                   {"activity_source", "set_power_activity -global -activity " +
                                                           sig(r.vectorless_activity, 4) + " -duty 0.5 (OpenSTA)"}};
  power["kaleido_vectorless"] = breakdown_json(r.vectorless.logic);
  power["kaleido_vectorless_opensta_convention"] = breakdown_json(r.vectorless_opensta_convention);
  if (r.has_activity_power) {
    power["kaleido_activity"] = breakdown_json(r.activity.logic);
    power["kaleido_activity"]["by_block"] = blocks_json(r.activity.blocks);
  }
  for (const ActivityRun& a : r.extra_activity) {
    json e = breakdown_json(a.power.logic);
    e["by_block"] = blocks_json(a.power.blocks);
    e["sram_w"] = a.power.sram_w;
    e["sram_source"] = a.power.sram_source;
    e["cycles"] = a.cycles;
    e["stimulus"] = a.stimulus;
    power["kaleido_activity_" + a.name] = e;
  }
  j["power"] = power;
  json srams = json::array();
  for (const SramReport& s : r.srams)
    srams.push_back({{"instance", s.instance},
                     {"module", s.module},
                     {"words", s.cost.words},
                     {"bits", s.cost.bits},
                     {"address_ports", s.cost.ports},
                     {"rows", s.cost.rows},
                     {"columns", s.cost.columns},
                     {"area_um2", s.cost.area_um2},
                     {"read_energy_j", s.cost.read_energy_j},
                     {"write_energy_j", s.cost.write_energy_j},
                     {"leakage_w", s.cost.leakage_w},
                     {"access_time_ns", s.access_time_ns},
                     {"shape_source", s.shape_source},
                     {"reads_per_cycle", s.reads_per_cycle},
                     {"writes_per_cycle", s.writes_per_cycle},
                     {"power_w", s.power_w},
                     {"activity_source", s.activity_source},
                     {"model", sram_model_description()}});
  j["sram"] = srams;
  json times = json::object();
  for (const StepTime& t : r.times) times[t.step] = t.seconds;
  j["run_times_s"] = times;
  j["files"] = {{"work_dir", r.work_dir.string()},
                {"netlist_v", r.netlist_v.string()},
                {"sta_netlist_v", r.sta_netlist_v.string()},
                {"netlist_json", r.netlist_json.string()},
                {"yosys_log", r.yosys_log.string()},
                {"sta_log", r.sta_log.string()}};
  return j;
}

std::string result_markdown(const SynthResult& r) {
  std::ostringstream o;
  o << "# Synthesis report: " << r.top << "\n\n";
  o << "kaleido " << version() << "; library " << lib_label(r) << ", " << sig(r.voltage_v, 4) << " V; clock "
    << sig(r.clock_period_ns, 4) << " ns on the clock port; SDC `" << fs::path(r.sdc).filename().string() << "`.\n";
  o << "Synthesis: " << (r.flattened ? "flat" : "hierarchical") << ", recipe `" << r.recipe << "` ("
    << synth_recipe(r.recipe).summary << ").";
  if (r.macro_pin_buffers > 0)
    o << " Nets into SRAM macros were split into " << r.macro_pin_buffers << " more ABC outputs (one per "
      << r.macro_pins_per_output << " macro pins, the output load's worth), so that ABC sizes and buffers them for "
      << "the macros they feed.";
  else if (r.macro_pin_buffers < 0)
    o << " SRAM macro input pins share one ABC output per net (--no-macro-pin-buffers).";
  o << "\n";
  o << "Values are for relative studies (no placement, no clock tree, wire-load model only).\n\n";
  for (const std::string& w : r.warnings) o << "**Warning:** " << w << "\n\n";
  o << "## Area\n\n";
  const auto right = markdown::Align::Right;
  markdown::Table area({"quantity", {"value", right}, "how"});
  area.add_row({"total", sig(r.total_area_um2(), 6) + " um^2", "logic + SRAM model"});
  area.add_row(
      {"logic (standard cells)", sig(r.logic_area_um2, 6) + " um^2", "Yosys mapped netlist, Liberty cell areas"});
  area.add_row({"SRAM macros", sig(r.sram_area_um2, 6) + " um^2", "kaleido SRAM model"});
  area.add_row({"cells", fmt::format("{} ({} sequential)", r.cells, r.sequential_cells), ""});
  o << area.render() << "\n";
  markdown::Table modules(
      {"module", {"instances", right}, {"area per instance (um^2)", right}, {"own cells area (um^2)", right}});
  for (const ModuleAreaRow& m : r.modules)
    modules.add_row({m.module, std::to_string(m.instances), sig(m.area_per_instance, 6), sig(m.own_area, 6)});
  o << modules.render();
  markdown::Table instances({"instance", "module", {"area (um^2)", right}});
  for (const InstanceArea& i : r.instances)
    instances.add_row({std::string(static_cast<size_t>(i.depth) * 2, ' ') + (i.path.empty() ? "(top)" : i.path),
                       i.module, sig(i.area_um2, 6)});
  o << "\n" << instances.render();
  if (!r.srams.empty()) {
    markdown::Table srams({"SRAM instance", "words x bits, ports", {"area (um^2)", right},
                           {"read / write energy (pJ)", right}, {"leakage (uW)", right}});
    for (const SramReport& s : r.srams)
      srams.add_row({s.instance, fmt::format("{} x {}, {}", s.cost.words, s.cost.bits, s.cost.ports),
                     sig(s.cost.area_um2, 6),
                     sig(s.cost.read_energy_j * 1e12, 4) + " / " + sig(s.cost.write_energy_j * 1e12, 4),
                     sig(s.cost.leakage_w * 1e6, 4)});
    o << "\n" << srams.render();
    o << "\nSRAM model: " << sram_model_description() << "\n";
  }
  if (r.timed) {
    o << "\n## Timing (OpenSTA)\n\n";
    markdown::Table timing({"quantity", {"value", right}});
    timing.add_row({"worst setup slack", sig(r.sta.worst_slack_ns, 4) + " ns"});
    timing.add_row({"WNS / TNS", sig(r.sta.wns_ns, 4) + " / " + sig(r.sta.tns_ns, 4) + " ns"});
    timing.add_row({"Fmax = 1 / (T - slack)", sig(r.fmax_mhz, 4) + " MHz"});
    timing.add_row({"critical path", r.sta.path.startpoint + " (" + r.critical_from + ") -> " + r.sta.path.endpoint +
                                         " (" + r.critical_to + "), arrival " + sig(r.sta.path.arrival_ns, 4) + " ns"});
    o << timing.render();
    if (!r.worst_registers.empty()) {
      o << "\n### Worst endpoints by register\n\nOpenSTA's " << r.sta.endpoints.size()
        << " worst setup endpoints (`report_checks -format end`), grouped by the register each flip-flop holds (the "
           "net its output drives), the SRAM macro input or the output port; the bits of a word and numbered copies "
           "(`*`) are one group. Worst first";
      if (r.worst_registers.size() > kRegisterRowsShown)
        o << ", " << kRegisterRowsShown << " of " << r.worst_registers.size() << " groups (all in synth.json)";
      o << ":\n\n";
      markdown::Table regs({"endpoint group", "kind", "module", {"worst slack (ns)", right}, {"arrival (ns)", right},
                            {"endpoints (violating)", right}});
      for (size_t i = 0; i < r.worst_registers.size() && i < kRegisterRowsShown; ++i) {
        const EndpointGroup& g = r.worst_registers[i];
        regs.add_row({"`" + g.name + "`", g.kind, g.module, sig(g.worst_slack_ns, 4), sig(g.arrival_ns, 4),
                      std::to_string(g.endpoints) + " (" + std::to_string(g.violating) + ")"});
      }
      o << regs.render();
    }
  }
  o << "\n## Power\n\n";
  markdown::Table power({"estimate", {"internal (mW)", right}, {"switching (mW)", right}, {"leakage (mW)", right},
                         {"total (mW)", right}, "activity source"});
  auto row = [&](const std::string& name, double in, double sw, double lk, double tot, const std::string& src) {
    power.add_row({name, sig(in * 1e3, 4), sig(sw * 1e3, 4), sig(lk * 1e3, 4), sig(tot * 1e3, 4), src});
  };
  if (r.has_opensta_power)
    row("OpenSTA vectorless", r.opensta_power.internal_w, r.opensta_power.switching_w, r.opensta_power.leakage_w,
        r.opensta_power.total_w, "-global -activity " + sig(r.vectorless_activity, 4));
  const PowerBreakdown& v = r.vectorless.logic;
  row("kaleido, uniform activity", v.internal_w, v.switching_w, v.leakage_w, v.total_w(), v.activity_source);
  const PowerBreakdown& vo = r.vectorless_opensta_convention;
  row("kaleido, uniform, OpenSTA-2019 convention", vo.internal_w, vo.switching_w, vo.leakage_w, vo.total_w(),
      vo.activity_source);
  if (r.has_activity_power) {
    const PowerBreakdown& a = r.activity.logic;
    row("kaleido, simulated activity", a.internal_w, a.switching_w, a.leakage_w, a.total_w(), a.activity_source);
  }
  o << power.render();
  if (!r.srams.empty()) {
    o << "\nSRAM power: " << sig(r.vectorless.sram_w * 1e3, 4) << " mW (" << r.vectorless.sram_source << ")";
    if (r.has_activity_power) o << "; " << sig(r.activity.sram_w * 1e3, 4) << " mW (" << r.activity.sram_source << ")";
    o << ".\n";
  }
  o << "\nThe OpenSTA-2019 convention row reproduces how this OpenSTA adds internal power (both edges' energy "
       "per transition, arcs summed); the per-transition rows count one edge's energy per transition. See "
       "gen/ppa/power_model.hpp.\n";
  markdown::Table times({"step", {"seconds", right}});
  for (const StepTime& t : r.times) times.add_row({t.step, sig(t.seconds, 3)});
  o << "\n## Run times\n\n" << times.render();
  return o.str();
}

std::string result_summary(const SynthResult& r) {
  // A point by its register when the netlist names it, else by its instance.
  const auto named = [](const std::string& instance, const std::string& name) {
    return name == "unnamed flip-flop" ? instance : name;
  };
  std::ostringstream o;
  o << "kaleido synth: " << r.top << " on " << r.library_name << ", clock " << sig(r.clock_period_ns, 4) << " ns\n";
  for (const std::string& w : r.warnings) o << "  warning     " << w << "\n";
  o << "  area        " << sig(r.total_area_um2(), 6) << " um^2 (logic " << sig(r.logic_area_um2, 6) << ", SRAM "
    << sig(r.sram_area_um2, 6) << "), " << r.cells << " cells (" << r.sequential_cells << " sequential)\n";
  for (const ModuleAreaRow& m : r.modules)
    o << fmt::format("    {:<24}{:>4} x {} um^2\n", m.module, m.instances, sig(m.area_per_instance, 6));
  if (r.timed)
    o << "  timing      worst slack " << sig(r.sta.worst_slack_ns, 4) << " ns, TNS " << sig(r.sta.tns_ns, 4)
      << " ns, Fmax " << sig(r.fmax_mhz, 4) << " MHz; critical path " << named(r.sta.path.startpoint, r.critical_from)
      << " -> " << named(r.sta.path.endpoint, r.critical_to) << " (" << sig(r.sta.path.arrival_ns, 4) << " ns)\n";
  if (r.has_opensta_power)
    o << "  power       OpenSTA vectorless (activity " << sig(r.vectorless_activity, 4) << "): "
      << sig(r.opensta_power.total_w * 1e3, 4) << " mW (internal " << sig(r.opensta_power.internal_w * 1e3, 4)
      << ", switching " << sig(r.opensta_power.switching_w * 1e3, 4) << ", leakage "
      << sig(r.opensta_power.leakage_w * 1e3, 4) << ")\n";
  o << "              kaleido uniform activity: " << sig(r.vectorless.logic.total_w() * 1e3, 4) << " mW (OpenSTA-2019 "
    << "convention " << sig(r.vectorless_opensta_convention.total_w() * 1e3, 4) << " mW)\n";
  if (r.has_activity_power)
    o << "              kaleido simulated activity: " << sig(r.activity.logic.total_w() * 1e3, 4) << " mW ("
      << r.activity.logic.activity_source << ")\n";
  if (!r.srams.empty()) o << "  SRAM        " << r.srams.size() << " macro(s), " << sig(r.sram_area_um2, 6) << " um^2\n";
  double tot = 0;
  for (const StepTime& t : r.times)
    if (t.step == "total") tot = t.seconds;
  o << "  time        " << sig(tot, 3) << " s; reports " << r.json_report.string() << ", " << r.md_report.string()
    << "\n";
  return o.str();
}

}  // namespace kaleido::ppa
