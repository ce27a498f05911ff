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
#include "ppa/yosys_flow.hpp"

namespace kaleido::ppa {

// What a stimulus sees: the top-level input ports, settable by name.
class InputDriver {
 public:
  virtual ~InputDriver() = default;
  virtual std::vector<std::string> input_ports() const = 0;
  virtual int width(const std::string& port) const = 0;  // throws Error for an unknown port
  virtual void set(const std::string& port, uint64_t value) = 0;         // bits 0..63
  virtual void set_bit(const std::string& port, int bit, bool value) = 0;
  virtual bool get_bit(const std::string& port, int bit) const = 0;
};

// Supplies the input values of each cycle (applied while the clock is low,
// sampled at the next rising edge). Inputs not set keep their value.
class Stimulus {
 public:
  virtual ~Stimulus() = default;
  virtual std::string describe() const = 0;
  virtual void drive(uint64_t cycle, InputDriver& in) = 0;
};

// Every input bit (except the clock and reset) flips with probability
// `toggle_probability` each cycle (0.5 = uniformly random words, 0 =
// constant); the active-low reset is held for `reset_cycles` then released.
class RandomStimulus : public Stimulus {
 public:
  RandomStimulus(uint64_t seed, double toggle_probability, uint64_t reset_cycles = 2, std::string clock_port = "clk_i",
                 std::string reset_port = "rst_ni");
  std::string describe() const override;
  void drive(uint64_t cycle, InputDriver& in) override;

 private:
  uint64_t state_;
  uint64_t seed_;
  double p_;
  uint64_t reset_cycles_;
  std::string clock_, reset_;
  uint64_t next();
};

// Replays a text file: a header line `ports: NAME NAME ...` (input ports),
// then one line per cycle with a hexadecimal value per port. This is how a
// testbench workload (RTL simulation) is replayed on the mapped netlist.
class VectorFileStimulus : public Stimulus {
 public:
  explicit VectorFileStimulus(const std::string& path);
  std::string describe() const override;
  void drive(uint64_t cycle, InputDriver& in) override;
  uint64_t cycles() const { return rows_.size(); }

 private:
  std::string path_;
  std::vector<std::string> ports_;
  std::vector<std::vector<std::string>> rows_;
};

struct SimOptions {
  std::string clock_port = "clk_i";
  uint64_t cycles = 1000;  // counted cycles
  uint64_t warmup = 16;    // cycles run before counting starts (reset, pipeline fill)
};

struct SramAccessCount {
  std::string path;
  uint64_t reads = 0, writes = 0;
  bool modelled = false;  // ports recognised and simulated
  std::string ports;      // how the ports were recognised
};

struct ToggleCounts {
  uint64_t cycles = 0;               // counted cycles
  std::vector<uint64_t> toggles;     // per net, over the counted cycles
  std::vector<uint64_t> rises;
  std::vector<SramAccessCount> srams;
  std::string stimulus;              // Stimulus::describe()
};

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
