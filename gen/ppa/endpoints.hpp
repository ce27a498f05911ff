// Timing endpoints named by what they belong to. OpenSTA names a flip-flop by its mapped instance
// (`_10772_/D`), which says nothing to a reader; the netlist knows the register it holds (the net
// its output drives, `n_tokens_q[3]`). Grouped by register, the worst endpoints say what limits a
// design and how much of it does.
#pragma once

#include <string>
#include <vector>

#include "ppa/netlist.hpp"
#include "ppa/sta_flow.hpp"

namespace kaleido::ppa {

struct EndpointGroup {
  std::string name;    // register, macro input or output port; bit and instance numbers shown as `*`
  std::string kind;    // "register", "macro input", "output", "input" or "other"
  std::string module;  // the module that holds it
  double worst_slack_ns = 0;
  double arrival_ns = 0;  // of its worst endpoint
  int endpoints = 0;      // of the listed ones
  int violating = 0;      // with negative slack
};

// What an OpenSTA start or end point (an instance, an instance's pin or a port) is, readably: a
// flip-flop as the net its output drives ("_10772_" -> "n_tokens_q[3]"), anything else as named.
std::string describe_timing_point(const FlatNetlist& net, const std::string& point);

// `endpoints` grouped by register, macro port or output port (the bits of a word, and the
// numbered copies of a register or an instance, are one group), worst slack first.
std::vector<EndpointGroup> group_endpoints(const FlatNetlist& net, const std::vector<EndpointSlack>& endpoints);

// "partial_1_5_q[3]" -> "partial_*_*_q", "g_lane[0].u_lane/ahat_src_q[1]" -> "g_lane[*].u_lane/ahat_src_q":
// a trailing bit index dropped and every number that stands alone between separators as `*`.
std::string register_family(const std::string& name);

}  // namespace kaleido::ppa
