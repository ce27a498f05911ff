// `kaleido flow` end to end on a tiny configuration (2x2 PEs, 2x4x4 tokens):
// every stage runs, the report's figures are consistent with the stages'
// own results, and a failing stage is named with its log kept.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "flow/flow.hpp"
#include "golden/gemm.hpp"
#include "golden/quant.hpp"
#include "golden/reuse.hpp"
#include "golden/workload.hpp"
#include "hw/generator.hpp"
#include "hw/sram_budget.hpp"
#include "ppa/yosys_flow.hpp"
#include "support/test_dir.hpp"
#include "support/tools.hpp"

namespace kaleido {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using testing::have_tool;

#define REQUIRE_TOOLS()                                                                       \
  if (!have_tool("verilator") || !have_tool("yosys") || !have_tool("sta"))                    \
  GTEST_SKIP() << "verilator, yosys or sta missing (Debian packages verilator, yosys, opensta)"

// A folder of this test process's own (tests run in parallel processes).
fs::path temp_dir(const std::string& name) {
  const fs::path d = kaleido::testing::process_dir(name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

hw::HwConfig tiny_hw() {
  hw::HwConfig c;
  c.rows = 2;
  c.cols = 2;
  c.group_w = 2;
  c.data_w = 8;
  c.acc_w = 24;
  c.max_t = 2;
  c.max_h = 4;
  c.max_w = 4;
  c.max_k = 8;
  c.max_m = 4;
  c.win_cap = 16;
  return c;
}

// A strongly correlated synthetic workload that fills the tiny configuration;
// `tau` per group decides how much is reused.
flow::FlowOptions tiny_flow(const fs::path& dir, uint32_t tau) {
  flow::FlowOptions o;
  o.hw = tiny_hw();
  ReuseConfig& c = o.cfg;
  c.grid = {2, 4, 4};
  c.channels = 8;
  c.out_cols = 4;
  c.group_w = 2;
  c.data_w = 8;
  c.acc_w = 24;
  c.tau.assign(4, tau);
  SyntheticSpec s;
  s.grid = c.grid;
  s.channels = c.channels;
  s.seed = 7;
  s.spatial_corr = 0.95;
  s.temporal_corr = 0.97;
  s.noise = 0.03;
  o.a = quantize(make_latent(s), c.data_w).q;
  o.b = make_int_weights(c.channels, c.out_cols, c.data_w, 8);
  o.workload = {{"kind", "synthetic"}, {"seed", 7}};
  o.report_dir = dir / "report";
  o.work_dir = dir / "work";
  o.clock_ns = 5.0;
  return o;
}

struct TinyRun {
  flow::FlowOptions opt;
  flow::FlowResult result;
};

// One run shared by the tests of the report (each run synthesises twice).
const TinyRun& high_reuse_run() {
  static const TinyRun r = [] {
    TinyRun t;
    t.opt = tiny_flow(temp_dir("high"), 120);
    // A further B tile, run with CTRL.KEEP after the reuse run (as the main job's next key tile).
    t.opt.kept_b = make_int_weights(t.opt.cfg.channels, t.opt.cfg.out_cols, t.opt.cfg.data_w, 9);
    t.result = flow::run_flow(t.opt);
    return t;
  }();
  return r;
}

TEST(Flow, TinyConfigurationEndToEnd) {
  REQUIRE_TOOLS();
  const TinyRun& t = high_reuse_run();
  const flow::FlowResult& r = t.result;
  EXPECT_TRUE(r.bit_exact);
  ASSERT_EQ(r.stages.size(), 7u);
  const std::vector<std::string> names{"generate", "lint", "golden model", "simulate", "synthesise kld_top",
                                       "synthesise kld_plain_top", "report"};
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(r.stages[i].name, names[i]);

  // The files of the report, and the JSON on disk is what the result holds.
  for (const char* f : {"flow.md", "flow.json", "sim.json", "cycles.svg", "reuse_groups.svg", "area_blocks.svg",
                        "energy_per_mac.svg", "synth_kld_top.md", "synth_kld_plain_top.md"})
    EXPECT_TRUE(fs::exists(t.opt.report_dir / f)) << f;
  const json j = json::parse(read_file(r.json));
  EXPECT_EQ(j, r.report);
  int logs = 0;
  for (const auto& e : fs::directory_iterator(t.opt.work_dir / "logs")) logs += e.path().extension() == ".log";
  EXPECT_EQ(logs, 7) << "one log per stage";

  // The headline is the Markdown's last section and agrees with the stages.
  const std::string md = read_file(r.markdown);
  const size_t head = md.rfind("## Headline");
  ASSERT_NE(head, std::string::npos);
  EXPECT_EQ(md.find("\n## ", head + 1), std::string::npos) << "headline is not last";
  EXPECT_NE(md.find("bit-exact (RTL vs golden model, both modes): **yes**", head), std::string::npos);
  const json& h = j.at("headline");
  EXPECT_EQ(h.at("bit_exact"), true);
  EXPECT_DOUBLE_EQ(h.at("speedup").get<double>(), j.at("simulation").at("speedup").get<double>());
  EXPECT_GT(h.at("area_mm2").get<double>(), 0.0);
  EXPECT_GT(h.at("fmax_mhz").get<double>(), 0.0);
  EXPECT_GT(h.at("power_reuse_mw").get<double>(), 0.0);
  // SRAM bits as the manifest's roles give them (tests/hw/sram_budget_test.cpp counts them in the RTL).
  EXPECT_EQ(h.at("sram_bits_total").get<int64_t>(), hw::sram_bits_total(hw::sram_roles(t.opt.hw, "kld_top")));
  EXPECT_NE(md.find("- SRAM: " + std::to_string(h.at("sram_bits_total").get<int64_t>()) + " bits", head),
            std::string::npos);

  // The golden model's reuse ratio is the one an independent run gives.
  const IntReuse g = run_reuse(t.opt.cfg, t.opt.a);
  EXPECT_DOUBLE_EQ(h.at("reuse_ratio").get<double>(), g.counters.reuse_ratio());
  EXPECT_GT(g.counters.reuse_ratio(), 0.5) << "the workload should reuse most pairs";

  // Quality: SNR first, cosine, and PSNR with its peak, as computed here from the golden
  // model's reuse output against the exact product (a plain triple loop).
  const WideMatrix approx = reuse_output(t.opt.cfg, t.opt.a, t.opt.b, g);
  double signal = 0, error = 0, dot = 0, norm_approx = 0, peak = 0;
  for (int64_t n = 0; n < t.opt.a.rows; ++n)
    for (int64_t m = 0; m < t.opt.b.cols; ++m) {
      double exact = 0;
      for (int64_t k = 0; k < t.opt.a.cols; ++k)
        exact += static_cast<double>(t.opt.a.at(n, k)) * static_cast<double>(t.opt.b.at(k, m));
      const double x = static_cast<double>(approx.at(n, m));
      signal += exact * exact;
      error += (x - exact) * (x - exact);
      dot += x * exact;
      norm_approx += x * x;
      peak = std::max(peak, std::abs(exact));
    }
  const json& golden = j.at("golden");
  ASSERT_GT(error, 0.0) << "the workload should have some reuse error";
  EXPECT_NEAR(h.at("snr_db").get<double>(), 10 * std::log10(signal / error), 1e-6);
  EXPECT_NEAR(h.at("cosine").get<double>(), dot / std::sqrt(signal * norm_approx), 1e-9);
  EXPECT_DOUBLE_EQ(h.at("psnr_peak").get<double>(), peak);
  EXPECT_NEAR(golden.at("psnr_db").get<double>(),
              10 * std::log10(peak * peak * static_cast<double>(approx.data.size()) / error), 1e-6);
  EXPECT_NE(md.find("SNR vs exact (dB)"), std::string::npos);

  // Area: kld_top = sum of its blocks; it is larger than the dense baseline.
  const json& top = j.at("synthesis").at("kld_top");
  const json& plain = j.at("synthesis").at("kld_plain_top");
  const double top_logic = top.at("metrics").at("design__instance__area__stdcell").at("value").get<double>();
  const double plain_logic = plain.at("metrics").at("design__instance__area__stdcell").at("value").get<double>();
  EXPECT_GT(top_logic, plain_logic);
  EXPECT_NEAR(h.at("logic_area_overhead_vs_plain").get<double>(), top_logic / plain_logic - 1.0, 1e-9);

  // The RTL simulated is the RTL synthesised, and the report says so; each top is hashed over the files
  // it needs, computed here from the generated folder.
  const fs::path generated_dir = t.opt.work_dir / "rtl";
  const std::string generated = flow::top_rtl_hash(generated_dir, "kld_top");
  const std::string generated_plain = flow::top_rtl_hash(generated_dir, "kld_plain_top");
  EXPECT_NE(generated, generated_plain);
  const json& hashes = j.at("rtl_hash");
  EXPECT_EQ(hashes.at("simulated"), generated);
  EXPECT_EQ(hashes.at("synthesised").at("kld_top"), generated);
  EXPECT_EQ(hashes.at("synthesised").at("kld_plain_top"), generated_plain);
  EXPECT_EQ(top.at("design").at("rtl_hash"), generated);
  EXPECT_EQ(plain.at("design").at("rtl_hash"), generated_plain);
  EXPECT_NE(md.find("simulated kld_top " + generated), std::string::npos);
}

TEST(Flow, RtlHashesCompareContentNotFolders) {
  kaleido::testing::TestDir dir("hash");
  hw::write_rtl(tiny_hw(), dir.path() / "a");
  hw::write_rtl(tiny_hw(), dir.path() / "b");
  const std::string ha = flow::top_rtl_hash(dir.path() / "a", "kld_top");
  const std::string hb = flow::top_rtl_hash(dir.path() / "b", "kld_top");
  EXPECT_EQ(ha, hb);
  EXPECT_EQ(ha.size(), 16u);
  EXPECT_NO_THROW(flow::check_same_rtl("kld_top", dir.path() / "a", hb, dir.path() / "b"));
  // One changed byte in a file kld_top needs: another design.
  const fs::path merge = dir.path() / "b" / "kld_merge.v";
  std::string text = read_file(merge);
  text.back() = text.back() == ' ' ? '\t' : ' ';
  write_file_atomic(merge, text);
  const std::string changed = flow::top_rtl_hash(dir.path() / "b", "kld_top");
  EXPECT_NE(changed, ha);
  try {
    flow::check_same_rtl("kld_top", dir.path() / "a", changed, dir.path() / "b");
    FAIL() << "different RTL must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(ha), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(changed), std::string::npos) << e.what();
  }
  // kld_plain_top does not need kld_merge: its hash and check are unaffected.
  EXPECT_EQ(flow::top_rtl_hash(dir.path() / "b", "kld_plain_top"),
            flow::top_rtl_hash(dir.path() / "a", "kld_plain_top"));
  EXPECT_NO_THROW(flow::check_same_rtl("kld_plain_top", dir.path() / "a",
                                       flow::top_rtl_hash(dir.path() / "b", "kld_plain_top"), dir.path() / "b"));
}

TEST(Flow, RtlFilesForTopFollowInstancesNotComments) {
  kaleido::testing::TestDir dir("closure");
  write_file_atomic(dir.path() / "a.v", "module a (input x);\n  b u_b (.x(x));\nendmodule\n");
  write_file_atomic(dir.path() / "b.v", "// c is not used\nmodule b (input x);\n  /* c u_c (); */\nendmodule\n");
  write_file_atomic(dir.path() / "c.v", "module c;\nendmodule\n");
  write_file_atomic(dir.path() / "d.v", "module d;\n  a u_a (.x(1'b0));\nendmodule\n");
  const std::vector<fs::path> all = ppa::rtl_files_in(dir.path());
  const auto names = [](const std::vector<fs::path>& files) {
    std::string out;
    for (const fs::path& f : files) out += f.filename().string() + " ";
    return out;
  };
  EXPECT_EQ(names(ppa::rtl_files_for_top(all, "a")), "a.v b.v ");
  EXPECT_EQ(names(ppa::rtl_files_for_top(all, "d")), "a.v b.v d.v ");
  EXPECT_EQ(names(ppa::rtl_files_for_top(all, "c")), "c.v ");
  EXPECT_THROW(ppa::rtl_files_for_top(all, "e"), ConfigError);
  // SystemVerilog: an imported package and a primitive follow their users; a file of definitions only
  // (read by `include) is always kept.
  write_file_atomic(dir.path() / "p.sv", "package p;\n  localparam int W = 4;\nendpackage\n");
  write_file_atomic(dir.path() / "u.v", "primitive u (output y, input i);\n  table 0 : 1; 1 : 0; endtable\nendprimitive\n");
  write_file_atomic(dir.path() / "s.sv", "module s import p::*; (input x);\n  u u_inv (y, x);\nendmodule\n");
  write_file_atomic(dir.path() / "defs.vh", "`define KLD_W 4\n");
  write_file_atomic(dir.path() / "z.sv", "package z;\nendpackage\n");
  std::vector<fs::path> with_sv = ppa::rtl_files_in(dir.path());
  with_sv.push_back(dir.path() / "defs.vh");
  EXPECT_EQ(names(ppa::rtl_files_for_top(with_sv, "s")), "p.sv s.sv u.v defs.vh ");
  // The generated design: the dense baseline needs none of the reuse blocks, kld_top not the baseline.
  hw::write_rtl(tiny_hw(), dir.path() / "rtl");
  const std::vector<fs::path> rtl = ppa::rtl_files_in(dir.path() / "rtl");
  const std::string plain = names(ppa::rtl_files_for_top(rtl, "kld_plain_top"));
  const std::string top = names(ppa::rtl_files_for_top(rtl, "kld_top"));
  for (const char* reuse_only : {"kld_top.v", "kld_merge.v", "kld_detector.v", "kld_dispatcher.v"}) {
    EXPECT_EQ(plain.find(reuse_only), std::string::npos) << plain;
    EXPECT_NE(top.find(reuse_only), std::string::npos) << top;
  }
  EXPECT_NE(plain.find("kld_plain_array.v"), std::string::npos) << plain;
  EXPECT_EQ(top.find("kld_plain"), std::string::npos) << top;
}

TEST(Flow, HardwareThatIsNotTheSimulatedDesignIsRefused) {
  REQUIRE_TOOLS();
  // The hardware's accumulator is wider than the algorithm's: the simulation
  // would run another design than the one synthesised and reported.
  const fs::path dir = temp_dir("widths");
  flow::FlowOptions o = tiny_flow(dir, 0);
  o.hw.acc_w = 32;
  try {
    flow::run_flow(o);
    FAIL() << "a flow whose simulated RTL is not its synthesised RTL must fail";
  } catch (const ConfigError& e) {  // refused before any stage runs
    EXPECT_NE(std::string(e.what()).find("ACC_W = 32 in the hardware"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(o.report_dir / "flow.md")) << "no report for a design that was not simulated";
  EXPECT_FALSE(fs::exists(o.work_dir / "rtl")) << "no stage ran";
}

TEST(Flow, HighReuseSpendsLessEnergyPerUsefulMacThanDense) {
  REQUIRE_TOOLS();
  const flow::FlowResult& r = high_reuse_run().result;
  ASSERT_TRUE(r.reuse.measured && r.dense.measured);
  EXPECT_GT(r.reuse.energy_j, 0.0);
  EXPECT_GT(r.dense.energy_j, 0.0);
  // Same useful work (N*K*M) in both modes; the reuse run is shorter and issues fewer MACs.
  EXPECT_LT(r.reuse.cycles, r.dense.cycles);
  EXPECT_LT(r.reuse.pj_per_useful_mac, r.dense.pj_per_useful_mac);
  // Per-issued energy is never below per-useful energy in reuse mode (issued <= useful).
  EXPECT_GE(r.reuse.pj_per_issued_mac, r.reuse.pj_per_useful_mac);

  // Energy quoted with its clock: at the target and at Fmax, leakage apart.
  const json& j = r.report;
  const json& h = j.at("headline");
  EXPECT_DOUBLE_EQ(h.at("energy_clock_ns").get<double>(), 5.0);
  EXPECT_NEAR(h.at("energy_ratio_dense_over_reuse").get<double>(), r.dense.energy_j / r.reuse.energy_j, 1e-12);
  const double fmax = h.at("fmax_mhz").get<double>();
  for (const char* mode : {"reuse", "dense"}) {
    const json& e = j.at("energy").at(mode);
    const double replayed = e.at("gate_level_cycles_replayed").get<double>();
    const double leak = e.at("leakage_power_w").get<double>(), dyn = e.at("dynamic_energy_j").get<double>();
    EXPECT_GT(leak, 0.0) << mode;
    EXPECT_GT(dyn, 0.0) << mode;
    EXPECT_DOUBLE_EQ(e.at("clock_ns").get<double>(), 5.0);
    // Average power x run time at 5 ns = dynamic energy + leakage x run time.
    const double total_w = e.at("logic_power_w").get<double>() + e.at("sram_power_w").get<double>();
    EXPECT_NEAR(e.at("energy_j").get<double>(), total_w * replayed * 5e-9, 1e-9 * total_w * replayed * 5e-9);
    EXPECT_NEAR(e.at("energy_j").get<double>(), dyn + leak * replayed * 5e-9, 1e-9 * dyn);
    const json& f = e.at("at_fmax");
    EXPECT_NEAR(f.at("clock_ns").get<double>(), 1000.0 / fmax, 1e-9);
    EXPECT_NEAR(f.at("energy_j").get<double>(), dyn + leak * replayed * 1e-6 / fmax, 1e-9 * dyn);
    // Same dynamic energy; more leakage energy at the slower of the two clocks.
    const bool fmax_slower = 1000.0 / fmax > 5.0;
    EXPECT_EQ(f.at("energy_j").get<double>() > e.at("energy_j").get<double>(), fmax_slower) << mode;
  }
  const std::string md = read_file(r.markdown);
  EXPECT_NE(md.find("energy per useful MAC at the 5.00 ns target clock"), std::string::npos);
  EXPECT_NE(md.find("energy per useful MAC at Fmax ("), std::string::npos);
  // Reset, register programming and loading A and B take the same cycles in both modes, and the
  // report says how many of the replayed cycles they are.
  const uint64_t shared = r.dense.replayed_cycles - static_cast<uint64_t>(r.dense.cycles);
  EXPECT_GT(shared, 0u);
  EXPECT_EQ(r.reuse.replayed_cycles - static_cast<uint64_t>(r.reuse.cycles), shared);
  EXPECT_NE(md.find("the other " + std::to_string(shared) + " and " + std::to_string(shared) +
                    " reset the design, program the registers and load A and B"),
            std::string::npos);
}

TEST(Flow, TheGemmAloneIsTheReplayFromStartToDone) {
  REQUIRE_TOOLS();
  const flow::FlowResult& r = high_reuse_run().result;
  ASSERT_TRUE(r.reuse_gemm.measured && r.dense_gemm.measured);
  for (const auto& [whole, gemm] : {std::pair{&r.reuse, &r.reuse_gemm}, std::pair{&r.dense, &r.dense_gemm}}) {
    // Counted from the START write's edge to done: the CYCLES the hardware counted, plus that edge.
    EXPECT_EQ(gemm->replayed_cycles, static_cast<uint64_t>(whole->cycles) + 1);
    EXPECT_EQ(gemm->counted_cycles, gemm->replayed_cycles);
    // A part of the whole run's counted window: fewer transitions and accesses, so less dynamic energy.
    EXPECT_GT(gemm->dynamic_energy_j, 0.0);
    EXPECT_LT(gemm->dynamic_energy_j, whole->dynamic_energy_j);
    EXPECT_DOUBLE_EQ(gemm->leakage_w, whole->leakage_w);
  }
  // The window holds no operand loading: A is written into its banks before START, N words per
  // group bank (2 x 4 x 4 tokens, 4 groups), and counted in the whole run (after the warm-up).
  for (const auto& [whole, gemm] : {std::pair{&r.reuse, &r.reuse_gemm}, std::pair{&r.dense, &r.dense_gemm}}) {
    EXPECT_GT(whole->a_bank_writes, 0u);
    EXPECT_LE(whole->a_bank_writes, 32u * 4u);
    EXPECT_EQ(gemm->a_bank_writes, 0u);
  }
  // The loading both modes share dilutes the whole run's ratio; the GEMM's own is larger.
  const double whole_ratio = r.dense.energy_j / r.reuse.energy_j;
  const double gemm_ratio = r.dense_gemm.energy_j / r.reuse_gemm.energy_j;
  EXPECT_GT(gemm_ratio, whole_ratio);
  EXPECT_DOUBLE_EQ(r.report.at("headline").at("energy_ratio_dense_over_reuse_gemm_phase").get<double>(), gemm_ratio);
  const json& g = r.report.at("energy").at("gemm_phase");
  EXPECT_EQ(g.at("reuse").at("gate_level_cycles_counted").get<uint64_t>(), r.reuse_gemm.counted_cycles);
  const std::string md = read_file(r.markdown);
  EXPECT_NE(md.find("The GEMM alone (the same replays"), std::string::npos);
  EXPECT_NE(md.find("- the GEMM alone (START to done) at 5.00 ns"), std::string::npos);

  // The kept tile (CTRL.KEEP): its GEMM is a window of the reuse replay, which the reuse run's own
  // figures stop short of; it loads nothing into A and decides nothing, so it spends less than the
  // detecting run's GEMM.
  ASSERT_TRUE(r.kept_gemm.measured);
  const json& kept = r.report.at("simulation").at("kept_b_tiles").at("runs").at(0);
  EXPECT_TRUE(kept.at("bit_exact").get<bool>());
  EXPECT_EQ(r.kept_gemm.replayed_cycles, kept.at("cycles").get<uint64_t>() + 1);
  EXPECT_EQ(r.kept_gemm.a_bank_writes, 0u);
  EXPECT_GT(r.kept_gemm.dynamic_energy_j, 0.0);
  EXPECT_LT(r.kept_gemm.dynamic_energy_j, r.reuse_gemm.dynamic_energy_j);
  EXPECT_LE(kept.at("cycles").get<int64_t>(), r.reuse.cycles);
  uint64_t dump_rows = 0;  // the reuse testbench's input dump: a header, then a line per cycle
  std::ifstream dump(high_reuse_run().opt.work_dir / "sim" / "inputs_reuse.txt");
  for (std::string line; std::getline(dump, line);) ++dump_rows;
  EXPECT_LE(r.reuse.replayed_cycles + kept.at("cycles").get<uint64_t>(), dump_rows - 1)
      << "the reuse run's figures end before the kept tile";
  EXPECT_DOUBLE_EQ(r.report.at("headline").at("energy_ratio_dense_over_kept_tile_gemm_phase").get<double>(),
                   r.dense_gemm.energy_j / r.kept_gemm.energy_j);
  EXPECT_NE(md.find("- the kept tile's GEMM at 5.00 ns"), std::string::npos);
}

// Where the energy goes: each GEMM window's energy split over the blocks below kld_top adds up to
// the window's, and the split follows what each mode does: the detector works only while it
// decides (the reuse run), the array issues fewer MACs when pairs are reused.
TEST(Flow, TheGemmEnergySplitByBlockAddsUpAndFollowsTheWork) {
  REQUIRE_TOOLS();
  const flow::FlowResult& r = high_reuse_run().result;
  const auto part = [](const flow::ModeEnergy& e, const std::string& block) {
    for (const flow::BlockEnergy& b : e.blocks)
      if (b.block == block) return b.logic_j + b.sram_j;
    ADD_FAILURE() << "no block " << block;
    return 0.0;
  };
  for (const flow::ModeEnergy* e : {&r.dense_gemm, &r.reuse_gemm, &r.kept_gemm}) {
    ASSERT_TRUE(e->measured);
    double sum = 0;
    for (const flow::BlockEnergy& b : e->blocks) {
      EXPECT_GE(b.logic_j, 0.0) << b.block;
      EXPECT_GE(b.sram_j, 0.0) << b.block;
      sum += b.logic_j + b.sram_j;
    }
    EXPECT_NEAR(sum, e->energy_j, 1e-9 * e->energy_j);
    double leakage = 0;
    for (const flow::BlockEnergy& b : e->blocks) leakage += b.leakage_w;
    EXPECT_NEAR(leakage, e->leakage_w, 1e-9 * e->leakage_w);
    for (const char* b : {"(top)", "u_array", "u_detector", "u_dispatcher", "u_merge", "u_weight_loader"})
      EXPECT_GT(part(*e, b), 0.0) << b;
  }
  const auto per_cycle = [&](const flow::ModeEnergy& e, const std::string& block) {
    return part(e, block) / static_cast<double>(e.replayed_cycles);
  };
  EXPECT_GT(per_cycle(r.reuse_gemm, "u_detector"), 1.5 * per_cycle(r.dense_gemm, "u_detector"))
      << "the detector decides only in the reuse run";
  EXPECT_GT(per_cycle(r.reuse_gemm, "u_detector"), 1.5 * per_cycle(r.kept_gemm, "u_detector"))
      << "a kept tile decides nothing";
  const json& sim = r.report.at("simulation");
  ASSERT_LT(sim.at("reuse").at("macs_issued").get<int64_t>(), sim.at("dense").at("macs_issued").get<int64_t>());
  EXPECT_LT(part(r.reuse_gemm, "u_array"), part(r.dense_gemm, "u_array")) << "fewer MACs issued";
  const json& blocks = r.report.at("energy").at("gemm_phase").at("reuse").at("energy_by_block");
  ASSERT_EQ(blocks.size(), r.reuse_gemm.blocks.size());
  EXPECT_EQ(blocks.at(0).at("block"), "(top)");
  const std::string md = read_file(r.markdown);
  EXPECT_NE(md.find("Where the GEMM's energy goes"), std::string::npos);
  EXPECT_NE(md.find("| u_detector (kld_detector) |"), std::string::npos);
}

TEST(Flow, FailedStageIsNamedAndItsLogKept) {
  REQUIRE_TOOLS();
  const fs::path dir = temp_dir("fail");
  flow::FlowOptions o = tiny_flow(dir, 0);
  o.liberty = {dir / "no_such_library.lib"};
  try {
    flow::run_flow(o);
    FAIL() << "a missing Liberty file must stop the flow";
  } catch (const flow::StageError& e) {
    EXPECT_EQ(e.stage(), "synthesise kld_top");
    ASSERT_TRUE(fs::exists(e.log()));
    EXPECT_NE(read_file(e.log()).find("no_such_library.lib"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("synthesise kld_top"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(o.report_dir / "flow.md")) << "no report after a failed stage";
  EXPECT_TRUE(fs::exists(o.work_dir / "sim" / "tb_reuse.json")) << "earlier stages' outputs are kept";
}

TEST(Flow, BadOptionsAreConfigErrors) {
  flow::FlowOptions o = tiny_flow(temp_dir("bad"), 0);
  o.clock_ns = 0;
  EXPECT_THROW(flow::run_flow(o), ConfigError);
  o = tiny_flow(temp_dir("bad"), 0);
  o.hw.rows = 3;  // not a multiple of the group width
  EXPECT_THROW(flow::run_flow(o), ConfigError);
}

}  // namespace
}  // namespace kaleido
