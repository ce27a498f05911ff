// Gate-level activity on Verilator: the flattened mapped netlist is written as
// one Verilog module (one wire per net, named n_<index>, kept readable with
// public_flat_rd), every cell written inline as its model's statements on the
// nets (cell_models.hpp, from the Liberty functions), behavioural models of the
// black-box SRAMs; compiled once by Verilator, and replayed from a vector file by a generated harness
// that reads every net after each evaluation and counts its changes and its
// rising transitions in the counted window. The model is evaluated after the
// inputs change (clock low), after the rising edge and after the falling edge,
// so a net changes at most once per evaluation and no glitch is counted: zero
// delay, the same assumption as a vectorless or RTL-activity estimate.
// (Verilator's own --coverage-toggle counted the same, but its per-net atomic
// counters and shadow copies doubled the generated C++: 137 MB against 66 MB
// for an 8x8, 22 minutes of build.)
//
// SRAMs: the write port by name (clock, write enable, write address, write
// data), the read ports as Yosys traced them in the SRAM's RTL (asynchronous,
// as the generator's kld_sram_* modules, or registered), else by name.
// Accesses are counted for the SRAM energy model: a registered read port one
// per enabled clock edge, an asynchronous one per cycle in which its address
// changed, a write per edge with the write enable set.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ppa/liberty.hpp"
#include "ppa/netlist.hpp"
#include "ppa/stimulus.hpp"
#include "ppa/yosys_flow.hpp"

namespace kaleido::ppa {

struct GateLevelOptions {
  std::string clock_port = "clk_i";
  std::vector<SramShape> srams;  // the black boxes' shapes from synthesis; without them ports are found by name
  std::filesystem::path work_dir;  // Verilog, harness, Verilator objects, logs
  int build_jobs = 2;
  std::function<void(const std::string&)> progress;  // empty = quiet
};

class GateLevelSim {
 public:
  // Writes the model and builds it with Verilator (the slow part: seconds to
  // minutes). Throws Error for cells without a model, a missing clock port,
  // several drivers on a net, or a failed build (with the log's tail).
  GateLevelSim(const FlatNetlist& netlist, GateLevelOptions opt);
  ~GateLevelSim();
  GateLevelSim(const GateLevelSim&) = delete;
  GateLevelSim& operator=(const GateLevelSim&) = delete;

  // Replays `stimulus` for opt.warmup + opt.cycles cycles; counts the last
  // opt.cycles, and opt.windows within them. `output_trace`, when given, receives one line per
  // cycle (after the falling edge): the output ports' values in hexadecimal, netlist order.
  // Several runs may go on at once from different threads (each in its own folder).
  ToggleCounts run(Stimulus& stimulus, const SimOptions& opt, const std::filesystem::path& output_trace = {});

  double build_seconds() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kaleido::ppa
