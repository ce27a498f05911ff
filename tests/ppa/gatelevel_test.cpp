// Gate-level activity on Verilator: the mapped netlist computes what an
// independent model of the design computes, cycle by cycle; its toggle counts
// are exact (checked against flips the model makes); SRAMs are simulated and
// their accesses counted; the activity power responds to input activity.
// Each test builds one Verilator model (about 20 s), so checks of one design
// share a test. (Before the event-driven GateSim was retired, toggles, rises
// and SRAM accesses were checked equal to its counts on all three designs.)
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "ppa/gatelevel_sim.hpp"
#include "ppa/liberty.hpp"
#include "ppa/netlist.hpp"
#include "ppa/power_model.hpp"
#include "ppa/synth.hpp"
#include "ppa_helpers.hpp"

namespace kaleido::ppa {
namespace {

using test::data_dir;
using test::TempDir;

#define KLD_SKIP_WITHOUT_VERILATOR()                                                             \
  KLD_SKIP_WITHOUT_TOOLS();                                                                      \
  if (!test::have_tool("verilator")) GTEST_SKIP() << "verilator not installed (Debian package verilator); skipped"

// A mapped netlist (Yosys only), its library and its Verilator model.
struct Mapped {
  TempDir tmp{"gl"};
  SynthResult result;
  Library lib;
  FlatNetlist net;
  std::unique_ptr<GateLevelSim> sim;
  explicit Mapped(const std::string& top, const std::vector<std::string>& files) {
    SynthOptions o;
    o.top = top;
    for (const std::string& f : files) o.rtl_files.push_back(data_dir() / f);
    o.out_dir = tmp.path() / "out";
    o.clock_period_ns = 1.0;
    o.run_sta = false;
    result = run_synthesis_flow(o);
    lib = read_liberty(std::filesystem::path(result.prepared_liberty));
    net = flatten_yosys_json(nlohmann::json::parse(read_file(result.netlist_json)), top, lib);
    GateLevelOptions go;
    go.srams = result.sram_shapes;
    go.work_dir = tmp.path() / "gl";
    sim = std::make_unique<GateLevelSim>(net, go);
  }
  PowerSetup setup() const {
    PowerSetup s;
    s.period_s = 1e-9;
    s.output_load_f = result.output_load_f;
    s.driving_cell = result.driving_cell;
    return s;
  }
  // One trace line per cycle: the output ports' values, netlist order.
  std::vector<std::vector<std::string>> trace(Stimulus& stim, uint64_t cycles, ToggleCounts* counts = nullptr) {
    const auto path = tmp.path() / "trace.txt";
    SimOptions so;
    so.cycles = cycles;
    so.warmup = 0;
    const ToggleCounts t = sim->run(stim, so, path);
    if (counts) *counts = t;
    std::vector<std::vector<std::string>> rows;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      std::istringstream ss(line);
      rows.emplace_back();
      for (std::string v; ss >> v;) rows.back().push_back(v);
    }
    EXPECT_EQ(rows.size(), cycles);
    return rows;
  }
  size_t output_index(const std::string& port) const {
    size_t k = 0;
    for (const NetlistPort& p : net.ports) {
      if (p.input) continue;
      if (p.name == port) return k;
      ++k;
    }
    ADD_FAILURE() << "no output " << port;
    return 0;
  }
};

// Bits lo..lo+n-1 (n <= 64) of a hexadecimal value.
uint64_t hex_bits(const std::string& hex, int lo, int n) {
  uint64_t v = 0;
  for (int b = 0; b < n; ++b) {
    const size_t d = static_cast<size_t>((lo + b) / 4);
    if (d >= hex.size()) break;
    const int nib = std::stoi(std::string(1, hex[hex.size() - 1 - d]), nullptr, 16);
    v |= static_cast<uint64_t>((nib >> ((lo + b) % 4)) & 1) << b;
  }
  return v;
}

class FunctionStimulus : public Stimulus {
 public:
  explicit FunctionStimulus(std::function<void(uint64_t, InputDriver&)> f) : f_(std::move(f)) {}
  std::string describe() const override { return "test inputs"; }
  void drive(uint64_t cycle, InputDriver& in) override { f_(cycle, in); }

