// OpenSTA (Debian `sta`) timing and vectorless power of a mapped netlist,
// from the template scripts/sta/sta.tcl.in, with the reports parsed.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ppa/liberty.hpp"

namespace kaleido::ppa {

struct StaJob {
  std::filesystem::path liberty;  // one (merged) file
  std::vector<std::filesystem::path> extra_liberty;  // e.g. the SRAM timing views
  std::filesystem::path netlist_v;
  std::filesystem::path sdc;
  std::string top;
  double activity = 0.1;          // transitions per clock cycle, every non-clock net
  LibUnits units;                 // of the library: report times come in its time unit
  std::filesystem::path work_dir;
  bool instance_power = false;    // also report power of every leaf instance (debug)
  int endpoints = 0;              // also list this many worst setup endpoints (0: none)
};

// One timing endpoint of `report_checks -format end`: a flop's data pin, a macro's input, an output.
struct EndpointSlack {
  std::string pin;  // OpenSTA's hierarchical pin name, "/" separated
  double required_ns = 0, arrival_ns = 0, slack_ns = 0;
};

struct CriticalPath {
  std::string startpoint, endpoint, path_group;
  double arrival_ns = 0;   // data arrival time at the endpoint = path delay from the launching clock edge
  double required_ns = 0;
  double slack_ns = 0;
};

struct StaPower {
  double internal_w = 0, switching_w = 0, leakage_w = 0, total_w = 0;
  double sequential_w = 0, combinational_w = 0, macro_w = 0;
};

struct StaResult {
  std::filesystem::path script, log;
  double seconds = 0;
  bool constrained = false;    // false when no timing path was found
  double worst_slack_ns = 0;   // unclamped worst setup-type slack (report_worst_slack)
  double wns_ns = 0;           // min(0, worst slack) (report_wns)
  double tns_ns = 0;           // report_tns
  CriticalPath path;
  StaPower power;
  std::string version;
  std::vector<EndpointSlack> endpoints;  // StaJob::endpoints worst ones, worst first
};

// Runs OpenSTA; throws Error with the reported errors, or naming the Debian
// package when `sta` is missing.
StaResult run_sta(const StaJob& job);

// Parsers of OpenSTA report text (exposed for tests).
CriticalPath parse_worst_path(const std::string& report_checks_text, double ns_per_unit, bool* found);
StaPower parse_power_report(const std::string& text);
std::vector<EndpointSlack> parse_endpoints(const std::string& report_checks_end_text, double ns_per_unit);

}  // namespace kaleido::ppa
