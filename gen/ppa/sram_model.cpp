#include "ppa/sram_model.hpp"

#include <cmath>

#include "common/error.hpp"

namespace kaleido::ppa {

namespace {

// Model constants, in units of the library's smallest inverter (area A_inv,
// input capacitance C_inv, leakage L_inv). See sram_model.hpp for the
// published figures they were set against.
constexpr double kCellArea = 3.0;      // bitcell incl. array overhead, A_inv per bit
constexpr double kRowArea = 12.0;      // decoder + wordline driver, A_inv per row
constexpr double kColumnArea = 40.0;   // precharge, sense amp, write driver, mux, A_inv per column
constexpr double kFixedArea = 1500.0;  // control, address and data registers, A_inv
constexpr double kBitlineCap = 0.5;    // C_inv per cell on a bitline
constexpr double kReadSwing = 0.1;     // bitline swing on a read, fraction of VDD
constexpr double kWordlineCap = 1.0;   // C_inv per cell on a wordline (two access gates)
constexpr double kDecoderCap = 8.0;    // C_inv switched per address bit
constexpr double kIoCap = 10.0;        // C_inv per data bit (sense amp or write driver, I/O)
constexpr double kControlCap = 100.0;  // C_inv for clocking and control per access
constexpr double kCellLeak = 0.2;      // L_inv per bit (high-Vt, minimum devices)
constexpr double kPeripheryLeak = 0.5; // L_inv per A_inv of periphery
constexpr double kExtraPortCell = 1.4;  // cell area added per extra port (OpenRAM 10T vs 6T: 2.4x)

}  // namespace

SramTechnology sram_technology(const Library& lib) {
  SramTechnology t;
  const LibCell* best = nullptr;
  for (const LibCell& c : lib.cells) {
    if (c.dont_use || c.is_sequential() || c.pins.size() != 2 || c.area <= 0) continue;
    const LibPin* out = nullptr;
    const LibPin* in = nullptr;
    for (const LibPin& p : c.pins) {
      if (p.direction == PinDirection::Output) out = &p;
      if (p.direction == PinDirection::Input) in = &p;
    }
    if (!out || !in || out->function.empty()) continue;
    const BoolFunction f = BoolFunction::parse(out->function);
    if (f.variables().size() != 1 || f.variables()[0] != in->name || f.eval(0) != true || f.eval(1) != false) continue;
    if (!best || c.area < best->area) best = &c;
  }
  if (!best) throw Error("library " + lib.name + " has no inverter; the SRAM model needs one as its yardstick");
  t.inverter = best->name;
  t.inv_area_um2 = best->area;
  for (const LibPin& p : best->pins)
    if (p.direction == PinDirection::Input) t.inv_cap_f = p.load_f();
  t.inv_leak_w = best->leakage_w();
  t.vdd_v = lib.voltage_v;
  return t;
}

SramCost sram_cost(int words, int bits, const SramTechnology& tech, int ports) {
  if (words < 1 || bits < 1)
    throw Error("SRAM of " + std::to_string(words) + " words x " + std::to_string(bits) + " bits: both must be >= 1");
  if (ports < 1) throw Error("SRAM with " + std::to_string(ports) + " ports: needs at least one");
  SramCost c;
  c.words = words;
  c.bits = bits;
  c.ports = ports;
  const double cell_factor = 1.0 + kExtraPortCell * (ports - 1);
  // Bitlines and wordlines lengthen with the cell's side.
  const double wire_factor = std::sqrt(cell_factor);
  // Fold words into columns (column mux) towards a square array.
  double best = 1e30;
  for (int mux = 1; mux <= 16 && mux <= words; mux *= 2) {
    const double rows = std::ceil(static_cast<double>(words) / mux);
    const double cols = static_cast<double>(bits) * mux;
    const double skew = std::fabs(std::log2(rows / cols));
    if (skew < best - 1e-9) {
      best = skew;
      c.column_mux = mux;
    }
  }
  c.rows = (words + c.column_mux - 1) / c.column_mux;
  c.columns = bits * c.column_mux;
  const double R = c.rows, C = c.columns, B = bits;
  const double n_bits = static_cast<double>(words) * bits;
  const double periphery = ports * (kRowArea * R + kColumnArea * C) + kFixedArea;
  c.area_um2 = tech.inv_area_um2 * (kCellArea * cell_factor * R * C + periphery);
  const double unit = tech.inv_cap_f * tech.vdd_v * tech.vdd_v;
  const double addr_bits = std::max(1.0, std::ceil(std::log2(static_cast<double>(words))));
  const double bitline = kBitlineCap * wire_factor;
  const double common = kWordlineCap * wire_factor * C + kDecoderCap * addr_bits + kIoCap * B + kControlCap;
  c.read_energy_j = unit * (bitline * kReadSwing * R * C + common);
  c.write_energy_j = unit * (bitline * R * B + bitline * kReadSwing * R * (C - B) + common);
  c.leakage_w = tech.inv_leak_w * (kCellLeak * n_bits + kPeripheryLeak * periphery);
  return c;
}

std::string sram_model_description() {
  return "kaleido first-order SRAM model (gen/ppa/sram_model.hpp): array folded to a square by column muxing; "
         "area = A_inv*(3.0*f*rows*cols + p*(12*rows + 40*cols) + 1500) for p address ports with cell factor "
         "f = 1 + 1.4*(p-1), read energy = C_inv*VDD^2*(0.05*sqrt(f)*rows*cols + sqrt(f)*cols "
         "+ 8*log2(words) + 10*bits + 100), write adds full-swing bitlines on the written columns, leakage = "
         "L_inv*(0.2 per bit + 0.5 per A_inv of periphery), in units of the library's smallest inverter; "
         "constants set between OpenRAM (FreePDK45 1.21 um^2/bit, sky130 16.3 um^2/bit) and fabricated/commercial "
         "macros (45 nm 3.0 um^2/bit, sky130 EF_SRAM 3.6 um^2/bit). Relative studies only.";
}

}  // namespace kaleido::ppa
