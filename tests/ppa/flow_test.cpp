// The synthesis/timing flow on the small test designs: reports parse, area
// adds up by module and instance (and matches Yosys's own figures), Fmax is
// consistent with the slack, SRAMs are black-boxed and costed, and user
// errors (impossible clock, missing tool, bad Liberty) are clear.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "ppa/endpoints.hpp"
#include "ppa/liberty.hpp"
#include "ppa/sdc.hpp"
#include "ppa/sram_model.hpp"
#include "ppa/sta_flow.hpp"
#include "ppa/synth.hpp"
#include "ppa_helpers.hpp"

namespace kaleido::ppa {
namespace {

using test::data_dir;
using test::synth_options;
using test::TempDir;

// Area invariants every flow result must satisfy.
void expect_area_adds_up(const SynthResult& r) {
  ASSERT_FALSE(r.instances.empty());
  // Per instance: own cells + children = instance area; the top is the logic total.
  for (size_t i = 0; i < r.instances.size(); ++i) {
    double children = 0;
    for (const InstanceArea& c : r.instances) {
      const std::string& p = r.instances[i].path;
      if (c.depth == r.instances[i].depth + 1 && (p.empty() || c.path.rfind(p + "/", 0) == 0)) children += c.area_um2;
    }
    EXPECT_NEAR(r.instances[i].own_area_um2 + children, r.instances[i].area_um2, 1e-6) << r.instances[i].path;
  }
  EXPECT_NEAR(r.instances.front().area_um2, r.logic_area_um2, 1e-6);
  // Per module: instances x own area sums to the total.
  double by_module = 0;
  for (const ModuleAreaRow& m : r.modules) by_module += m.instances * m.own_area;
  EXPECT_NEAR(by_module, r.logic_area_um2, 1e-6);
  // Yosys's `stat -liberty`, an independent sum of the same cells: per leaf
  // module (it prints none for modules with submodules) and for the top.
  int compared = 0;
  for (const ModuleAreaRow& m : r.modules) {
    auto it = r.yosys_module_area.find(m.module);
    if (it == r.yosys_module_area.end()) continue;
    EXPECT_NEAR(it->second, m.own_area, 1e-3 * std::max(1.0, m.own_area)) << m.module;
    ++compared;
  }
  EXPECT_GE(compared, 1);
  // A flat design prints only its module line; a hierarchy prints a top total.
  const double yosys_total = r.yosys_top_area > 0 ? r.yosys_top_area : r.yosys_module_area.at(r.top);
  EXPECT_NEAR(yosys_total, r.logic_area_um2, 1e-3 * r.logic_area_um2);
  // Cell counts by type add up to the cell total.
  int n = 0;
  for (const auto& [cell, count] : r.cell_counts) n += count;
  EXPECT_EQ(n, r.cells);
}

void expect_timing_consistent(const SynthResult& r) {
  ASSERT_TRUE(r.timed);
  EXPECT_GT(r.sta.path.arrival_ns, 0);
  EXPECT_FALSE(r.sta.path.startpoint.empty());
  EXPECT_FALSE(r.sta.path.endpoint.empty());
  // slack = required - arrival on the reported worst path, and it is the worst slack.
  EXPECT_NEAR(r.sta.path.required_ns - r.sta.path.arrival_ns, r.sta.path.slack_ns, 1e-5);
  EXPECT_NEAR(r.sta.path.slack_ns, r.sta.worst_slack_ns, 1e-5);
  EXPECT_NEAR(r.sta.wns_ns, std::min(0.0, r.sta.worst_slack_ns), 1e-5);
  EXPECT_LE(r.sta.tns_ns, r.sta.wns_ns + 1e-9);
  EXPECT_NEAR(r.fmax_mhz, 1000.0 / (r.clock_period_ns - r.sta.worst_slack_ns), 1e-6 * r.fmax_mhz);
}

// Re-times the same netlist at the period Fmax implies: the worst slack must be ~0.
void expect_fmax_period_meets_timing(const SynthResult& r, const Library& lib, const std::filesystem::path& dir) {
  const double t_min = 1000.0 / r.fmax_mhz;
  SdcSpec s;
  s.design = r.top;
  s.period_ns = t_min;
  const LibCell& buf = pick_driving_buffer(lib);
  s.driving_cell = buf.name;
  s.driving_pin = output_pin_name(buf);
  s.output_load_f = r.output_load_f;
  s.units = lib.units;
  s.library_name = lib.name;
  const auto sdc = dir / "fmax.sdc";
  write_sdc(s, sdc);
  StaJob j;
  j.liberty = r.prepared_liberty;
  j.netlist_v = r.sta_netlist_v;
  j.sdc = sdc;
  j.top = r.top;
  j.units = lib.units;
  j.work_dir = dir / "fmax_sta";
  const StaResult at_fmax = run_sta(j);
  EXPECT_NEAR(at_fmax.worst_slack_ns, 0.0, 2e-3) << "period " << t_min << " ns from Fmax " << r.fmax_mhz;
}

TEST(Flow, MacOnGenericLibrary) {
  KLD_SKIP_WITHOUT_TOOLS();
  TempDir tmp("mac");
  SynthOptions o = synth_options("ppa_mac", {"ppa_mac.v"}, tmp.path() / "out", 1.0);
  o.sdc_dir = tmp.path() / "constraints";
  o.config_name = "mac_test";
  const SynthResult r = run_synthesis_flow(o);

  EXPECT_GT(r.logic_area_um2, 0);
  EXPECT_EQ(r.sram_area_um2, 0);
  // 8 + 8 + 1 + 32 registers in the RTL.
  EXPECT_EQ(r.sequential_cells, 49);
  EXPECT_EQ(r.cell_counts.at("DFFR_X1"), 49);
  expect_area_adds_up(r);
  expect_timing_consistent(r);
  EXPECT_GT(r.fmax_mhz, 50);
  EXPECT_LT(r.fmax_mhz, 5000);
  EXPECT_GT(r.opensta_power.total_w, 0);
  EXPECT_GT(r.opensta_power.internal_w, 0);
  EXPECT_GT(r.opensta_power.switching_w, 0);
  EXPECT_GT(r.opensta_power.leakage_w, 0);

  // SDC written where asked, with the clock on clk_i at the period.
  const std::string sdc = read_file(tmp.path() / "constraints" / "mac_test.sdc");
  EXPECT_NE(sdc.find("create_clock -name clk -period 1 [get_ports clk_i]"), std::string::npos) << sdc;
  EXPECT_NE(sdc.find("set_driving_cell -lib_cell BUF_X1"), std::string::npos) << sdc;

  // The JSON report: ORFS-style names, each with its value and source.
  const nlohmann::json j = nlohmann::json::parse(read_file(r.json_report));
  for (const char* m : {"design__instance__area", "design__instance__area__stdcell", "timing__setup__ws",
                        "timing__setup__tns", "timing__fmax", "power__total", "power__internal__total",
                        "power__switching__total", "power__leakage__total"}) {
    ASSERT_TRUE(j["metrics"].contains(m)) << m;
    EXPECT_FALSE(j["metrics"][m]["source"].get<std::string>().empty()) << m;
  }
  EXPECT_DOUBLE_EQ(j["metrics"]["design__instance__area"]["value"].get<double>(), r.total_area_um2());
  EXPECT_DOUBLE_EQ(j["metrics"]["timing__setup__ws"]["value"].get<double>(), r.sta.worst_slack_ns);
  EXPECT_NE(j["metrics"]["power__total"]["source"].get<std::string>().find("-activity 0.1"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(r.md_report));
  EXPECT_TRUE(std::filesystem::exists(r.netlist_v));

  expect_fmax_period_meets_timing(r, read_liberty(std::filesystem::path(r.prepared_liberty)), tmp.path());

  // Endpoints by register: the accumulator (its flip-flops drive acc_o) is the multiply-add's
  // end, and the worst; every endpoint is in one group: 49 flip-flops and the 32 output bits.
  ASSERT_FALSE(r.worst_registers.empty());
  const EndpointGroup& worst = r.worst_registers.front();
  EXPECT_EQ(worst.name, "acc_o");
  EXPECT_EQ(worst.kind, "register");
  EXPECT_EQ(worst.module, "ppa_mac");
  EXPECT_EQ(worst.endpoints, 32);
  EXPECT_NEAR(worst.worst_slack_ns, r.sta.worst_slack_ns, 1e-5);
  EXPECT_EQ(r.critical_to.rfind("acc_o[", 0), 0u) << r.critical_to;
  int endpoints = 0;
  std::map<std::pair<std::string, std::string>, int> by_name;
  for (const EndpointGroup& g : r.worst_registers) {
    endpoints += g.endpoints;
    by_name[{g.kind, g.name}] = g.endpoints;
  }
  EXPECT_EQ(endpoints, 49 + 32);
  EXPECT_EQ(by_name[std::make_pair(std::string("output"), std::string("acc_o"))], 32);
  EXPECT_EQ(by_name[std::make_pair(std::string("register"), std::string("a_q"))], 8);
  EXPECT_EQ(by_name[std::make_pair(std::string("register"), std::string("en_q"))], 1);
  EXPECT_NE(read_file(r.md_report).find("### Worst endpoints by register"), std::string::npos);
  EXPECT_EQ(j["worst_registers"]["groups"][0]["name"], "acc_o");
}

TEST(Endpoints, ReportRowsParseAndRegisterNumbersFold) {
  // Rows of `report_checks -format end` (OpenSTA 2019): a flip-flop, an output port (no cell), a
  // macro input; in the library's time unit (here ps).
  const std::string text =
      "max_delay/setup group clk\n\n"
      "                                     Required  Actual\n"
      "Endpoint                               Delay   Delay   Slack\n"
      "------------------------------------------------------------\n"
      "u_merge/_33403_/D (sky130_fd_sc_hd__dfxtp_1)    3878.754    5613.410   -1734.656 (VIOLATED)\n"
      "acc_o[3]    4000.0    310.5   3689.5 (MET)\n"
      "u_weight_loader/u_b/wdata_i[98] (kld_sram_256x128)    3770    30    3740 (MET)\n";
  const std::vector<EndpointSlack> e = parse_endpoints(text, 1e-3);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].pin, "u_merge/_33403_/D");
  EXPECT_NEAR(e[0].slack_ns, -1.734656, 1e-9);
  EXPECT_NEAR(e[0].arrival_ns, 5.61341, 1e-9);
  EXPECT_EQ(e[1].pin, "acc_o[3]");  // sorted by slack: 3.6895 before 3.74
  EXPECT_EQ(e[2].pin, "u_weight_loader/u_b/wdata_i[98]");

