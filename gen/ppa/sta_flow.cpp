#include "ppa/sta_flow.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <regex>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/version.hpp"
#include "ppa/tools.hpp"
#include "ppa/yosys_flow.hpp"

namespace kaleido::ppa {

namespace fs = std::filesystem;

namespace {

std::string section(const std::string& text, const std::string& name) {
  const std::string tag = "KALEIDO_SECTION " + name + "\n";
  const size_t a = text.find(tag);
  if (a == std::string::npos) return "";
  const size_t b = text.find("KALEIDO_SECTION", a + tag.size());
  return text.substr(a + tag.size(), b == std::string::npos ? std::string::npos : b - a - tag.size());
}

double to_double(const std::string& s) {
  if (s == "INF" || s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-INF" || s == "-inf") return -std::numeric_limits<double>::infinity();
  return std::stod(s);
}

std::string tcl_path(const fs::path& p) {
  const std::string s = fs::absolute(p).lexically_normal().string();
  if (s.find_first_of(" \t\"{}[]$") != std::string::npos)
    throw Error("path `" + s + "` contains characters the OpenSTA Tcl script cannot take; move it");
  return s;
}

}  // namespace

CriticalPath parse_worst_path(const std::string& text, double ns_per_unit, bool* found) {
  // report_checks prints one path per path group; keep the smallest slack.
  CriticalPath best;
  bool any = false;
  std::istringstream in(text);
  CriticalPath cur;
  bool arrival_seen = false, required_seen = false;
  const std::regex start_re(R"(^Startpoint: (\S+))"), end_re(R"(^Endpoint: (\S+))"), group_re(R"(^Path Group: (\S+))");
  const std::regex value_re(R"(^\s*(-?[0-9.eE+-]+)\s+data (arrival|required) time)");
  const std::regex slack_re(R"(^\s*(-?[0-9.eE+-]+|-?INF)\s+slack \()");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, start_re)) {
      cur = CriticalPath();
      cur.startpoint = m[1];
      arrival_seen = required_seen = false;
    } else if (std::regex_search(line, m, end_re)) {
      cur.endpoint = m[1];
    } else if (std::regex_search(line, m, group_re)) {
      cur.path_group = m[1];
    } else if (std::regex_search(line, m, value_re)) {
      const double v = to_double(m[1]) * ns_per_unit;
      if (m[2] == "arrival" && !arrival_seen) {
        cur.arrival_ns = v;
        arrival_seen = true;
      } else if (m[2] == "required" && !required_seen) {
        cur.required_ns = v;
        required_seen = true;
      }
    } else if (std::regex_search(line, m, slack_re)) {
      cur.slack_ns = to_double(m[1]) * ns_per_unit;
      if (!any || cur.slack_ns < best.slack_ns) best = cur;
      any = true;
    }
  }
  if (found) *found = any;
  return best;
}

StaPower parse_power_report(const std::string& text) {
  StaPower p;
  std::istringstream in(text);
  const std::regex row_re(R"(^(Sequential|Combinational|Macro|Pad|Total)\s+([-0-9.eE+]+)\s+([-0-9.eE+]+)\s+([-0-9.eE+]+)\s+([-0-9.eE+]+))");
  bool total = false;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, row_re)) continue;
    const double t = std::stod(m[5]);
    if (m[1] == "Total") {
      p.internal_w = std::stod(m[2]);
      p.switching_w = std::stod(m[3]);
      p.leakage_w = std::stod(m[4]);
      p.total_w = t;
      total = true;
    } else if (m[1] == "Sequential") {
      p.sequential_w = t;
    } else if (m[1] == "Combinational") {
      p.combinational_w = t;
    } else if (m[1] == "Macro") {
      p.macro_w = t;
    }
  }
  if (!total) throw Error("OpenSTA report_power printed no Total row");
  return p;
}

