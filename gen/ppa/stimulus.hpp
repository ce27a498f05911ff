// Stimuli for gate-level simulation (what the inputs of a mapped netlist do,
// cycle by cycle) and what a simulation counts: toggles per net and SRAM
// accesses over a window of clock cycles after a warm-up.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "ppa/netlist.hpp"

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
  // Further windows [from, to) of replay cycles (warmup <= from < to <= warmup + cycles), each
  // counted in the same replay: ToggleCounts::windows.
  std::vector<std::pair<uint64_t, uint64_t>> windows;
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
  std::vector<ToggleCounts> windows;  // one per SimOptions::windows
};

// Runs `stimulus` for `cycles` cycles on the input ports of `netlist` and
// writes what it drove as a vector file (the VectorFileStimulus format, every
// input port on every line), so that a compiled simulator can replay it.
// Inputs start at 0 and keep their value until the stimulus sets them.
void record_vectors(Stimulus& stimulus, const FlatNetlist& netlist, uint64_t cycles,
                    const std::filesystem::path& path);

}  // namespace kaleido::ppa
