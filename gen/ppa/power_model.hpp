// The project's own power model of a mapped netlist, from net activities
// (simulated toggles, or one uniform activity for comparison with OpenSTA's
// vectorless report) and the Liberty file:
//
//   switching = sum over nets driven by cells of 0.5 * C_net * V^2 * toggles/s
//     C_net = sum of the fanout pins' capacitance (max of rise/fall, else
//             `capacitance`) + the library's default wire-load model for the
//             net's fanout; a net driving a top output gets the SDC output
//             load instead of a wire-load estimate (as OpenSTA does with
//             set_load). SRAM macro pins count with the capacitance of their
//             timing views (sram_liberty.hpp), and nets they drive are
//             switched like cell outputs.
//   internal  = per output transition of a cell: its rise_power or fall_power
//             table at (slew of the related input, C_net of the output); per
//             input transition: the input pin's table at that pin's slew.
//   leakage   = cell_leakage_power, else per supply pin the mean of the
//             state-dependent values.
//   Internal-power groups of a ground (0 V) pg pin are left out: they draw no
//   energy from the supply (ASAP7 lists VDD and VSS groups side by side).
//
// Slews: each net's transition is the worst over its driver's timing arcs
// (rise and fall kept apart, then averaged) at the net's load, iterated three
// times from zero; clear/preset arcs are left out (STA disables them by
// default); inputs are driven by the SDC driving cell; the ideal clock has
// zero slew (as in OpenSTA).
//
// Which arc caused an output transition: with simulated toggles, arcs are
// weighted by (toggles of the related input) x (probability that the output
// is sensitive to that input, from the Liberty function with inputs equally
// likely); with a uniform activity by the sensitivity alone. Clock arcs of
// registers have sensitivity 1, asynchronous set/reset arcs 0.
//
// Convention OpenSta2019 reproduces instead how Debian's OpenSTA 2019 adds
// internal power (search/Power.cc of that snapshot): every internal_power
// group counts (rise energy + fall energy) x duty x (activity of the pin),
// with duty 1 for clock pins, 0.5 for other pins without `when`, or the
// probability of its (inferred) `when`. That sums arcs instead of weighting
// them and counts both edges per transition, so it gives roughly 2-4x our
// per-transition internal power; it exists only to validate this
// implementation against OpenSTA number for number.
#pragma once

#include <string>
#include <vector>

#include "ppa/stimulus.hpp"
#include "ppa/liberty.hpp"
#include "ppa/netlist.hpp"

namespace kaleido::ppa {

enum class InternalPowerConvention { PerTransition, OpenSta2019 };
const char* convention_name(InternalPowerConvention c);

struct PowerSetup {
  double period_s = 0;
  double output_load_f = 0;   // the SDC set_load on top-level outputs
  std::string driving_cell;   // the SDC set_driving_cell on non-clock inputs; empty = ideal inputs
  std::string clock_port = "clk_i";
  // Black-box (SRAM) pins, as their timing views describe them
  // (sram_liberty.hpp): input pin capacitance, clock pin capacitance, output
  // transition. Their output nets count as driven for switching power.
  double macro_pin_cap_f = 0;
  double macro_clock_pin_cap_f = 0;
  double macro_output_slew_s = 0;
};

struct NetActivity {
  std::vector<double> toggles_per_cycle;  // per net
  std::vector<double> rise_fraction;      // per net (0.5 when unknown)
  std::string source;                     // how the activity was obtained
};

struct PowerBreakdown {
  double switching_w = 0, internal_w = 0, leakage_w = 0;
  double sequential_w = 0, combinational_w = 0;  // by cell kind, all three components
  // Nets driven by top-level inputs (the clock net too): not in the total,
  // since they are charged by whatever drives the block (as in OpenSTA).
  double input_net_switching_w = 0;
  double macro_output_switching_w = 0;  // part of switching_w: nets driven by SRAM outputs
  double total_w() const { return switching_w + internal_w + leakage_w; }
  std::string activity_source;
  std::string convention;
};

class PowerModel {
 public:
  PowerModel(const FlatNetlist& netlist, const Library& lib, const PowerSetup& setup);

  // `per_cell`, when given, receives each cell's internal + switching (of the
  // nets it drives) + leakage power, in netlist order; `macro_net`, the
  // switching power of each net a black box (SRAM) drives, per net (0 for the
  // others). Together they add up to the total.
  PowerBreakdown evaluate(const NetActivity& activity, InternalPowerConvention convention,
                          std::vector<double>* per_cell = nullptr, std::vector<double>* macro_net = nullptr) const;

  // `activity` transitions per clock cycle on every net, clock nets 2
  // (OpenSTA's set_power_activity -global semantics); nets that constants
  // fix through combinational logic (tie-offs across module boundaries,
  // which hierarchical synthesis cannot fold) do not toggle.
  NetActivity uniform_activity(double activity) const;
  NetActivity simulated_activity(const ToggleCounts& t) const;

  const std::vector<double>& net_cap_f() const { return cap_; }
  const std::vector<double>& net_slew_s() const { return slew_; }
  bool is_clock_net(int net) const { return clock_[static_cast<size_t>(net)] != 0; }
  bool is_constant_net(int net) const { return constant_[static_cast<size_t>(net)] != 0; }
  // Energies of one pin group, exposed for tests: table lookups at this net's slew/load.
  double voltage() const { return lib_.voltage_v; }

 private:
  struct Arc {
    int related_net = -1;
    const InternalPowerGroup* group = nullptr;
    double sensitivity = 0;  // P(output sensitive to the related input)
    double duty = 0;         // OpenSTA 2019 duty
    bool ground = false;     // drawn from a 0 V pg pin: no supply energy (left out)
    bool opensta_counts = true;  // included by OpenSTA 2019's rule
  };
  struct PinPower {
    int cell = 0;
    int net = -1;
    bool output = false;
    std::vector<Arc> arcs;
  };

  const FlatNetlist& n_;
  const Library& lib_;
  PowerSetup setup_;
  std::vector<double> cap_, slew_;
  std::vector<uint8_t> clock_;
  std::vector<uint8_t> constant_;  // per net: fixed by constants through combinational cells
  std::vector<uint8_t> const_value_;
  std::vector<int> driver_cell_;   // per net: cell index driving it, -1 none
  std::vector<uint8_t> macro_driven_;  // per net: driven by a black box (SRAM) output
  std::vector<uint8_t> port_driven_;  // per net: driven by a top-level input
  std::vector<PinPower> pins_;
};

}  // namespace kaleido::ppa
