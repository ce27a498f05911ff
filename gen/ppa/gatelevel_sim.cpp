#include "ppa/gatelevel_sim.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/text.hpp"
#include "ppa/cell_models.hpp"
#include "ppa/tools.hpp"

namespace fs = std::filesystem;

namespace kaleido::ppa {

namespace {

constexpr const char* kTop = "kld_gl";

bool active_low_name(const std::string& n) {
  const std::string l = to_lower(n);
  auto ends = [&](const char* suf) {
    const std::string s(suf);
    return l.size() > s.size() && l.compare(l.size() - s.size(), s.size(), s) == 0;
  };
  return ends("_n") || ends("_ni") || ends("_b") || ends("_bi") || ends("n_i");
}

}  // namespace

// Named (not anonymous): GateLevelSim::Impl holds SramPorts, and a member of internal-linkage type
// is an error (-Wsubobject-linkage) once this file is compiled inside a unity batch.
namespace gatelevel_detail {

struct SramRead {
  std::vector<int> addr, data;
  int en = -1;
  bool registered = false;
};

// The ports of one black-box SRAM as the simulation drives them.
struct SramPorts {
  std::string path;
  int clk = -1;
  std::vector<int> waddr, wdata;
  int we = -1, en = -1;
  bool we_low = false, en_low = false;
  std::vector<SramRead> reads;
  size_t words = 0, width = 0;
  bool modelled = false;
  std::string how;
};

}  // namespace gatelevel_detail

using gatelevel_detail::SramPorts;
using gatelevel_detail::SramRead;

namespace {

SramPorts recognise_sram(const NetlistBlackBox& b, const std::vector<SramShape>& shapes) {
  SramPorts s;
  s.path = b.path;
  auto single = [](const std::vector<int>& nets) { return nets.size() == 1 ? nets[0] : -1; };
  auto find = [](const std::vector<std::pair<std::string, std::vector<int>>>& ports,
                 const std::string& name) -> const std::vector<int>* {
    for (const auto& [pn, nets] : ports)
      if (pn == name) return &nets;
    return nullptr;
  };
  // Clock and write port by name (clk, we, waddr/addr, wdata/din).
  std::vector<int> addr;
  for (const auto& [name, nets] : b.inputs) {
    const std::string l = to_lower(name);
    if (l.find("clk") != std::string::npos || l.find("clock") != std::string::npos) {
      s.clk = single(nets);
    } else if (l.find("waddr") != std::string::npos || l.find("wr_addr") != std::string::npos) {
      s.waddr = nets;
    } else if (l.find("raddr") != std::string::npos || l.find("rd_addr") != std::string::npos) {
      // read addresses: below
    } else if (l.find("addr") != std::string::npos || l.find("adr") != std::string::npos) {
      addr = nets;
    } else if (l.find("wdata") != std::string::npos || l.find("din") != std::string::npos ||
               l.find("wr_data") != std::string::npos || l == "d_i" || l == "d") {
      s.wdata = nets;
    } else if (l.rfind("we", 0) == 0 || l.find("_we") != std::string::npos || l.find("wr_en") != std::string::npos ||
               l.find("wen") != std::string::npos || l.find("write") != std::string::npos) {
      s.we = single(nets);
      s.we_low = active_low_name(name);
    } else if (l == "en_i" || l == "ce_i" || l == "cs_i" || l == "en" || l == "ce" || l == "cs" || l == "req_i") {
      s.en = single(nets);
      s.en_low = active_low_name(name);
    }
  }
  if (s.waddr.empty()) s.waddr = addr;
  const SramShape* shape = nullptr;
  for (const SramShape& sh : shapes)
    if (sh.module == b.module) shape = &sh;
  std::ostringstream how;
  if (shape && !shape->read_ports.empty()) {
    // Read ports as traced in the SRAM's RTL.
    for (const SramReadPort& rp : shape->read_ports) {
      SramRead r;
      if (const auto* a = find(b.inputs, rp.addr_port)) r.addr = *a;
      if (const auto* d = find(b.outputs, rp.data_port)) r.data = *d;
      if (!rp.enable_port.empty())
        if (const auto* e = find(b.inputs, rp.enable_port)) r.en = single(*e);
      r.registered = rp.registered;
      s.reads.push_back(r);
      how << (how.tellp() > 0 ? "; " : "") << (rp.registered ? "registered" : "asynchronous") << " read "
          << rp.addr_port << " -> " << rp.data_port;
    }
  } else {
    // By name: raddrK -> rdataK pairs, else the shared address -> the read data output (registered).
    for (const auto& [name, nets] : b.inputs) {
      const std::string l = to_lower(name);
      if (l.find("raddr") == std::string::npos && l.find("rd_addr") == std::string::npos) continue;
      std::string want = name;
      want.replace(to_lower(want).find("addr"), 4, "data");
      const bool in_suffix = want.size() >= 2 && want.substr(want.size() - 2) == "_i";
      const std::string out_name = want.substr(0, in_suffix ? want.size() - 2 : want.size()) + "_o";
      SramRead r;
      r.addr = nets;
      if (const auto* d = find(b.outputs, out_name)) r.data = *d;
      if (!r.data.empty()) {
        s.reads.push_back(r);
        how << (how.tellp() > 0 ? "; " : "") << "asynchronous read (by name) " << name << " -> " << out_name;
      }
    }
    if (s.reads.empty() && !addr.empty()) {
      SramRead r;
      r.addr = addr;
      r.registered = true;
      for (const auto& [name, nets] : b.outputs) {
        const std::string l = to_lower(name);
        if (l.find("rdata") != std::string::npos || l.find("dout") != std::string::npos) r.data = nets;
      }
      if (r.data.empty())
        for (const auto& [name, nets] : b.outputs)
          if (nets.size() > r.data.size()) r.data = nets;
      if (!r.data.empty()) {
        s.reads.push_back(r);
        how << "registered read (by name) on the shared address";
      }
    }
  }
  s.width = s.wdata.size();
  for (const SramRead& r : s.reads) s.width = std::max(s.width, r.data.size());
  size_t addr_bits = s.waddr.size();
  for (const SramRead& r : s.reads) addr_bits = std::max(addr_bits, r.addr.size());
  s.modelled = s.clk >= 0 && !s.reads.empty() && s.width > 0 && addr_bits < 24;
  if (s.modelled) s.words = shape && shape->words > 0 ? static_cast<size_t>(shape->words) : (size_t{1} << addr_bits);
  how << "; write " << (s.we >= 0 ? (s.we_low ? "enable active low" : "enable") : "never") << ", "
      << s.waddr.size() << "-bit address, " << s.wdata.size() << "-bit data";
  s.how = how.str();
  return s;
}

bool on_path(const std::string& tool) {
  try {
    find_tool(tool, tool);
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::string net_ref(int net) {
  if (net == kNet0 || net < 0) return "1'b0";
  if (net == kNet1) return "1'b1";
  return "n_" + std::to_string(net);
}

// {MSB, ..., LSB} of nets, zero-extended to 64 bits by the assignment it is used in.
std::string bus(const std::vector<int>& nets) {
  if (nets.empty()) return "64'd0";
  std::string s = "{";
  for (size_t k = nets.size(); k-- > 0;) s += net_ref(nets[k]) + (k ? ", " : "}");
  return s;
}

std::string level(int net, bool low) {
  if (net < 0) return "1'b1";
  return low ? "~" + net_ref(net) : net_ref(net);
}

// The SRAM as Verilog inside the flat module: memory, read and write ports,
// access counters (64 bits, counting while kld_count_i is high).
void write_sram(std::ostringstream& o, const SramPorts& s, size_t k, std::vector<uint8_t>& driven) {
  const std::string K = std::to_string(k);
  o << "  // SRAM " << s.path << ": " << s.how << "\n";
  o << "  reg [63:0] kld_reads_" << K << " = 64'd0, kld_writes_" << K << " = 64'd0;\n";
  o << "  assign kld_sram_reads_" << K << " = kld_reads_" << K << ";\n";
  o << "  assign kld_sram_writes_" << K << " = kld_writes_" << K << ";\n";
  if (!s.modelled) return;
  const std::string W = std::to_string(s.width);
  o << "  reg [" << W << "-1:0] kld_mem_" << K << " [0:" << s.words << "-1];\n";
  o << "  wire kld_en_" << K << " = " << level(s.en, s.en_low) << ";\n";
  o << "  wire kld_we_" << K << " = kld_en_" << K << " & " << (s.we < 0 ? "1'b0" : level(s.we, s.we_low)) << ";\n";
  o << "  wire [63:0] kld_wa_" << K << " = " << bus(s.waddr) << ";\n";
  o << "  wire [" << W << "-1:0] kld_wd_" << K << " = " << bus(s.wdata) << ";\n";
  std::string inc = "64'd0";
  for (size_t p = 0; p < s.reads.size(); ++p) {
    const SramRead& r = s.reads[p];
    const std::string P = K + "_" + std::to_string(p);
    o << "  wire [63:0] kld_ra_" << P << " = " << bus(r.addr) << " % 64'd" << s.words << ";\n";
    if (r.registered) {
      o << "  wire kld_re_" << P << " = kld_en_" << K << " & " << level(r.en, false) << ";\n";
      o << "  reg [" << W << "-1:0] kld_q_" << P << " = 0;\n";
      o << "  always @(posedge " << net_ref(s.clk) << ") if (kld_re_" << P << ") kld_q_" << P << " <= kld_mem_" << K
        << "[kld_ra_" << P << "];\n";
      inc += " + {63'd0, kld_re_" + P + "}";
    } else {
      // One access per clock edge at which the address differs from the previous edge's.
      o << "  reg [63:0] kld_last_" << P << " = 64'd0;\n  reg kld_seen_" << P << " = 1'b0;\n";
      o << "  wire kld_re_" << P << " = ~kld_seen_" << P << " | (kld_ra_" << P << " != kld_last_" << P << ");\n";
      o << "  always @(posedge " << net_ref(s.clk) << ") begin kld_last_" << P << " <= kld_ra_" << P
        << "; kld_seen_" << P << " <= 1'b1; end\n";
      o << "  wire [" << W << "-1:0] kld_q_" << P << " = kld_mem_" << K << "[kld_ra_" << P << "];\n";
      inc += " + {63'd0, kld_re_" + P + "}";
    }
    for (size_t b = 0; b < r.data.size(); ++b) {
      const int net = r.data[b];
      if (net < 2) continue;
      o << "  assign " << net_ref(net) << " = kld_q_" << P << "[" << b << "];\n";
      driven[static_cast<size_t>(net)] = 1;
    }
  }
  o << "  always @(posedge " << net_ref(s.clk) << ") begin\n";
  o << "    if (kld_we_" << K << ") kld_mem_" << K << "[kld_wa_" << K << " % 64'd" << s.words << "] <= kld_wd_" << K
    << ";\n";
  o << "    if (kld_count_i) begin\n";
  o << "      kld_reads_" << K << " <= kld_reads_" << K << " + " << inc << ";\n";
  o << "      kld_writes_" << K << " <= kld_writes_" << K << " + {63'd0, kld_we_" << K << "};\n";
  o << "    end\n  end\n";
}

struct InputBit {
  int port = 0, bit = 0;
};

// The flat module. Ports: i_<k> per input bit, o_<k> per output bit,
// kld_count_i, and the SRAM access counters.
std::string flat_verilog(const FlatNetlist& n, const std::vector<SramPorts>& srams, std::vector<InputBit>& input_bits,
                         std::vector<std::vector<std::string>>& outputs) {
  std::ostringstream head, body;
  std::vector<uint8_t> driven(static_cast<size_t>(n.num_nets), 0);
  auto drive = [&](int net, const std::string& who) {
    if (net < 2) return;
    if (driven[static_cast<size_t>(net)])
      throw Error("net " + n.net_names[static_cast<size_t>(net)] + " has more than one driver (" + who + ")");
    driven[static_cast<size_t>(net)] = 1;
  };
  std::vector<std::string> ports;
  std::ostringstream decl;
  int in_port = 0;
  for (const NetlistPort& p : n.ports) {
    if (!p.input) outputs.emplace_back();
    for (size_t b = 0; b < p.nets.size(); ++b) {
      const int net = p.nets[b];
      if (p.input) {
        const std::string name = "i_" + std::to_string(input_bits.size());
        input_bits.push_back({in_port, static_cast<int>(b)});
        ports.push_back(name);
        decl << "  input " << name << ";\n";
        if (net >= 2) {
          drive(net, "input port " + p.name);
          body << "  assign " << net_ref(net) << " = " << name << ";\n";
        }
      } else {
        const std::string name = "o_" + std::to_string(ports.size());
        ports.push_back(name);
        outputs.back().push_back(name);
        decl << "  output " << name << ";\n";
        body << "  assign " << name << " = " << net_ref(net) << ";\n";
      }
    }
    if (p.input) ++in_port;
  }
  ports.push_back("kld_count_i");
  decl << "  input kld_count_i;\n";
  for (size_t k = 0; k < srams.size(); ++k) {
    for (const char* what : {"reads", "writes"}) {
      const std::string name = std::string("kld_sram_") + what + "_" + std::to_string(k);
      ports.push_back(name);
      decl << "  output [63:0] " << name << ";\n";
    }
  }
  // Cells inline (their models' statements on the nets), not as instances: Verilator would
  // otherwise spend minutes inlining a hundred thousand module instances.
  for (size_t ci = 0; ci < n.cells.size(); ++ci) {
    const NetlistCell& c = n.cells[ci];
    std::vector<std::string> pins(c.cell->pins.size());
    for (size_t pi = 0; pi < c.cell->pins.size(); ++pi) {
      const int net = c.pin_net[pi];
      const PinDirection dir = c.cell->pins[pi].direction;
      if (dir == PinDirection::Input) {
        pins[pi] = net_ref(net);
      } else if (dir == PinDirection::Output && net >= 2) {
        drive(net, c.path);
        pins[pi] = net_ref(net);
      }
    }
    body << cell_inline_verilog(*c.cell, pins, std::to_string(ci));
  }
  std::ostringstream sram_text;
  for (size_t k = 0; k < srams.size(); ++k) write_sram(sram_text, srams[k], k, driven);

  std::ostringstream o;
  o << "// Flattened gate-level netlist of " << n.top << " for activity counting, written by kaleido\n"
    << "// (gen/ppa/gatelevel_sim.cpp): one wire per net (n_<net index>), readable by the harness.\n";
  o << "/* verilator lint_off UNUSED */\n/* verilator lint_off WIDTH */\n/* verilator lint_off DECLFILENAME */\n"
    << "/* verilator lint_off PINCONNECTEMPTY */\n/* verilator lint_off MULTIDRIVEN */\n";
  o << "module " << kTop << " (";
  for (size_t k = 0; k < ports.size(); ++k) o << (k ? ", " : "") << ports[k];
  o << ");\n" << decl.str();
  // public_flat_rd keeps every net a variable the harness can read (Verilator would fold most away).
  for (int net = 2; net < n.num_nets; ++net) o << "  wire n_" << net << " /*verilator public_flat_rd*/;\n";
  for (int net = 2; net < n.num_nets; ++net)
    if (!driven[static_cast<size_t>(net)]) body << "  assign n_" << net << " = 1'b0;\n";
  o << body.str() << sram_text.str();
  o << "endmodule\n";
  return o.str();
}

// Whether every sequential cell is a flip-flop clocked on a pin's rising edge (no latch,
// no inverted or gated clock): then the falling edge changes nothing but the clock.
bool rising_edge_flops_only(const FlatNetlist& n) {
  for (const NetlistCell& c : n.cells) {
    if (c.cell->has_statetable) return false;
    for (const SequentialGroup& s : c.cell->sequentials) {
      if (s.latch || !c.cell->pin(trim(s.clocked_on))) return false;
    }
  }
  return true;
}

std::string harness_cpp(const std::vector<InputBit>& input_bits, size_t input_ports, int clock_bit,
                        bool fall_with_inputs, size_t srams, const std::vector<std::vector<std::string>>& outputs,
                        int num_nets) {
  std::ostringstream o;
  o << R"(// Replays a vector file on the gate-level model and counts, per net, its value
// changes and rising transitions in the counted window. Generated by kaleido
// (gen/ppa/gatelevel_sim.cpp).
// Usage: sim VECTORS WARMUP CYCLES NET_COUNTS SRAM_COUNTS SNAPSHOTS [OUTPUT_TRACE]
// SNAPSHOTS: `-`, or ascending cycles in [WARMUP, WARMUP + CYCLES] at which the counts so far
// and every net's value are written to NET_COUNTS.<cycle> and SRAM_COUNTS.<cycle> (before that
// cycle's inputs), so that windows inside the counted one need no replay of their own.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "Vkld_gl.h"
#include "Vkld_gl___024root.h"
#include "verilated.h"

namespace {
int nibble(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

// Every net's value after each evaluation: a change is a toggle. Verilator keeps the nets
// (one byte each, 0 or 1) together in the model object, so the byte range they span is
// compared with its copy from the previous evaluation 16 bytes at a time: XOR leaves 1 in
// every byte that changed, added into per-byte counters, which move into the per-net totals
// every 255 samples, before one can overflow. Bytes of the range that are no net are counted
// too and never read. Rises need no counter: a net's rises and falls alternate, so over the
// window rises - falls = last value - first value, and rises = (toggles + last - first) / 2.
typedef uint8_t Bytes16 __attribute__((vector_size(16)));
struct Counter {
  std::vector<const CData*> nets;  // index k: net k + 2
  const uint8_t* base = nullptr;
  size_t bytes = 0, blocks = 0;     // the range; its whole 16-byte blocks
  std::vector<uint32_t> offset;     // net k's byte offset in the range
  std::vector<Bytes16> last, toggles8;  // the range after the previous evaluation; byte counters
  std::vector<uint8_t> last_tail, toggles_tail;  // the bytes after the last whole block
  std::vector<uint8_t> first;  // each net's value when the window opened
  std::vector<uint64_t> toggles;
  unsigned pending = 0;  // samples held in the byte counters
  bool on = false;
  void start() {
    const uint8_t* lo = reinterpret_cast<const uint8_t*>(nets.front());
    const uint8_t* hi = lo;
    for (const CData* p : nets) {
      lo = std::min(lo, reinterpret_cast<const uint8_t*>(p));
      hi = std::max(hi, reinterpret_cast<const uint8_t*>(p));
    }
    base = lo;
    bytes = static_cast<size_t>(hi - lo) + 1;
    blocks = bytes / 16;
    offset.resize(nets.size());
    first.resize(nets.size());
    for (size_t k = 0; k < nets.size(); ++k) {
      offset[k] = static_cast<uint32_t>(reinterpret_cast<const uint8_t*>(nets[k]) - lo);
      first[k] = *nets[k] & 1;
    }
    last.resize(blocks);
    std::memcpy(last.data(), base, blocks * 16);
    last_tail.assign(base + blocks * 16, base + bytes);
    toggles8.assign(blocks, Bytes16{});
    toggles_tail.assign(last_tail.size(), 0);
    toggles.assign(nets.size(), 0);
    pending = 0;
    on = true;
  }
  void sample() {
    if (!on) return;
    for (size_t b = 0; b < blocks; ++b) {
      Bytes16 now;
      std::memcpy(&now, base + 16 * b, 16);
      toggles8[b] += now ^ last[b];
      last[b] = now;
    }
    for (size_t t = 0; t < last_tail.size(); ++t) {
      const uint8_t now = base[16 * blocks + t];
      toggles_tail[t] += now ^ last_tail[t];
      last_tail[t] = now;
    }
    if (++pending == 255) flush();
  }
  void flush() {
    const uint8_t* t8 = reinterpret_cast<const uint8_t*>(toggles8.data());
    const size_t whole = 16 * blocks;
    for (size_t k = 0; k < nets.size(); ++k) {
      const size_t at = offset[k];
      toggles[k] += at < whole ? t8[at] : toggles_tail[at - whole];
    }
    std::fill(toggles8.begin(), toggles8.end(), Bytes16{});
    std::fill(toggles_tail.begin(), toggles_tail.end(), 0);
    pending = 0;
  }
  uint64_t rises(size_t k) const {  // toggles + end >= start: a net that ends lower toggled an odd number of times
    const uint64_t end = *nets[k] & 1u, start = first[k];
    return (toggles[k] + end - start) / 2;
  }
};

// Every net as a member of the model: constant data. (A list of the nets' addresses in
// one object is code, and for an 8x8 took g++ about 170 s at -O1.)
CData Vkld_gl___024root::* const kNets[] = {
)";
  for (int net = 2; net < num_nets; ++net) o << "    &Vkld_gl___024root::kld_gl__DOT__n_" << net << ",\n";
  o << R"(};
}  // namespace

int main(int argc, char** argv) {
  if (argc != 7 && argc != 8) {
    std::cerr << "usage: " << argv[0] << " VECTORS WARMUP CYCLES NET_COUNTS SRAM_COUNTS SNAPSHOTS [OUTPUT_TRACE]\n";
    return 2;
  }
  const uint64_t warmup = std::stoull(argv[2]), cycles = std::stoull(argv[3]);
  std::vector<uint64_t> snapshots;
  if (std::string(argv[6]) != "-") {
    std::istringstream list(argv[6]);
    for (std::string item; std::getline(list, item, ',');) snapshots.push_back(std::stoull(item));
  }
  VerilatedContext ctx;
  Vkld_gl m(&ctx);
  const Vkld_gl___024root& r = *m.rootp;
  Counter count;
  for (CData Vkld_gl___024root::* const net : kNets) count.nets.push_back(&(r.*net));
  struct Bit { CData* var; unsigned port, bit; };
  const std::vector<Bit> bits = {
)";
  for (size_t k = 0; k < input_bits.size(); ++k)
    o << "    {&m.i_" << k << ", " << input_bits[k].port << ", " << input_bits[k].bit << "},\n";
  o << "  };\n  const unsigned ports = " << input_ports << ";\n";
  // Output ports, LSB first, for the optional per-cycle trace.
  o << "  const std::vector<std::vector<const CData*>> outputs = {\n";
  for (const std::vector<std::string>& port : outputs) {
    o << "    {";
    for (size_t b = 0; b < port.size(); ++b) o << (b ? ", " : "") << "&m." << port[b];
    o << "},\n";
  }
  o << "  };\n";
  o << "  const bool fall_with_inputs = " << (fall_with_inputs ? "true" : "false") << ";\n";
  o << "  CData* const clock = " << (clock_bit >= 0 ? "&m.i_" + std::to_string(clock_bit) : std::string("nullptr"))
    << ";\n";
  o << "  auto write_srams = [&](std::ostream& out) {\n    (void)out;  // unused without SRAMs\n";
  for (size_t k = 0; k < srams; ++k)
    o << "    out << m.kld_sram_reads_" << k << " << ' ' << m.kld_sram_writes_" << k << " << '\\n';\n";
  o << "  };\n";
  o << R"(  std::ifstream in(argv[1]);
  std::string line;
  if (!in || !std::getline(in, line)) {
    std::cerr << argv[1] << ": cannot be read\n";
    return 2;
  }
  std::vector<std::string> row(ports);
  std::ofstream trace;
  if (argc == 8) trace.open(argv[7]);
  size_t snap = 0;
  bool snapshots_ok = true;
  auto write_snapshots = [&](uint64_t c) {
    for (; snap < snapshots.size() && snapshots[snap] == c; ++snap) {
      count.flush();
      std::ofstream nets(std::string(argv[4]) + "." + std::to_string(c));
      for (size_t k = 0; k < count.nets.size(); ++k) nets << count.toggles[k] << ' ' << (*count.nets[k] & 1) << '\n';
      std::ofstream srams(std::string(argv[5]) + "." + std::to_string(c));
      write_srams(srams);
      snapshots_ok = snapshots_ok && nets && srams;
    }
  };
  m.kld_count_i = 0;
  m.eval();  // the initial settle (inputs 0)
  for (uint64_t c = 0; c < warmup + cycles; ++c) {
    if (c == warmup) {
      if (clock && *clock) {  // the window opens with the clock low
        *clock = 0;
        m.eval();
      }
      count.start();
      m.kld_count_i = 1;
    }
    if (c >= warmup) write_snapshots(c);
    if (!std::getline(in, line)) {
      in.clear();
      in.seekg(0);
      std::getline(in, line);  // the header
      if (!std::getline(in, line)) {
        std::cerr << argv[1] << ": no vectors\n";
        return 2;
      }
    }
    std::istringstream ss(line);
    for (unsigned p = 0; p < ports; ++p) ss >> row[p];
    for (const Bit& b : bits) {
      const std::string& h = row[b.port];
      const size_t d = b.bit / 4;
      *b.var = d < h.size() ? (nibble(h[h.size() - 1 - d]) >> (b.bit % 4)) & 1 : 0;
    }
    // A net changes at most once per evaluation, so no glitch is counted. When every
    // sequential cell is a rising-edge flip-flop, nothing but the clock changes at the
    // falling edge, and it shares the evaluation of the new inputs (two a cycle).
    if (clock && fall_with_inputs) *clock = 0;
    m.eval();
    count.sample();
    if (clock) {
      *clock = 1;
      m.eval();
      count.sample();
      if (!fall_with_inputs) {
        *clock = 0;
        m.eval();
        count.sample();
      }
    }
    if (trace.is_open()) {
      for (size_t p = 0; p < outputs.size(); ++p) {
        const std::vector<const CData*>& port = outputs[p];
        std::string hex;
        for (size_t d = (port.size() + 3) / 4; d-- > 0;) {
          int nib = 0;
          for (size_t k = 0; k < 4 && 4 * d + k < port.size(); ++k) nib |= (*port[4 * d + k] & 1) << k;
          hex += "0123456789abcdef"[nib];
        }
        trace << (p ? " " : "") << hex;
      }
      trace << '\n';
    }
  }
  if (clock && fall_with_inputs) {  // the last cycle's falling edge
    *clock = 0;
    m.eval();
    count.sample();
  }
  if (count.on) count.flush();
  write_snapshots(warmup + cycles);
  if (snap != snapshots.size()) {
    std::cerr << "snapshot cycles must ascend within [WARMUP, WARMUP + CYCLES]\n";
    return 2;
  }
  std::ofstream nets(argv[4]);
  for (size_t k = 0; k < count.nets.size(); ++k) nets << count.toggles[k] << ' ' << count.rises(k) << '\n';
  std::ofstream out(argv[5]);
  write_srams(out);
  m.final();
  return out && nets && snapshots_ok ? 0 : 1;
}
)";
  return o.str();
}

// The harness's per-net counts: line k holds net k + 2's toggles and rises.
void read_net_counts(const fs::path& path, ToggleCounts& t, size_t nets) {
  std::ifstream in(path);
  if (!in) throw FileError(path.string(), "cannot be read (the gate-level run wrote no net counts)");
  t.toggles.assign(nets, 0);
  t.rises.assign(nets, 0);
  for (size_t net = 2; net < nets; ++net)
    if (!(in >> t.toggles[net] >> t.rises[net]))
      throw FileError(path.string(), "net counts end at net " + std::to_string(net) + " of " + std::to_string(nets));
}

// The names listed under `var += \` in a Verilator class-list makefile.
std::vector<std::string> make_list(const std::string& mk, const std::string& var) {
  std::vector<std::string> names;
  const std::string head = var + " += \\\n";
  const size_t at = mk.find(head);
  if (at == std::string::npos) return names;
  std::istringstream in(mk.substr(at + head.size()));
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string w;
    while (words >> w)
      if (w != "\\") names.push_back(w);
    if (line.empty() || line.back() != '\\') break;
  }
  return names;
}

// The nets are public_flat_rd only so that Verilator keeps them as members, which the harness reads
// directly (rootp). Verilator also enters every one into its scope table for name lookups (VPI),
// one varInsert per net: for an 8x8, 122 files of 1,000 calls, 15 MB of C++ and about 50 s of g++.
// Nothing looks names up, so each file that only fills that table keeps its function with an empty
// body. A file with anything else in it (another Verilator version's layout) is left as it is.
// Returns how many files were emptied.
int empty_scope_table_files(const fs::path& obj, const std::vector<std::string>& slow) {
  const std::string syms = std::string("V") + kTop + "__Syms";
  int emptied = 0;
  for (const std::string& c : slow) {
    if (c.rfind(syms + "__", 0) != 0) continue;
    const fs::path file = obj / (c + ".cpp");
    std::istringstream in(read_file(file));
    std::string head, signature;
    bool only_inserts = true;
    int inserts = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line.rfind("//", 0) == 0 || line.rfind("#include", 0) == 0) {
        head += line + "\n";
      } else if (signature.empty() && line.rfind("void " + syms + "::" + syms + "_", 0) == 0 &&
                 line.size() > 2 && line.compare(line.size() - 2, 2, " {") == 0) {
        signature = line.substr(0, line.find('('));
      } else if (line.rfind("    __Vscope_", 0) == 0 && line.find(".varInsert(") != std::string::npos) {
        ++inserts;
      } else if (line != "}") {
        only_inserts = false;
        break;
      }
    }
    if (!only_inserts || signature.empty() || inserts == 0) continue;
    write_file_atomic(file, head + signature + "(int) {}  // scope table entries dropped by kaleido\n");
    ++emptied;
  }
  return emptied;
}

// Verilator's make compiles every generated file on its own, and every one of
// them parses the model's header: one member per net, 8 s a file for an 8x8 and
// over a hundred files. Instead the files of one optimisation class are
// compiled as `groups` unity files (#include lists, balanced by size); returns
// their names for the makefile's class lists.
std::string unity_files(const fs::path& obj, const std::vector<std::string>& classes, int groups,
                        const std::string& tag) {
  std::vector<std::pair<uintmax_t, std::string>> by_size;
  for (const std::string& c : classes) by_size.emplace_back(fs::file_size(obj / (c + ".cpp")), c);
  std::sort(by_size.begin(), by_size.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  const size_t n = std::min(by_size.size(), static_cast<size_t>(std::max(1, groups)));
  std::vector<uintmax_t> bytes(n, 0);
  std::vector<std::string> text(n);
  for (const auto& [size, name] : by_size) {
    const size_t g = static_cast<size_t>(std::min_element(bytes.begin(), bytes.end()) - bytes.begin());
    bytes[g] += size;
    text[g] += "#include \"" + name + ".cpp\"\n";
  }
  std::string names;
  for (size_t g = 0; g < n; ++g) {
    const std::string name = "kld_unity_" + tag + "_" + std::to_string(g);
    write_file_atomic(obj / (name + ".cpp"), text[g]);
    names += (g ? " " : "") + name;
  }
  return names;
}

}  // namespace

struct GateLevelSim::Impl {
  const FlatNetlist& n;
  GateLevelOptions opt;
  std::vector<SramPorts> srams;
  fs::path exe;
  double build_s = 0;
  std::atomic<int> runs{0};  // run() may be called from several threads at once
  Impl(const FlatNetlist& netlist, GateLevelOptions o) : n(netlist), opt(std::move(o)) {}
};

GateLevelSim::GateLevelSim(const FlatNetlist& netlist, GateLevelOptions opt)
    : impl_(std::make_unique<Impl>(netlist, std::move(opt))) {
  Impl& s = *impl_;
  const auto t0 = std::chrono::steady_clock::now();
  if (s.opt.work_dir.empty()) throw Error("gate-level simulation: no work folder given");
  fs::create_directories(s.opt.work_dir);
  const NetlistPort* clk = netlist.port(s.opt.clock_port);
  if (!clk || !clk->input || clk->nets.size() != 1)
    throw Error("the netlist has no one-bit clock input `" + s.opt.clock_port + "` to simulate with");

  for (const NetlistBlackBox& b : netlist.blackboxes) s.srams.push_back(recognise_sram(b, s.opt.srams));
  std::vector<InputBit> input_bits;
  std::vector<std::vector<std::string>> outputs;
  const std::string flat = flat_verilog(netlist, s.srams, input_bits, outputs);
  int clock_bit = -1, in_ports = 0;
  for (size_t p = 0, bit = 0; p < netlist.ports.size(); ++p) {
    if (!netlist.ports[p].input) continue;
    ++in_ports;
    if (netlist.ports[p].name == s.opt.clock_port) clock_bit = static_cast<int>(bit);
    bit += netlist.ports[p].nets.size();
  }
  const fs::path dir = s.opt.work_dir;
  write_file_atomic(dir / "kld_gl.v", flat);
  write_file_atomic(dir / "harness.cpp",
                    harness_cpp(input_bits, static_cast<size_t>(in_ports), clock_bit, rising_edge_flops_only(netlist),
                                s.srams.size(), outputs,
                                netlist.num_nets));
  if (s.opt.progress)
    s.opt.progress("building the gate-level model of " + netlist.top + " (" + std::to_string(netlist.cells.size()) +
                   " cells, " + std::to_string(netlist.num_nets) + " nets) with Verilator ...");
  const std::string verilator = find_tool("verilator", "verilator");
  const fs::path obj = dir / "obj";
  const int jobs = std::max(1, s.opt.build_jobs);
  // Functions of at most 1,000 statements: g++ -O1 on Verilator's default
  // (one function per file) takes 8x longer than on the split ones.
  const std::vector<std::string> verilate = {
      verilator, "--cc", "--exe", "-Wno-fatal", "-Wno-lint", "-Wno-style", "--x-assign", "fast", "--x-initial", "fast",
      "--output-split-cfuncs", "1000", "--top-module", kTop, "-Mdir", obj.string(), "-o", "kld_gl_sim",
      (dir / "kld_gl.v").string(), (dir / "harness.cpp").string()};
  const ToolRun v = run_tool(verilate, dir, dir / "verilator.log");
  if (v.exit_code != 0)
    throw Error("Verilator could not translate the gate-level model (log " + v.log.string() + "):\n" +
                tail_lines(v.output, 30));
  const std::string classes = read_file(obj / (std::string("V") + kTop + "_classes.mk"));
  std::vector<std::string> fast = make_list(classes, "VM_CLASSES_FAST"), slow = make_list(classes, "VM_CLASSES_SLOW");
  for (const std::string& c : make_list(classes, "VM_SUPPORT_FAST")) fast.push_back(c);
  for (const std::string& c : make_list(classes, "VM_SUPPORT_SLOW")) slow.push_back(c);
  if (fast.empty() || slow.empty())
    throw Error("cannot read Verilator's class lists in " + (obj / (std::string("V") + kTop + "_classes.mk")).string());
  empty_scope_table_files(obj, slow);
  // The model's straight-line code compiles at -O1 in about the time of -O0 once its functions are
  // split (8.5 s against 8.1 s for one file of an 8x8), so the replay keeps -O1; the once-only
  // (slow) code is not optimised.
  std::vector<std::string> make = {find_tool("make", "make"), "-C", obj.string(), "-f", std::string("V") + kTop + ".mk",
                                   "-j", std::to_string(jobs), "OPT_FAST=-O1", "OPT_SLOW=-O0",
                                   "VM_CLASSES_FAST=" + unity_files(obj, fast, jobs, "fast"),
                                   "VM_CLASSES_SLOW=" + unity_files(obj, slow, jobs, "slow"), "VM_SUPPORT_FAST=",
                                   "VM_SUPPORT_SLOW="};
  // Verilator's runtime library is compiled for every model: ccache, when present, makes that free.
  if (on_path("ccache")) make.push_back("OBJCACHE=ccache");
  make.push_back("kld_gl_sim");
  const ToolRun b = run_tool(make, dir, dir / "verilator_build.log");
  if (b.exit_code != 0)
    throw Error("the gate-level model did not compile (log " + b.log.string() + "):\n" + tail_lines(b.output, 30));
  s.exe = dir / "obj" / "kld_gl_sim";
  s.build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

GateLevelSim::~GateLevelSim() = default;

double GateLevelSim::build_seconds() const { return impl_->build_s; }

namespace {

// Window [from, to) of a replay: the differences of the counts written at its two ends. A net's
// rises follow from its toggles and its values at both ends, as in the harness.
ToggleCounts window_counts(const fs::path& net_counts, const fs::path& sram_counts, uint64_t from, uint64_t to,
                           const ToggleCounts& whole) {
  const size_t nets = whole.toggles.size();
  auto snapshot = [&](uint64_t cycle, std::vector<uint64_t>& toggles, std::vector<uint64_t>& values,
                      std::vector<SramAccessCount>& srams) {
    const fs::path np = net_counts.string() + "." + std::to_string(cycle);
    std::ifstream in(np);
    toggles.assign(nets, 0);
    values.assign(nets, 0);
    for (size_t net = 2; net < nets; ++net)
      if (!(in >> toggles[net] >> values[net]))
        throw FileError(np.string(), "snapshot ends at net " + std::to_string(net) + " of " + std::to_string(nets));
    const fs::path sp = sram_counts.string() + "." + std::to_string(cycle);
    std::ifstream sin(sp);
    srams = whole.srams;
    for (SramAccessCount& a : srams)
      if (!(sin >> a.reads >> a.writes)) throw FileError(sp.string(), "SRAM access counts missing");
  };
  std::vector<uint64_t> t0, v0, t1, v1;
  std::vector<SramAccessCount> s0, s1;
  snapshot(from, t0, v0, s0);
  snapshot(to, t1, v1, s1);
  ToggleCounts w;
  w.cycles = to - from;
  w.stimulus = whole.stimulus + ", cycles " + std::to_string(from) + " to " + std::to_string(to) + " of the replay";
  w.toggles.assign(nets, 0);
  w.rises.assign(nets, 0);
  for (size_t net = 2; net < nets; ++net) {
    if (t1[net] < t0[net]) throw InternalError("toggle counts fell between two snapshots");
    w.toggles[net] = t1[net] - t0[net];
    w.rises[net] = (w.toggles[net] + v1[net] - v0[net]) / 2;
  }
  w.srams = s1;
  for (size_t k = 0; k < w.srams.size(); ++k) {
    w.srams[k].reads -= s0[k].reads;
    w.srams[k].writes -= s0[k].writes;
  }
  return w;
}

}  // namespace

ToggleCounts GateLevelSim::run(Stimulus& stimulus, const SimOptions& so, const fs::path& output_trace) {
  Impl& s = *impl_;
  if (so.cycles == 0) throw ConfigError("simulation cycles", "0", "must be at least 1");
  if (so.clock_port != s.opt.clock_port)
    throw Error("gate-level model built for clock `" + s.opt.clock_port + "`, run asked for `" + so.clock_port + "`");
  const fs::path dir = s.opt.work_dir / ("run" + std::to_string(s.runs++));
  fs::create_directories(dir);
  const fs::path vectors = dir / "vectors.txt", net_counts = dir / "nets.txt", counts = dir / "srams.txt";
  record_vectors(stimulus, s.n, so.warmup + so.cycles, vectors);
  std::vector<uint64_t> snapshots;
  for (const auto& [from, to] : so.windows) {
    if (from < so.warmup || to <= from || to > so.warmup + so.cycles)
      throw InternalError("counted window [" + std::to_string(from) + ", " + std::to_string(to) +
                          ") is not inside the replay's [" + std::to_string(so.warmup) + ", " +
                          std::to_string(so.warmup + so.cycles) + ")");
    snapshots.push_back(from);
    snapshots.push_back(to);
  }
  std::sort(snapshots.begin(), snapshots.end());
  snapshots.erase(std::unique(snapshots.begin(), snapshots.end()), snapshots.end());
  std::string snapshot_list;
  for (uint64_t c : snapshots) snapshot_list += (snapshot_list.empty() ? "" : ",") + std::to_string(c);
  std::vector<std::string> argv = {s.exe.string(),    vectors.string(), std::to_string(so.warmup),
                                   std::to_string(so.cycles), net_counts.string(), counts.string(),
                                   snapshot_list.empty() ? "-" : snapshot_list};
  if (!output_trace.empty()) argv.push_back(fs::absolute(output_trace).string());
  const ToolRun r = run_tool(argv, dir, dir / "run.log");
  if (r.exit_code != 0)
    throw Error("the gate-level replay failed (exit " + std::to_string(r.exit_code) + ", log " + r.log.string() +
                "):\n" + tail_lines(r.output, 20));
  ToggleCounts t;
  t.cycles = so.cycles;
  read_net_counts(net_counts, t, static_cast<size_t>(s.n.num_nets));
  t.stimulus = stimulus.describe();
  std::ifstream in(counts);
  for (const SramPorts& p : s.srams) {
    SramAccessCount a;
    a.path = p.path;
    a.modelled = p.modelled;
    a.ports = p.how;
    if (!(in >> a.reads >> a.writes)) throw FileError(counts.string(), "SRAM access counts missing");
    t.srams.push_back(a);
  }
  for (const auto& [from, to] : so.windows) t.windows.push_back(window_counts(net_counts, counts, from, to, t));
  return t;
}

}  // namespace kaleido::ppa
