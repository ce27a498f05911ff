#include "ppa/power_model.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>

#include "common/error.hpp"

namespace kaleido::ppa {

const char* convention_name(InternalPowerConvention c) {
  return c == InternalPowerConvention::PerTransition
             ? "per-transition (kaleido): energy per output transition = sensitivity-weighted arc energy"
             : "OpenSTA 2019 (sum over arcs of (rise+fall energy) x duty x activity)";
}

namespace {

bool is_check(const std::string& timing_type) {
  for (const char* k : {"setup", "hold", "recovery", "removal", "skew", "min_pulse", "minimum_period", "nochange",
                        "non_seq"})
    if (timing_type.find(k) != std::string::npos) return true;
  return false;
}

double when_probability(const std::string& when) {
  if (when.empty()) return 1.0;
  return BoolFunction::parse(when).probability_one();
}

}  // namespace

PowerModel::PowerModel(const FlatNetlist& n, const Library& lib, const PowerSetup& setup)
    : n_(n), lib_(lib), setup_(setup) {
  if (!(setup.period_s > 0)) throw ConfigError("clock period", std::to_string(setup.period_s), "must be positive");
  if (!(lib.voltage_v > 0))
    throw Error("library " + lib.name + " gives no supply voltage (operating_conditions, nom_voltage or voltage_map)");
  const size_t nn = static_cast<size_t>(n.num_nets);
  cap_.assign(nn, 0.0);
  slew_.assign(nn, 0.0);
  clock_.assign(nn, 0);
  driver_cell_.assign(nn, -1);
  port_driven_.assign(nn, 0);
  std::vector<int> fanout(nn, 0);

  for (size_t ci = 0; ci < n.cells.size(); ++ci) {
    const NetlistCell& c = n.cells[ci];
    for (size_t p = 0; p < c.cell->pins.size(); ++p) {
      const int net = c.pin_net[p];
      if (net < 0) continue;
      const LibPin& pin = c.cell->pins[p];
      if (pin.direction == PinDirection::Input) {
        cap_[static_cast<size_t>(net)] += pin.load_f();
        ++fanout[static_cast<size_t>(net)];
      } else if (pin.direction == PinDirection::Output || pin.direction == PinDirection::Inout) {
        driver_cell_[static_cast<size_t>(net)] = static_cast<int>(ci);
      }
    }
  }
  macro_driven_.assign(nn, 0);
  for (const NetlistBlackBox& b : n.blackboxes) {
    for (const auto& [name, nets] : b.inputs)
      for (int net : nets) {
        if (net < 2) continue;
        const bool clk = name.find("clk") != std::string::npos || name.find("clock") != std::string::npos;
        const double c = clk ? setup.macro_clock_pin_cap_f : setup.macro_pin_cap_f;
        if (c <= 0) continue;  // no timing view: the pin adds nothing (as OpenSTA's black boxes)
        cap_[static_cast<size_t>(net)] += c;
        ++fanout[static_cast<size_t>(net)];
      }
    for (const auto& [name, nets] : b.outputs)
      for (int net : nets)
        if (net >= 2 && setup.macro_pin_cap_f > 0) macro_driven_[static_cast<size_t>(net)] = 1;
  }
  std::vector<uint8_t> has_set_load(nn, 0);
  for (const NetlistPort& p : n.ports) {
    for (int net : p.nets) {
      if (net < 2) continue;
      if (p.input) {
        port_driven_[static_cast<size_t>(net)] = 1;
      } else {
        cap_[static_cast<size_t>(net)] += setup.output_load_f;
        ++fanout[static_cast<size_t>(net)];
        if (setup.output_load_f > 0) has_set_load[static_cast<size_t>(net)] = 1;
      }
    }
  }
  // A net whose load the SDC sets at an output port gets no wire-load
  // estimate (what OpenSTA does); every other net does.
  if (const WireLoadModel* wl = lib.wire_load())
    for (size_t net = 2; net < nn; ++net)
      if (!has_set_load[net]) cap_[net] += wl->wire_cap_f(fanout[net]);

  // Clock nets: the clock port and what buffers or inverters make of it.
  if (const NetlistPort* cp = n.port(setup.clock_port)) {
    std::vector<int> work;
    for (int net : cp->nets)
      if (net >= 2) {
        clock_[static_cast<size_t>(net)] = 1;
        work.push_back(net);
      }
    std::vector<std::vector<int>> readers(nn);
    for (size_t ci = 0; ci < n.cells.size(); ++ci)
      for (size_t p = 0; p < n.cells[ci].pin_net.size(); ++p)
        if (n.cells[ci].pin_net[p] >= 0 && n.cells[ci].cell->pins[p].direction == PinDirection::Input)
          readers[static_cast<size_t>(n.cells[ci].pin_net[p])].push_back(static_cast<int>(ci));
    while (!work.empty()) {
      const int net = work.back();
      work.pop_back();
      for (int ci : readers[static_cast<size_t>(net)]) {
        const NetlistCell& c = n.cells[static_cast<size_t>(ci)];
        if (c.cell->is_sequential()) continue;
        int n_in = 0;
        for (const LibPin& p : c.cell->pins) n_in += p.direction == PinDirection::Input;
        if (n_in != 1) continue;
        for (size_t p = 0; p < c.pin_net.size(); ++p) {
          const int out = c.pin_net[p];
          if (out >= 2 && c.cell->pins[p].direction == PinDirection::Output && !clock_[static_cast<size_t>(out)]) {
            clock_[static_cast<size_t>(out)] = 1;
            work.push_back(out);
          }
        }
      }
    }
  }

  // Constant nets: outputs of combinational cells whose function does not
  // depend on the inputs that are not constant (worklist from the tie-offs).
  constant_.assign(nn, 0);
  const_value_.assign(nn, 0);
  constant_[kNet0] = constant_[kNet1] = 1;
  const_value_[kNet1] = 1;
  {
    std::vector<std::vector<int>> readers(nn);
    for (size_t ci = 0; ci < n.cells.size(); ++ci)
      for (size_t p = 0; p < n.cells[ci].pin_net.size(); ++p)
        if (n.cells[ci].pin_net[p] >= 0 && n.cells[ci].cell->pins[p].direction == PinDirection::Input)
          readers[static_cast<size_t>(n.cells[ci].pin_net[p])].push_back(static_cast<int>(ci));
    std::vector<int> work{kNet0, kNet1};
    std::vector<uint8_t> queued(n.cells.size(), 0);
    while (!work.empty()) {
      const int net = work.back();
      work.pop_back();
      for (int ci : readers[static_cast<size_t>(net)]) {
        const NetlistCell& c = n.cells[static_cast<size_t>(ci)];
        if (c.cell->is_sequential()) continue;
        for (size_t p = 0; p < c.pin_net.size(); ++p) {
          const int out = c.pin_net[p];
          const LibPin& op = c.cell->pins[p];
          if (out < 2 || op.direction != PinDirection::Output || constant_[static_cast<size_t>(out)] ||
              op.function.empty())
            continue;
          const BoolFunction f = BoolFunction::parse(op.function);
          const std::vector<std::string>& vars = f.variables();
          if (vars.size() > 16) continue;
          // Fixed inputs take their value; the function must agree over all free ones.
          uint64_t fixed_mask = 0, fixed_val = 0;
          bool unknown = false;
          for (size_t v = 0; v < vars.size(); ++v) {
            const int pi = c.cell->pin_index(vars[v]);
            const int in = pi >= 0 ? c.pin_net[static_cast<size_t>(pi)] : -1;
            if (in < 0) {
              unknown = true;
              continue;
            }
            if (!constant_[static_cast<size_t>(in)]) continue;
            fixed_mask |= uint64_t{1} << v;
            // A constant net's value: 1 only for the tie-high net or nets fixed to 1.
            if (in == kNet1 || const_value_[static_cast<size_t>(in)]) fixed_val |= uint64_t{1} << v;
          }
          if (unknown || fixed_mask == 0) continue;
          int first = -1;
          bool invariant = true;
          for (uint64_t a = 0; a < (uint64_t{1} << vars.size()) && invariant; ++a) {
            if ((a & fixed_mask) != fixed_val) continue;
            const int v = f.eval(a) ? 1 : 0;
            if (first < 0) first = v;
            else if (v != first) invariant = false;
          }
          if (!invariant || first < 0) continue;
          constant_[static_cast<size_t>(out)] = 1;
          const_value_[static_cast<size_t>(out)] = static_cast<uint8_t>(first);
          work.push_back(out);
        }
      }
    }
  }

  // Slews: driven inputs from the driving cell, cell outputs from their arcs.
  const LibCell* drive = setup.driving_cell.empty() ? nullptr : lib.cell(setup.driving_cell);
  if (!setup.driving_cell.empty() && !drive)
    throw Error("driving cell " + setup.driving_cell + " is not in library " + lib.name);
  // A pin's slew: the worst rise and the worst fall transition over its
  // timing arcs (as STA keeps them), averaged. Clear/preset arcs are left out:
  // STA tools disable them by default, so they shape no slew.
  auto usable = [](const TimingGroup& t) {
    return !is_check(t.timing_type) && t.timing_type != "clear" && t.timing_type != "preset";
  };
  auto pin_slew = [&](const LibPin& out, const std::function<double(const TimingGroup&)>& in_slew, double load) {
    double rise = -1, fall = -1;
    for (const TimingGroup& t : out.timing) {
      if (!usable(t)) continue;
      const double s = in_slew(t);
      if (!t.rise_transition.empty()) rise = std::max(rise, t.rise_transition.lookup(s, load));
      if (!t.fall_transition.empty()) fall = std::max(fall, t.fall_transition.lookup(s, load));
    }
    if (rise < 0 && fall < 0) return 0.0;
    if (rise < 0) return fall;
    if (fall < 0) return rise;
    return 0.5 * (rise + fall);
  };
  const LibPin* drive_out = nullptr;
  if (drive)
    for (const LibPin& p : drive->pins)
      if (p.direction == PinDirection::Output) drive_out = &p;
  for (int pass = 0; pass < 3; ++pass) {
    std::vector<double> next(nn, 0.0);
    for (size_t net = 2; net < nn; ++net) {
      if (clock_[net] && port_driven_[net]) continue;  // ideal clock: zero slew
      if (port_driven_[net]) {
        if (drive_out) next[net] = pin_slew(*drive_out, [](const TimingGroup&) { return 0.0; }, cap_[net]);
        continue;
      }
      if (macro_driven_[net]) {
        next[net] = setup.macro_output_slew_s;
        continue;
      }
      const int ci = driver_cell_[net];
      if (ci < 0) continue;
      const NetlistCell& c = n.cells[static_cast<size_t>(ci)];
      for (size_t p = 0; p < c.pin_net.size(); ++p) {
        if (c.pin_net[p] != static_cast<int>(net)) continue;
        auto in_slew = [&](const TimingGroup& t) {
          const int rel = c.cell->pin_index(t.related_pin);
          const int rel_net = rel >= 0 ? c.pin_net[static_cast<size_t>(rel)] : -1;
          return rel_net >= 0 ? slew_[static_cast<size_t>(rel_net)] : 0.0;
        };
        next[net] = std::max(next[net], pin_slew(c.cell->pins[p], in_slew, cap_[net]));
      }
    }
    slew_ = next;
  }

  // Internal power groups, per cell pin, with their weights.
  for (size_t ci = 0; ci < n.cells.size(); ++ci) {
    const NetlistCell& c = n.cells[ci];
    for (size_t p = 0; p < c.cell->pins.size(); ++p) {
      const LibPin& pin = c.cell->pins[p];
      const int net = c.pin_net[p];
      if (pin.power.empty() || net < 0) continue;
      PinPower pp;
      pp.cell = static_cast<int>(ci);
      pp.net = net;
      pp.output = pin.direction == PinDirection::Output || pin.direction == PinDirection::Inout;
      BoolFunction func;
      if (pp.output && !pin.function.empty()) func = BoolFunction::parse(pin.function);
      for (const InternalPowerGroup& g : pin.power) {
        Arc a;
        a.group = &g;
        a.ground = c.cell->is_ground_pg(g.related_pg_pin);
        if (a.ground) {
          // OpenSTA 2019 keeps a ground group only when it has a `when` and the
          // pin's related-pin-less groups of that supply do not cover every state.
          int count = 0;
          size_t vars = 0;
          for (const InternalPowerGroup& h : pin.power)
            if (h.related_pin.empty() && h.related_pg_pin == g.related_pg_pin && !h.when.empty()) {
              ++count;
              vars = BoolFunction::parse(h.when).variables().size();
            }
          a.opensta_counts = !g.when.empty() && count != (1 << vars);
        }
        const int rel = g.related_pin.empty() ? static_cast<int>(p) : c.cell->pin_index(g.related_pin);
        if (rel < 0) continue;
        a.related_net = c.pin_net[static_cast<size_t>(rel)];
        const LibPin& rel_pin = c.cell->pins[static_cast<size_t>(rel)];
        const bool rel_clock = rel_pin.is_clock || (a.related_net >= 0 && clock_[static_cast<size_t>(a.related_net)]);
        if (pp.output && static_cast<size_t>(rel) != p) {
          const double s = func.empty() ? 0.0 : func.sensitivity(rel_pin.name);
          a.sensitivity = s > 0 ? s : (rel_clock ? 1.0 : 0.0);
        } else {
          a.sensitivity = when_probability(g.when);
        }
        // OpenSTA 2019: inferred when from the function, else `when`, else clock 1, else 0.5.
        BoolFunction inferred;
        if (pp.output && g.when.empty() && !func.empty() && static_cast<size_t>(rel) != p &&
            func.opensta_inferred_when(rel_pin.name, inferred))
          a.duty = inferred.independent_probability();
        else if (!g.when.empty())
          a.duty = BoolFunction::parse(g.when).independent_probability();
        else
          a.duty = rel_clock ? 1.0 : 0.5;
        pp.arcs.push_back(a);
      }
      if (!pp.arcs.empty()) pins_.push_back(std::move(pp));
    }
  }
}

NetActivity PowerModel::uniform_activity(double activity) const {
  if (!(activity >= 0) || !std::isfinite(activity))
    throw ConfigError("activity", std::to_string(activity), "must be a non-negative number of transitions per cycle");
  NetActivity a;
  const size_t nn = static_cast<size_t>(n_.num_nets);
  a.toggles_per_cycle.assign(nn, activity);
  a.rise_fraction.assign(nn, 0.5);
  for (size_t net = 0; net < nn; ++net) {
    if (constant_[net]) a.toggles_per_cycle[net] = 0;
    else if (clock_[net]) a.toggles_per_cycle[net] = 2.0;
  }
  std::ostringstream s;
  s << "uniform activity " << activity
    << " transitions per cycle on every net, clock nets 2, constant nets 0 (vectorless)";
  a.source = s.str();
  return a;
}

NetActivity PowerModel::simulated_activity(const ToggleCounts& t) const {
  if (t.toggles.size() != static_cast<size_t>(n_.num_nets)) throw Error("toggle counts do not match the netlist");
  if (t.cycles == 0) throw Error("no simulated cycles");
  NetActivity a;
  const size_t nn = t.toggles.size();
  a.toggles_per_cycle.resize(nn);
  a.rise_fraction.resize(nn);
  for (size_t net = 0; net < nn; ++net) {
    a.toggles_per_cycle[net] = static_cast<double>(t.toggles[net]) / static_cast<double>(t.cycles);
    a.rise_fraction[net] =
        t.toggles[net] ? static_cast<double>(t.rises[net]) / static_cast<double>(t.toggles[net]) : 0.5;
  }
  a.source = "gate-level simulation of the mapped netlist (Verilator, zero delay), " + std::to_string(t.cycles) +
             " cycles; stimulus: " + t.stimulus;
  return a;
}

PowerBreakdown PowerModel::evaluate(const NetActivity& act, InternalPowerConvention conv,
                                    std::vector<double>* per_cell, std::vector<double>* macro_net) const {
  const size_t nn = static_cast<size_t>(n_.num_nets);
  if (act.toggles_per_cycle.size() != nn) throw Error("activity does not match the netlist");
  PowerBreakdown r;
  r.activity_source = act.source;
  r.convention = convention_name(conv);
  const double v2 = lib_.voltage_v * lib_.voltage_v;
  const double f = 1.0 / setup_.period_s;
  std::vector<double> seq(n_.cells.size(), 0.0);  // internal + switching + leakage per cell
  if (macro_net) macro_net->assign(nn, 0.0);

  for (size_t net = 2; net < nn; ++net) {
    const double p = 0.5 * cap_[net] * v2 * act.toggles_per_cycle[net] * f;
    if (driver_cell_[net] >= 0) {
      r.switching_w += p;
      seq[static_cast<size_t>(driver_cell_[net])] += p;
    } else if (macro_driven_[net]) {
      r.switching_w += p;
      r.macro_output_switching_w += p;
      if (macro_net) (*macro_net)[net] = p;
    } else if (port_driven_[net]) {
      r.input_net_switching_w += p;
    }
  }
  for (size_t ci = 0; ci < n_.cells.size(); ++ci) {
    const LibCell& cell = *n_.cells[ci].cell;
    const double l = conv == InternalPowerConvention::OpenSta2019 ? cell.leakage_opensta2019_w() : cell.leakage_w();
    r.leakage_w += l;
    seq[ci] += l;
  }
  for (const PinPower& pp : pins_) {
    const double pin_rate = act.toggles_per_cycle[static_cast<size_t>(pp.net)] * f;  // transitions per second
    const double rise = act.rise_fraction[static_cast<size_t>(pp.net)];
    const double load = pp.output ? cap_[static_cast<size_t>(pp.net)] : 0.0;
    double p = 0;
    if (conv == InternalPowerConvention::OpenSta2019) {
      for (const Arc& a : pp.arcs) {
        if (!a.opensta_counts) continue;
        const double s = a.related_net >= 0 ? slew_[static_cast<size_t>(a.related_net)] : 0.0;
        const double e = a.group->rise.lookup(s, load) + a.group->fall.lookup(s, load);
        p += a.duty * e * pin_rate;
      }
    } else if (pp.output) {
      // Weights: sensitivity x toggles of the related input (sensitivity alone if none toggled).
      double wsum = 0, er = 0, ef = 0;
      for (int pass = 0; pass < 2 && wsum <= 0; ++pass) {
        er = ef = wsum = 0;
        for (const Arc& a : pp.arcs) {
          if (a.ground) continue;
          const double t = a.related_net >= 0 ? act.toggles_per_cycle[static_cast<size_t>(a.related_net)] : 0.0;
          const double w = pass == 0 ? a.sensitivity * t : a.sensitivity;
          if (w <= 0) continue;
          const double s = a.related_net >= 0 ? slew_[static_cast<size_t>(a.related_net)] : 0.0;
          er += w * a.group->rise.lookup(s, load);
          ef += w * a.group->fall.lookup(s, load);
          wsum += w;
        }
      }
      if (wsum > 0) p = pin_rate * (rise * er + (1.0 - rise) * ef) / wsum;
    } else {
      const double s = slew_[static_cast<size_t>(pp.net)];
      double er = 0, ef = 0;
      for (const Arc& a : pp.arcs) {
        if (a.ground) continue;
        er += a.sensitivity * a.group->rise.lookup(s, 0.0);
        ef += a.sensitivity * a.group->fall.lookup(s, 0.0);
      }
      p = pin_rate * (rise * er + (1.0 - rise) * ef);
    }
    r.internal_w += p;
    seq[static_cast<size_t>(pp.cell)] += p;
  }
  for (size_t ci = 0; ci < n_.cells.size(); ++ci)
    (n_.cells[ci].cell->is_sequential() ? r.sequential_w : r.combinational_w) += seq[ci];
  if (per_cell) *per_cell = seq;
  return r;
}

}  // namespace kaleido::ppa