std::vector<EndpointSlack> parse_endpoints(const std::string& text, double ns_per_unit) {
  // "<pin> (<cell or macro>)  <required> <actual> <slack> (VIOLATED|MET)"; output ports have no cell.
  std::vector<EndpointSlack> v;
  std::istringstream in(text);
  const std::regex row_re(
      R"(^(\S+)(?:\s+\(\S+\))?\s+(-?[0-9.eE+-]+|-?INF)\s+(-?[0-9.eE+-]+|-?INF)\s+(-?[0-9.eE+-]+|-?INF)\s+\((VIOLATED|MET)\))");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, row_re)) continue;
    v.push_back({m[1], to_double(m[2]) * ns_per_unit, to_double(m[3]) * ns_per_unit, to_double(m[4]) * ns_per_unit});
  }
  std::stable_sort(v.begin(), v.end(), [](const EndpointSlack& a, const EndpointSlack& b) { return a.slack_ns < b.slack_ns; });
  return v;
}

StaResult run_sta(const StaJob& job) {
  const std::string sta = find_tool("sta", "opensta");
  if (!(job.activity >= 0)) throw ConfigError("activity", std::to_string(job.activity), "must be >= 0");
  fs::create_directories(job.work_dir);
  const fs::path work = fs::absolute(job.work_dir);
  StaResult r;
  r.script = work / "sta.tcl";
  r.log = work / "sta.log";
  std::ostringstream act;
  act << job.activity;
  const fs::path tmpl = fs::path(source_dir()) / "scripts/sta/sta.tcl.in";
  if (!fs::exists(tmpl)) throw FileError(tmpl.string(), "OpenSTA script template is missing (KALEIDO_SOURCE_DIR wrong?)");
  std::string extra = job.instance_power ? "puts \"KALEIDO_SECTION instances\"\n"
                                           "report_power -instances [get_cells -hierarchical *] -digits 8\n"
                                         : "";
  if (job.endpoints > 0)
    extra += "puts \"KALEIDO_SECTION endpoints\"\nreport_checks -path_delay max -digits 6 -group_count " +
             std::to_string(job.endpoints) + " -endpoint_count 1 -format end\n";
  std::string read_libs = "read_liberty " + tcl_path(job.liberty);
  for (const fs::path& l : job.extra_liberty) read_libs += "\nread_liberty " + tcl_path(l);
  const std::string script =
      "# Written by kaleido " + version() + " from scripts/sta/sta.tcl.in\n" +
      fill_template(read_file(tmpl),
                    {{"READ_LIBERTY", read_libs},
                     {"NETLIST", tcl_path(job.netlist_v)},
                     {"TOP", job.top},
                     {"SDC", tcl_path(job.sdc)},
                     {"ACTIVITY", act.str()},
                     {"EXTRA", extra}},
                    "sta.tcl.in");
  write_file_atomic(r.script, script);
  const ToolRun run = run_tool({sta, "-no_splash", "-exit", r.script.string()}, work, r.log);
  r.seconds = run.seconds;
  const std::string& out = run.output;
  std::string errors;
  {
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("Error", 0) == 0) errors += "  " + line + "\n";
  }
  if (run.exit_code != 0 || !errors.empty() || out.find("KALEIDO_SECTION end") == std::string::npos)
    throw Error("OpenSTA failed (exit code " + std::to_string(run.exit_code) + ") on " + job.netlist_v.string() +
                "; log " + r.log.string() + "\n" + (errors.empty() ? tail_lines(out, 15) : errors));

  const double ns_per_unit = job.units.time_s / 1e-9;
  bool found = false;
  r.path = parse_worst_path(section(out, "checks"), ns_per_unit, &found);
  const std::string slack = section(out, "slack");
  std::smatch m;
  const std::regex ws_re(R"(worst slack (\S+))"), wns_re(R"(wns (\S+))"), tns_re(R"(tns (\S+))");
  if (std::regex_search(slack, m, ws_re)) r.worst_slack_ns = to_double(m[1]) * ns_per_unit;
  if (std::regex_search(slack, m, wns_re)) r.wns_ns = to_double(m[1]) * ns_per_unit;
  if (std::regex_search(slack, m, tns_re)) r.tns_ns = to_double(m[1]) * ns_per_unit;
  r.constrained = found && std::isfinite(r.worst_slack_ns);
  r.power = parse_power_report(section(out, "power"));
  if (job.endpoints > 0) r.endpoints = parse_endpoints(section(out, "endpoints"), ns_per_unit);
  return r;
}

}  // namespace kaleido::ppa