 private:
  std::function<void(uint64_t, InputDriver&)> f_;
};

// Independent model of ppa_mac: registered inputs, accumulate when the
// registered enable is set, 32-bit wrap.
struct MacModel {
  int8_t a_q = 0, b_q = 0;
  bool en_q = false;
  uint32_t acc = 0;
  void clock(int8_t a, int8_t b, bool en) {
    if (en_q) acc += static_cast<uint32_t>(static_cast<int32_t>(a_q) * static_cast<int32_t>(b_q));
    a_q = a;
    b_q = b;
    en_q = en;
  }
};

TEST(GateLevel, MacComputesCountsExactTogglesAndPowerFollowsActivity) {
  KLD_SKIP_WITHOUT_VERILATOR();
  Mapped m("ppa_mac", {"ppa_mac.v"});

  // 1. Cycle by cycle against the model.
  struct Drive {
    int8_t a = 0, b = 0;
    bool en = false;
  };
  std::vector<Drive> drives(300);
  uint64_t lcg = 12345;
  for (Drive& d : drives) {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    d = {static_cast<int8_t>(lcg >> 33), static_cast<int8_t>(lcg >> 45), ((lcg >> 60) & 3) != 0};
  }
  FunctionStimulus stim([&](uint64_t c, InputDriver& in) {
    in.set("rst_ni", c == 0 ? 0 : 1);
    if (c == 0) return;
    const Drive& d = drives[c - 1];
    in.set("a_i", static_cast<uint8_t>(d.a));
    in.set("b_i", static_cast<uint8_t>(d.b));
    in.set("en_i", d.en ? 1 : 0);
  });
  const auto rows = m.trace(stim, drives.size() + 1);
  MacModel model;
  const size_t acc = m.output_index("acc_o");
  for (size_t c = 1; c < rows.size(); ++c) {
    const Drive& d = drives[c - 1];
    model.clock(d.a, d.b, d.en);
    ASSERT_EQ(hex_bits(rows[c][acc], 0, 32), model.acc) << "cycle " << c;
  }

  // 2. Toggle counts: acc_o bits flip exactly as often as the model's
  // accumulator bits, input bits as often as the stimulus flips them, the
  // clock twice per cycle.
  const uint64_t warmup = 8, cycles = 400;
  SimOptions so;
  so.cycles = cycles;
  so.warmup = warmup;
  RandomStimulus random(7, 0.5);
  const ToggleCounts t = m.sim->run(random, so);
  std::map<std::string, uint64_t> v;
  struct Recorder : InputDriver {
    std::map<std::string, uint64_t>& v;
    std::vector<std::string> names;
    explicit Recorder(std::map<std::string, uint64_t>& values) : v(values) {}
    std::vector<std::string> input_ports() const override { return names; }
    int width(const std::string& p) const override { return p == "a_i" || p == "b_i" ? 8 : 1; }
    void set(const std::string& p, uint64_t x) override { v[p] = x; }
    void set_bit(const std::string& p, int b, bool x) override {
      v[p] = (v[p] & ~(uint64_t{1} << b)) | (static_cast<uint64_t>(x) << b);
    }
    bool get_bit(const std::string& p, int b) const override {
      auto it = v.find(p);
      return it != v.end() && ((it->second >> b) & 1u);
    }
  } rec(v);
  // The stimulus draws random numbers per port in the netlist's order.
  for (const NetlistPort& p : m.net.ports)
    if (p.input) rec.names.push_back(p.name);
  RandomStimulus again(7, 0.5);
  MacModel mm;
  uint64_t acc_flips = 0, a_flips = 0;
  for (uint64_t c = 0; c < warmup + cycles; ++c) {
    const uint64_t a_before = v["a_i"];
    again.drive(c, rec);
    const bool counting = c >= warmup;
    if (counting) a_flips += static_cast<uint64_t>(__builtin_popcountll(a_before ^ v["a_i"]));
    const uint32_t before = mm.acc;
    if (v["rst_ni"] == 0) mm = MacModel();
    else mm.clock(static_cast<int8_t>(v["a_i"]), static_cast<int8_t>(v["b_i"]), v["en_i"] != 0);
    if (counting) acc_flips += static_cast<uint64_t>(__builtin_popcount(before ^ mm.acc));
  }
  uint64_t sim_acc = 0, sim_a = 0, acc_rises = 0;
  for (int net : m.net.port("acc_o")->nets) {
    sim_acc += t.toggles[static_cast<size_t>(net)];
    acc_rises += t.rises[static_cast<size_t>(net)];
  }
  for (int net : m.net.port("a_i")->nets) sim_a += t.toggles[static_cast<size_t>(net)];
  EXPECT_GT(acc_flips, 1000u);
  EXPECT_EQ(sim_acc, acc_flips);
  EXPECT_EQ(sim_a, a_flips);
  EXPECT_EQ(t.toggles[static_cast<size_t>(m.net.port("clk_i")->nets[0])], 2 * cycles);
  EXPECT_EQ(t.rises[static_cast<size_t>(m.net.port("clk_i")->nets[0])], cycles);
  EXPECT_NEAR(static_cast<double>(acc_rises), static_cast<double>(sim_acc) / 2, 32.0);

  // 3. Power grows with the input toggle rate; constant inputs leave only the
  // flops' clock pins: per cycle one rising and one falling edge of
  // 0.5 x 4 C_inv VDD^2 each (generic library).
  const PowerModel pm(m.net, m.lib, m.setup());
  auto power = [&](double p) {
    RandomStimulus s(7, p);
    return pm.evaluate(pm.simulated_activity(m.sim->run(s, so)), InternalPowerConvention::PerTransition);
  };
  const PowerBreakdown constant = power(0.0), slow = power(0.1), busy = power(0.5);
  EXPECT_LT(constant.total_w(), slow.total_w());
  EXPECT_LT(slow.total_w(), busy.total_w());
  EXPECT_LT(slow.switching_w, busy.switching_w);
  EXPECT_LT(slow.internal_w, busy.internal_w);
  EXPECT_DOUBLE_EQ(constant.leakage_w, busy.leakage_w);
  EXPECT_NE(busy.activity_source.find("flips with probability 0.5"), std::string::npos) << busy.activity_source;
  EXPECT_EQ(constant.switching_w, 0.0);
  const double per_flop = 2 * 0.5 * 4 * 1.6e-15 * 1.1 * 1.1 / 1e-9;
  EXPECT_NEAR(constant.internal_w, 49 * per_flop, 1e-9 * 49 * per_flop);
  EXPECT_GT(constant.input_net_switching_w, 0.0) << "the clock net toggles";

  // 4. A vector file: 3*5 + (-2)*2 = 11 after the pipeline drains.
  const auto file = m.tmp.path() / "in.vec";
  write_file_atomic(file, "# test vectors\nports: rst_ni en_i a_i b_i\n0 0 0 0\n1 1 03 05\n1 1 fe 02\n1 0 00 00\n1 0 00 00\n");
  VectorFileStimulus vec(file.string());
  EXPECT_EQ(vec.cycles(), 5u);
  const auto vrows = m.trace(vec, 5);
  EXPECT_EQ(hex_bits(vrows.back()[acc], 0, 32), 11u);
  const auto bad = m.tmp.path() / "bad.vec";
  write_file_atomic(bad, "ports: a_i\nzz\n");
  EXPECT_THROW(VectorFileStimulus(bad.string()), FileError);
}

TEST(GateLevel, GridPesAccumulateTheirOwnRowAndColumn) {
  KLD_SKIP_WITHOUT_VERILATOR();
  Mapped m("ppa_grid2x2", {"ppa_mac.v", "ppa_grid2x2.v"});
  auto a_of = [](uint64_t c) { return static_cast<uint16_t>(c * 7919 + 17); };
  auto b_of = [](uint64_t c) { return static_cast<uint16_t>(c * 104729 + 3); };
  FunctionStimulus stim([&](uint64_t c, InputDriver& in) {
    in.set("rst_ni", c == 0 ? 0 : 1);
    in.set("en_i", c == 0 ? 0 : 1);
    if (c == 0) return;
    in.set("a_i", a_of(c - 1));
    in.set("b_i", b_of(c - 1));
  });
  ToggleCounts t;
  const auto rows = m.trace(stim, 51, &t);
  MacModel pe[2][2];
  const size_t acc = m.output_index("acc_o");
  for (uint64_t c = 1; c < rows.size(); ++c) {
    for (int r = 0; r < 2; ++r)
      for (int k = 0; k < 2; ++k)
        pe[r][k].clock(static_cast<int8_t>(a_of(c - 1) >> (8 * r)), static_cast<int8_t>(b_of(c - 1) >> (8 * k)), true);
    for (int r = 0; r < 2; ++r)
      for (int k = 0; k < 2; ++k)
        ASSERT_EQ(hex_bits(rows[c][acc], 32 * (2 * r + k), 32), pe[r][k].acc) << "PE " << r << "," << k << " cycle " << c;
  }
  // Every PE's accumulator bits flip as the model's do (the counts are exact).
  uint64_t acc_toggles = 0, model_flips = 0;
  for (int net : m.net.port("acc_o")->nets) acc_toggles += t.toggles[static_cast<size_t>(net)];
  MacModel again[2][2];
  for (uint64_t c = 1; c < rows.size(); ++c)
    for (int r = 0; r < 2; ++r)
      for (int k = 0; k < 2; ++k) {
        const uint32_t before = again[r][k].acc;
        again[r][k].clock(static_cast<int8_t>(a_of(c - 1) >> (8 * r)), static_cast<int8_t>(b_of(c - 1) >> (8 * k)), true);
        model_flips += static_cast<uint64_t>(__builtin_popcount(before ^ again[r][k].acc));
      }
  EXPECT_GT(model_flips, 500u);
  EXPECT_EQ(acc_toggles, model_flips);
}

TEST(GateLevel, SramsAreSimulatedAndTheirAccessesCounted) {
  KLD_SKIP_WITHOUT_VERILATOR();
  Mapped m("ppa_sram_acc", {"kld_sram.v", "kld_sram_16x8_r2.v", "ppa_sram_acc.v"});
  // Read ports traced in the RTL: registered on kld_sram, asynchronous on the other.
  ASSERT_EQ(m.result.srams.size(), 2u);
  auto we_of = [](uint64_t c) { return c < 16 || (c % 3 == 0); };
  auto addr_of = [](uint64_t c) { return static_cast<uint8_t>((c * 5) & 15); };
  auto wdata_of = [](uint64_t c) { return static_cast<uint8_t>(c * 37 + 1); };
  FunctionStimulus stim([&](uint64_t c, InputDriver& in) {
    in.set("rst_ni", c == 0 ? 0 : 1);
    if (c == 0) return;
    in.set("we_i", we_of(c - 1));
    in.set("addr_i", addr_of(c - 1));
    in.set("wdata_i", wdata_of(c - 1));
  });
  const auto rows = m.trace(stim, 65);
  // Independent model: both memories take the same writes. At the edge the
  // sum adds the registered read and both asynchronous reads (old contents),
  // the registered read takes the old word, then the write.
  uint8_t mem[16] = {0};
  uint8_t rdata_q = 0, sum = 0;
  const size_t rdata_o = m.output_index("rdata_o"), sum_o = m.output_index("sum_o");
  for (uint64_t c = 1; c < rows.size(); ++c) {
    const uint8_t addr = addr_of(c - 1);
    const uint8_t rd0 = mem[addr], rd1 = mem[(addr + 1) & 15];
    sum = static_cast<uint8_t>(sum + rdata_q + rd0 + rd1);
    rdata_q = mem[addr];
    if (we_of(c - 1)) mem[addr] = wdata_of(c - 1);
    ASSERT_EQ(hex_bits(rows[c][rdata_o], 0, 8), rdata_q) << "cycle " << c;
    ASSERT_EQ(hex_bits(rows[c][sum_o], 0, 8), sum) << "cycle " << c;
  }
  // A window counted inside a replay (the counts at its two ends) is the same window replayed
  // alone, net by net and access by access; a window over the whole counted range is the replay.
  SimOptions whole;
  whole.cycles = 60;
  whole.warmup = 4;
  whole.windows = {{10, 40}, {4, 64}};
  const ToggleCounts w = m.sim->run(stim, whole);
  SimOptions alone;
  alone.warmup = 10;
  alone.cycles = 30;
  const ToggleCounts by_itself = m.sim->run(stim, alone);
  ASSERT_EQ(w.windows.size(), 2u);
  for (const auto& [inside, own] : {std::pair{&w.windows[0], &by_itself}, std::pair{&w.windows[1], &w}}) {
    EXPECT_EQ(inside->cycles, own->cycles);
    EXPECT_EQ(inside->toggles, own->toggles);
    EXPECT_EQ(inside->rises, own->rises);
    ASSERT_EQ(inside->srams.size(), own->srams.size());
    for (size_t k = 0; k < own->srams.size(); ++k) {
      EXPECT_EQ(inside->srams[k].reads, own->srams[k].reads) << own->srams[k].path;
      EXPECT_EQ(inside->srams[k].writes, own->srams[k].writes) << own->srams[k].path;
    }
  }
  uint64_t toggles_inside = 0;
  for (uint64_t n : w.windows[0].toggles) toggles_inside += n;
  EXPECT_GT(toggles_inside, 100u);  // the window is not idle
  whole.windows = {{2, 40}};
  EXPECT_THROW(m.sim->run(stim, whole), InternalError) << "a window before the counted cycles";

  RandomStimulus random(3, 0.5);
  SimOptions so;
  so.cycles = 100;
  so.warmup = 4;
  const ToggleCounts t = m.sim->run(random, so);
  ASSERT_EQ(t.srams.size(), 2u);
  for (const SramAccessCount& a : t.srams) {
    EXPECT_TRUE(a.modelled) << a.ports;
    EXPECT_GT(a.writes, 20u);
    EXPECT_LT(a.writes, 80u);
    if (a.path == "u_mem") {
      EXPECT_EQ(a.reads, 100u) << "a registered port without enable reads every cycle";
    } else {
      // Two asynchronous ports, each counted in cycles where its address moved.
      EXPECT_GT(a.reads, 100u) << a.ports;
      EXPECT_LE(a.reads, 200u) << a.ports;
    }
  }
}

}  // namespace
}  // namespace kaleido::ppa