  EXPECT_EQ(register_family("partial_1_5_q[3]"), "partial_*_*_q");
  EXPECT_EQ(register_family("u_detector/g_lane[0].u_lane/ahat_src_q[1]"), "u_detector/g_lane[*].u_lane/ahat_src_q");
  EXPECT_EQ(register_family("u_detector/g_lane[0].u_lane/s2_d_t_q"), "u_detector/g_lane[*].u_lane/s2_d_t_q");
  EXPECT_EQ(register_family("u_a_3/rdata0_o"), "u_a_*/rdata0_o");
  EXPECT_EQ(register_family("busy_o"), "busy_o");
}

TEST(Flow, GridKeepsHierarchyAndCostsMoreThanOneMac) {
  KLD_SKIP_WITHOUT_TOOLS();
  TempDir tmp("grid");
  const SynthResult mac = run_synthesis_flow(synth_options("ppa_mac", {"ppa_mac.v"}, tmp.path() / "mac", 1.0));
  const SynthResult grid =
      run_synthesis_flow(synth_options("ppa_grid2x2", {"ppa_mac.v", "ppa_grid2x2.v"}, tmp.path() / "grid", 1.0));
  expect_area_adds_up(grid);
  expect_timing_consistent(grid);
  EXPECT_GT(grid.logic_area_um2, mac.logic_area_um2);
  // Each unique module is mapped once: four identical PE instances.
  ASSERT_EQ(grid.instances.size(), 5u);
  int pes = 0;
  for (const InstanceArea& i : grid.instances) {
    if (i.module != "ppa_mac") continue;
    ++pes;
    EXPECT_EQ(i.depth, 1);
    EXPECT_NEAR(i.area_um2, mac.logic_area_um2, 1e-6) << i.path;
  }
  EXPECT_EQ(pes, 4);
  EXPECT_NEAR(grid.logic_area_um2, 4 * mac.logic_area_um2 + grid.instances.front().own_area_um2, 1e-6);
  EXPECT_EQ(grid.sequential_cells, 4 * 49);
  EXPECT_NE(grid.instances[1].path.find("u_pe"), std::string::npos);
}

// --flatten: one netlist (no PE instances left), the same registers, and the SRAMs still black
// boxes timed through their views.
TEST(Flow, FlattenMapsOneNetlistAndKeepsSramsBlackBoxes) {
  KLD_SKIP_WITHOUT_TOOLS();
  TempDir tmp("flat");
  SynthOptions o = synth_options("ppa_grid2x2", {"ppa_mac.v", "ppa_grid2x2.v"}, tmp.path() / "grid", 1.0);
  o.flatten = true;
  const SynthResult grid = run_synthesis_flow(o);
  ASSERT_EQ(grid.instances.size(), 1u) << "a flat netlist has no submodule instances";
  EXPECT_EQ(grid.modules.size(), 1u);
  // Flat, Yosys may merge input registers that PEs share; the four distinct 32-bit accumulators stay.
  EXPECT_LE(grid.sequential_cells, 4 * 49);
  EXPECT_GE(grid.sequential_cells, 4 * 32);
  expect_area_adds_up(grid);
  expect_timing_consistent(grid);
  EXPECT_EQ(read_file(grid.netlist_v).find("ppa_mac "), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(read_file(grid.json_report));
  EXPECT_EQ(j["design"]["synthesis"], "flat");
  EXPECT_NE(j["metrics"]["design__instance__area__stdcell"]["source"].get<std::string>().find("flat synthesis"),
            std::string::npos);

  SynthOptions so = synth_options("ppa_sram_acc", {"kld_sram.v", "kld_sram_16x8_r2.v", "ppa_sram_acc.v"},
                                  tmp.path() / "sram", 1.0);
  so.flatten = true;
  const SynthResult sram = run_synthesis_flow(so);
  ASSERT_EQ(sram.srams.size(), 2u);
  EXPECT_EQ(sram.sequential_cells, 8);
  EXPECT_NE(read_file(sram.netlist_v).find("kld_sram u_mem"), std::string::npos);
  expect_timing_consistent(sram);
  // Through a memory, as in SramIsBlackBoxedAndCostedByTheModel.
  EXPECT_TRUE(sram.sta.path.startpoint == "u_mem" || sram.sta.path.startpoint.rfind("addr_i", 0) == 0)
      << sram.sta.path.startpoint;
  EXPECT_GT(sram.sta.path.arrival_ns, sram.srams.front().access_time_ns);
}

TEST(Flow, SramIsBlackBoxedAndCostedByTheModel) {
  KLD_SKIP_WITHOUT_TOOLS();
  TempDir tmp("sram");
  const SynthResult r = run_synthesis_flow(
      synth_options("ppa_sram_acc", {"kld_sram.v", "kld_sram_16x8_r2.v", "ppa_sram_acc.v"}, tmp.path() / "out", 1.0));
  ASSERT_EQ(r.srams.size(), 2u);
  // The documented model with the generic INV_X1 (0.532 um^2), 16 rows x 8
  // columns: A = A_inv (3 f R C + p (12 R + 40 C) + 1500), f = 1 + 1.4 (p - 1).
  auto model_area = [](double p) {
    const double f = 1.0 + 1.4 * (p - 1);
    return 0.532 * (3.0 * f * 16 * 8 + p * (12.0 * 16 + 40.0 * 8) + 1500.0);
  };
  double sram_total = 0;
  for (const SramReport& s : r.srams) {
    EXPECT_EQ(s.cost.words, 16);
    EXPECT_EQ(s.cost.bits, 8);
    if (s.instance == "u_mem") {
      EXPECT_EQ(s.module, "kld_sram");
      EXPECT_EQ(s.cost.ports, 1);  // one shared address
      EXPECT_NEAR(s.cost.area_um2, model_area(1), 1e-6);
    } else {
      EXPECT_EQ(s.instance, "u_mem2");
      EXPECT_EQ(s.module, "kld_sram_16x8_r2");
      EXPECT_EQ(s.cost.ports, 3);  // a write and two read addresses
      EXPECT_NEAR(s.cost.area_um2, model_area(3), 1e-6);
    }
    sram_total += s.cost.area_um2;
  }
  EXPECT_NEAR(r.sram_area_um2, sram_total, 1e-9);
  EXPECT_NEAR(r.total_area_um2(), r.logic_area_um2 + sram_total, 1e-9);
  // Only the accumulator was mapped: 8 sum flops, no memory flops.
  EXPECT_EQ(r.sequential_cells, 8);
  expect_area_adds_up(r);
  const std::string netlist = read_file(r.netlist_v);
  EXPECT_NE(netlist.find("kld_sram u_mem"), std::string::npos);
  EXPECT_EQ(netlist.find("module kld_sram"), std::string::npos) << "the SRAMs must stay black boxes";
  // With the SRAM timing views OpenSTA times paths through the memories: the longest path here
  // starts at the registered read port of u_mem, or at addr_i through u_mem2's asynchronous read
  // (addr_i feeds three macro pins, so ABC sees it split and buffers it; generic library).
  expect_timing_consistent(r);
  EXPECT_TRUE(r.sta.path.startpoint == "u_mem" || r.sta.path.startpoint.rfind("addr_i", 0) == 0)
      << r.sta.path.startpoint;
  for (const SramReport& s : r.srams) EXPECT_GT(s.access_time_ns, 0.1);
  EXPECT_GT(r.sta.path.arrival_ns, r.srams.front().access_time_ns);
}

TEST(Flow, IntermediateFilesStayOutOfTheSourceTree) {
  KLD_SKIP_WITHOUT_TOOLS();
  // An output folder inside the repository (outside build*/ and out/): the
  // prepared Liberty and the logs go to a temp folder instead.
  const std::filesystem::path out = std::filesystem::path(KALEIDO_SOURCE_DIR) / "tests/ppa/data/tmp_flow_out";
  std::filesystem::remove_all(out);
  SynthOptions o = synth_options("ppa_mac", {"ppa_mac.v"}, out, 1.0);
  o.run_sta = false;
  const SynthResult r = run_synthesis_flow(o);
  const std::string work = r.work_dir.string();
  EXPECT_EQ(work.find(KALEIDO_SOURCE_DIR), std::string::npos) << work;
  EXPECT_FALSE(std::filesystem::exists(out / "work"));
  EXPECT_TRUE(std::filesystem::exists(out / "synth.json"));
  std::filesystem::remove_all(out);
  std::filesystem::remove_all(r.work_dir);
}

TEST(Flow, SramModelScalesWithSize) {
  const Library lib = read_liberty(test::generic_lib());
  const SramTechnology t = sram_technology(lib);
  EXPECT_EQ(t.inverter, "INV_X1");
  const SramCost small = sram_cost(256, 32, t), big = sram_cost(4096, 32, t);
  EXPECT_GT(big.area_um2, small.area_um2);
  EXPECT_LT(big.area_um2 / (4096.0 * 32), small.area_um2 / (256.0 * 32)) << "periphery amortises";
  EXPECT_GT(big.read_energy_j, small.read_energy_j);
  EXPECT_GT(small.write_energy_j, small.read_energy_j);
  // 1024 x 32 lands between the published 45 nm densities the model cites
  // (OpenRAM FreePDK45 1.21 um^2/bit, a fabricated 45 nm SRAM 3.0 um^2/bit).
  const double per_bit = sram_cost(1024, 32, t).area_um2 / (1024.0 * 32);
  EXPECT_GT(per_bit, 1.21);
  EXPECT_LT(per_bit, 3.03);
  EXPECT_THROW(sram_cost(0, 8, t), Error);
  // A second port makes every bit larger.
  EXPECT_GT(sram_cost(1024, 32, t, 2).area_um2, 1.5 * sram_cost(1024, 32, t, 1).area_um2);
}

TEST(Flow, MacOnSky130) {
  KLD_SKIP_WITHOUT_TOOLS();
  const auto lib = test::sky130();
  KLD_SKIP_WITHOUT(lib, "sky130_fd_sc_hd__tt_025C_1v80.lib.gz");
  TempDir tmp("sky");
  SynthOptions o = synth_options("ppa_mac", {"ppa_mac.v"}, tmp.path() / "out", 5.0);
  o.liberty = {lib};
  const SynthResult r = run_synthesis_flow(o);
  EXPECT_EQ(r.library_name, "sky130_fd_sc_hd__tt_025C_1v80");
  EXPECT_EQ(r.sequential_cells, 49);
  expect_area_adds_up(r);
  expect_timing_consistent(r);
  EXPECT_GT(r.opensta_power.total_w, 0);
  // The low-power-flow cells are kept out by default.
  for (const auto& [cell, n] : r.cell_counts) EXPECT_EQ(cell.find("lpflow"), std::string::npos) << cell;
  // sky130 (130 nm) cells are several times larger than the 45 nm-class generic ones.
  EXPECT_GT(r.logic_area_um2, 3000);
}

// The recipes on registered adders (ppa_adders.v, generic library, a 0.5 ns target no recipe
// meets, so each shows its shortest path): Yosys's own ABC script keeps chains (808.8 MHz when
// written), the delay-driven script with Brent-Kung carries 1,312 MHz, with Kogge-Stone carries
// 1,557 MHz at 17 % more area (docs/hardware.md has the same comparison on the presets).
TEST(Flow, RecipesTradeAreaForShallowerCarries) {
  KLD_SKIP_WITHOUT_TOOLS();
  TempDir tmp("recipes");
  std::map<std::string, SynthResult> by_recipe;
  for (const char* recipe : {"yosys", "delay", "delay-ks"}) {
    SynthOptions o = synth_options("ppa_adders", {"ppa_adders.v"}, tmp.path() / recipe, 0.5);
    o.recipe = recipe;
    by_recipe[recipe] = run_synthesis_flow(o);
    const SynthResult& r = by_recipe[recipe];
    EXPECT_EQ(r.recipe, recipe);
    EXPECT_EQ(r.sequential_cells, 116);  // 48 input and 68 output flops in every recipe
    const nlohmann::json j = nlohmann::json::parse(read_file(r.json_report));
    EXPECT_EQ(j["design"]["recipe"], recipe);
    EXPECT_NE(j["metrics"]["design__instance__area__stdcell"]["source"].get<std::string>().find(
                  std::string("recipe ") + recipe),
              std::string::npos);
    EXPECT_NE(read_file(r.md_report).find(std::string("recipe `") + recipe + "`"), std::string::npos);
  }
  const SynthResult& yosys = by_recipe["yosys"];
  const SynthResult& delay = by_recipe["delay"];
  const SynthResult& ks = by_recipe["delay-ks"];
  EXPECT_GT(delay.fmax_mhz, 1.3 * yosys.fmax_mhz);
  EXPECT_GT(ks.fmax_mhz, 1.1 * delay.fmax_mhz);
  EXPECT_GT(ks.logic_area_um2, yosys.logic_area_um2);

  // A recipe that does not exist is refused before any tool runs, naming the choices.
  SynthOptions bad = synth_options("ppa_adders", {"ppa_adders.v"}, tmp.path() / "bad", 0.5);
  bad.recipe = "fastest";
  try {
    run_synthesis_flow(bad);
    ADD_FAILURE() << "an unknown recipe was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("yosys, delay, delay-ks"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(tmp.path() / "bad" / "work" / "yosys.log"));
}

// A net into several macros is split into runs of `pins_per_output` pins, each behind a buffer;
// clock pins, nets into fewer pins and the macros' own modules stay as they are.
TEST(MacroPins, NetsIntoSeveralMacrosAreSplitIntoRuns) {
  const auto macro = [](int d, int clk, int addr0, int addr1) {
    return nlohmann::json{{"type", "kld_sram_4x1"},
                          {"port_directions", {{"clk_i", "input"}, {"raddr_i", "input"}, {"wdata_i", "input"},
                                               {"rdata_o", "output"}}},
                          {"connections", {{"clk_i", {clk}}, {"raddr_i", {addr0, addr1}}, {"wdata_i", {d}},
                                           {"rdata_o", {100 + d}}}}};
  };
  // Five macros share the clock (2) and the address bit 3; the address bit 4 feeds two of them,
  // each has its own data bit.
  nlohmann::json netlist = {{"modules",
                             {{"kld_sram_4x1", {{"ports", nlohmann::json::object()}}},
                              {"top",
                               {{"ports", {{"clk_i", {{"direction", "input"}, {"bits", {2}}}}}},
                                {"cells",
                                 {{"m0", macro(10, 2, 3, 4)},
                                  {"m1", macro(11, 2, 3, 4)},
                                  {"m2", macro(12, 2, 3, 5)},
                                  {"m3", macro(13, 2, 3, 6)},
                                  {"m4", macro(14, 2, 3, 7)}}}}}}}};
  netlist["modules"]["top"]["cells"]["m4"]["connections"]["raddr_i"][1] = "0";  // a constant stays
  const nlohmann::json before = netlist;
  EXPECT_EQ(separate_macro_pins(netlist, {"kld_sram*"}, 2), 3);  // bit 3: runs of 2, 2 and 1
  const nlohmann::json& cells = netlist["modules"]["top"]["cells"];
  std::map<int64_t, int> pins_on;  // net -> macro pins on it
  for (const char* m : {"m0", "m1", "m2", "m3", "m4"}) {
    EXPECT_EQ(cells[m]["connections"]["clk_i"][0], 2) << m;
    ++pins_on[cells[m]["connections"]["raddr_i"][0].get<int64_t>()];
  }
  EXPECT_EQ(pins_on.count(3), 0u) << "no macro is left on the split net";
  std::vector<int> runs;
  for (const auto& [net, n] : pins_on) runs.push_back(n);
  EXPECT_EQ(runs, (std::vector<int>{2, 2, 1}));
  int buffers = 0;
  for (const auto& [name, c] : cells.items())
    if (c["type"] == "$_BUF_") {
      ++buffers;
      EXPECT_EQ(c["connections"]["A"][0], 3);
      EXPECT_EQ(pins_on.count(c["connections"]["Y"][0].get<int64_t>()), 1u);
    }
  EXPECT_EQ(buffers, 3);
  EXPECT_EQ(cells["m0"]["connections"]["raddr_i"][1], 4);  // two pins: one output's worth
  EXPECT_EQ(netlist["modules"]["kld_sram_4x1"], before["modules"]["kld_sram_4x1"]);
  // One pin per output splits bit 4 as well.
  nlohmann::json again = before;
  EXPECT_EQ(separate_macro_pins(again, {"kld_sram*"}, 1), 7);
  EXPECT_EQ(separate_macro_pins(again, {"other*"}, 1), 0);
  EXPECT_THROW(separate_macro_pins(again, {"kld_sram*"}, 0), Error);
  nlohmann::json not_a_netlist = nlohmann::json::object();
  EXPECT_THROW(separate_macro_pins(not_a_netlist, {"kld_sram*"}, 1), Error);
}

// Sixteen memories read at an address computed from a register (ppa_sram_fanout.v): each address
// bit drives 32 macro pins. Without the split ABC sizes the gate for one output's load.
TEST(Flow, NetsIntoManyMacrosAreSizedForAllOfThem) {
  KLD_SKIP_WITHOUT_TOOLS();
  const auto lib = test::sky130();
  KLD_SKIP_WITHOUT(lib, "sky130_fd_sc_hd__tt_025C_1v80.lib.gz");
  TempDir tmp("macro_pins");
  std::map<bool, SynthResult> by_split;
  for (bool split : {true, false}) {
    SynthOptions o = synth_options("ppa_sram_fanout", {"kld_sram_16x8_r2.v", "ppa_sram_fanout.v"},
                                   tmp.path() / (split ? "split" : "one"), 1.0);
    o.liberty = {lib};
    o.macro_pin_outputs = split;
    by_split[split] = run_synthesis_flow(o);
    const SynthResult& r = by_split[split];
    ASSERT_EQ(r.srams.size(), 16u);
    expect_timing_consistent(r);
    const nlohmann::json j = nlohmann::json::parse(read_file(r.json_report));
    EXPECT_EQ(j["design"]["macro_pin_outputs"], r.macro_pin_buffers);
    EXPECT_NE(read_file(r.md_report).find(split ? "more ABC outputs" : "--no-macro-pin-buffers"),
              std::string::npos);
  }
  const SynthResult& split = by_split[true];
  const SynthResult& one = by_split[false];
  // sky130's output load is about three inverter inputs: 21 macro input pins per memory (write
  // enable, write address and data, two read addresses), each net into 16 or 32 of them.
  EXPECT_EQ(split.macro_pins_per_output, 3);
  EXPECT_GT(split.macro_pin_buffers, 100);
  EXPECT_EQ(one.macro_pin_buffers, -1);
  EXPECT_GT(split.fmax_mhz, 1.1 * one.fmax_mhz);  // 185.1 against 152.6 MHz when written
  EXPECT_GT(split.logic_area_um2, one.logic_area_um2);
}

// ---------------------------------------------------------------- user errors

TEST(FlowErrors, ImpossibleClockIsAConfigError) {
  TempDir tmp("clk");
  for (double t : {0.0, -1.0, std::nan("")}) {
    try {
      run_synthesis_flow(synth_options("ppa_mac", {"ppa_mac.v"}, tmp.path(), t));
      ADD_FAILURE() << "period " << t << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("clock period"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("positive"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(fmax_mhz(0.0, 0.1), ConfigError);
  EXPECT_NEAR(fmax_mhz(2.0, -0.5), 400.0, 1e-9);
  EXPECT_NEAR(fmax_mhz(2.0, 0.5), 1000.0 / 1.5, 1e-9);
}

TEST(FlowErrors, MissingToolNamesTheDebianPackage) {
  TempDir tmp("path");
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  ::setenv("PATH", tmp.path().c_str(), 1);  // a folder with no yosys
  std::string msg;
  try {
    run_synthesis_flow(synth_options("ppa_mac", {"ppa_mac.v"}, tmp.path() / "out", 1.0));
  } catch (const Error& e) {
    msg = e.what();
  }
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_NE(msg.find("yosys"), std::string::npos) << msg;
  EXPECT_NE(msg.find("apt-get install yosys"), std::string::npos) << msg;
}

TEST(FlowErrors, MalformedLibertyStopsTheFlow) {
  KLD_SKIP_WITHOUT_TOOLS();
  TempDir tmp("badlib");
  const auto bad = tmp.path() / "bad.lib";
  write_file_atomic(bad, "library (bad) {\n  cell (X) {\n    area : 1;\n");
  SynthOptions o = synth_options("ppa_mac", {"ppa_mac.v"}, tmp.path() / "out", 1.0);
  o.liberty = {bad};
  try {
    run_synthesis_flow(o);
    ADD_FAILURE() << "truncated Liberty accepted";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.lib"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("line"), std::string::npos) << e.what();
  }
}

TEST(FlowErrors, BrokenRtlShowsTheYosysError) {
  KLD_SKIP_WITHOUT_TOOLS();
  TempDir tmp("badrtl");
  const auto v = tmp.path() / "broken.v";
  write_file_atomic(v, "module broken(input a, output y);\n  assign y = a &;\nendmodule\n");
  SynthOptions o;
  o.top = "broken";
  o.rtl_files = {v};
  o.out_dir = tmp.path() / "out";
  o.clock_period_ns = 1.0;
  try {
    run_synthesis_flow(o);
    ADD_FAILURE() << "broken RTL accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("yosys failed"), std::string::npos) << m;
    EXPECT_NE(m.find("ERROR"), std::string::npos) << m;
    EXPECT_NE(m.find("yosys.log"), std::string::npos) << m;
  }
}

// ---------------------------------------------------------------- CLI

TEST(SynthCli, WritesReportsAndFailsCleanly) {
  KLD_SKIP_WITHOUT_TOOLS();
  TempDir tmp("cli");
  const std::string bin = KALEIDO_TEST_KALEIDO_BIN;
  const std::string out = (tmp.path() / "out").string();
  const std::string log = (tmp.path() / "log.txt").string();
  const std::string ok = bin + " synth --rtl " + (data_dir() / "ppa_mac.v").string() + " --top ppa_mac --clock-ns 1.5 --out " +
                         out + " > " + log + " 2>&1";
  ASSERT_EQ(std::system(ok.c_str()), 0) << read_file(log);
  const std::string text = read_file(log);
  EXPECT_NE(text.find("Fmax"), std::string::npos) << text;
  EXPECT_NE(text.find("kaleido_generic"), std::string::npos) << text;
  EXPECT_TRUE(std::filesystem::exists(tmp.path() / "out" / "synth.json"));
  EXPECT_TRUE(std::filesystem::exists(tmp.path() / "out" / "synth.md"));
  const std::string bad = bin + " synth --rtl " + (data_dir() / "ppa_mac.v").string() +
                          " --top ppa_mac --clock-ns 0 --out " + out + " > " + log + " 2>&1";
  const int rc = std::system(bad.c_str());
  EXPECT_NE(rc, 0);
  EXPECT_NE(read_file(log).find("clock period"), std::string::npos) << read_file(log);
}

}  // namespace
}  // namespace kaleido::ppa
