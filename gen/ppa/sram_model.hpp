// Area, access energy and leakage of SRAM macros that synthesis keeps as
// black boxes (modules named kld_sram*). A first-order, CACTI-style model:
// a bitcell array folded to a near-square aspect ratio, plus periphery per
// row (decoder, wordline driver), per column (precharge, sense amplifier,
// write driver) and a fixed control block; energy from the bitline, wordline
// and periphery capacitances switched per access.
//
// The model is technology-portable by measuring everything in yardsticks of
// the standard-cell library in use: the area, input capacitance and leakage
// of its smallest inverter, and its supply voltage. The constants are set so
// that the model lands between published figures:
//  - OpenRAM documentation, "Comparison with fabricated SRAMs": OpenRAM
//    FreePDK45 macros reach 0.826 Mb/mm^2 (1.21 um^2 per bit) and a 45 nm
//    fabricated SRAM (JSSC'11) 0.33 Mb/mm^2 (3.0 um^2 per bit).
//  - SKY130: an OpenRAM 1024 x 32 single-port macro of 534,277 um^2
//    (16.3 um^2/bit; ShonTaware/SRAM_SKY130 on GitHub) and the efabless
//    EF_SRAM_1024x32 commercial-grade macro, 387.87 x 303.315 um
//    (3.6 um^2/bit).
// With the generic library (INV 0.532 um^2) a single-port 1024 x 32 macro
// comes out at about 1.8 um^2/bit; with sky130 (inv_1 3.75 um^2) at about
// 12 um^2/bit: inside both ranges. The generator's memories (one write port
// and one or more asynchronous read ports) count as multi-port macros and
// cost more per bit. Relative studies only; real macros come with their own
// Liberty and LEF views, which should replace this model.
#pragma once

#include <string>

#include "ppa/liberty.hpp"

namespace kaleido::ppa {

// Yardsticks of a library, found from its smallest combinational inverter.
struct SramTechnology {
  std::string inverter;       // cell used as the yardstick
  double inv_area_um2 = 0;    // library area units (um^2 for the open libraries)
  double inv_cap_f = 0;       // input capacitance
  double inv_leak_w = 0;
  double vdd_v = 0;
};
// Throws Error when the library has no inverter.
SramTechnology sram_technology(const Library& lib);

struct SramCost {
  int words = 0;
  int bits = 0;
  int rows = 0;        // after column muxing
  int columns = 0;
  int column_mux = 1;
  int ports = 1;
  double area_um2 = 0;
  double read_energy_j = 0;
  double write_energy_j = 0;
  double leakage_w = 0;
  double access_energy_j() const { return 0.5 * (read_energy_j + write_energy_j); }
};

// `ports`: independent address ports (1 for a single read/write port; a
// write port plus n read ports is n + 1). Each extra port enlarges the cell
// (OpenRAM's bitcells: 6T 1rw 6.8 x 9.2 um, 10T 1rw+1r 10.9 x 13.9 um in
// 0.35 um SCMOS, 2.4x the area) and repeats row and column periphery.
SramCost sram_cost(int words, int bits, const SramTechnology& tech, int ports = 1);

// One-paragraph description of the model, for reports.
std::string sram_model_description();

}  // namespace kaleido::ppa
