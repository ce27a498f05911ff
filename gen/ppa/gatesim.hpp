// Zero-delay, event-driven simulation of a flattened mapped netlist with the
// cells' Liberty functions, counting every net's transitions over a window of
// clock cycles. This is the toggle source of the activity-based power model
// (OpenSTA 2019 here reads no VCD/SAIF). Zero delay means glitches are not
// counted: the same assumption as a vectorless or RTL-activity estimate.
//
// Black-box SRAMs (kld_sram*) are simulated behaviourally: the write port by
// name (clock, write enable, write address, write data), the read ports as
// Yosys traced them in the SRAM's RTL (asynchronous, as the generator's
// kld_sram_* modules, or registered), else by name. Accesses are counted for
// the SRAM energy model: a registered read port one per enabled clock edge,
// an asynchronous one per cycle in which its address changed, a write per
// edge with the write enable set.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ppa/liberty.hpp"
#include "ppa/netlist.hpp"
#include "ppa/stimulus.hpp"
#include "ppa/yosys_flow.hpp"

namespace kaleido::ppa {

class GateSim : private InputDriver {
 public:
  // Throws Error for cells it cannot simulate (no function, statetable).
  // `srams`: the black boxes' shapes from synthesis (read ports traced in
  // their RTL); without them ports are recognised by name.
  GateSim(const FlatNetlist& netlist, const Library& lib, std::string clock_port = "clk_i",
          std::vector<SramShape> srams = {});
  ~GateSim() override;

  ToggleCounts run(Stimulus& stimulus, const SimOptions& opt);

  // Cycle-level access for tests: drive inputs, then clock one cycle.
  InputDriver& inputs() { return *this; }
  void cycle();
  uint64_t output(const std::string& port) const;  // low 64 bits of an output (or any) port
  bool net_value(int net) const;

 private:
  std::vector<std::string> input_ports() const override;
  int width(const std::string& port) const override;
  void set(const std::string& port, uint64_t value) override;
  void set_bit(const std::string& port, int bit, bool value) override;
  bool get_bit(const std::string& port, int bit) const override;

  std::vector<SramShape> shapes_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kaleido::ppa
