// kaleido equiv: the miter builder on hand-written netlists, and the whole
// flow (Yosys + yosys-abc) on a small generated configuration: the PE, a
// detector lane and the 2x2 array prove equivalent; a netlist with one gate
// changed does not; missing tools and bad input give clear errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/version.hpp"
#include "equiv/aig.hpp"
#include "ppa/cell_models.hpp"
#include "equiv/equiv.hpp"
#include "equiv/miter.hpp"
#include "equiv/yosys_json.hpp"
#include "hw/generator.hpp"
#include "hw/hw_config.hpp"
#include "ppa/liberty.hpp"
#include "support/test_dir.hpp"

namespace kaleido::equiv {
namespace {

namespace fs = std::filesystem;

bool on_path(const std::string& tool) {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    if (end > start && fs::exists(fs::path(p.substr(start, end - start)) / tool)) return true;
    start = end + 1;
  }
  return false;
}

#define REQUIRE_TOOLS()                                                        \
  do {                                                                         \
    if (!on_path("yosys") || !on_path("yosys-abc"))                            \
      GTEST_SKIP() << "yosys / yosys-abc not installed (Debian package yosys)"; \
  } while (0)

// A folder of this test process's own (tests run in parallel processes).
fs::path temp_dir(const std::string& name) {
  const fs::path d = kaleido::testing::process_dir(name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// ------------------------------------------------------------------ AIG

TEST(Aig, StructuralHashingAndSimulation) {
  Aig aig;
  const Lit a = aig.add_input("a");
  const Lit b = aig.add_input("b");
  EXPECT_EQ(aig.make_and(a, b), aig.make_and(b, a));
  EXPECT_EQ(aig.make_and(a, lit_not(a)), kFalse);
  EXPECT_EQ(aig.make_and(a, kTrue), a);
  const Lit x = aig.make_xor(a, b);
  aig.add_output(x, "x");
  aig.add_output(aig.make_mux(a, b, lit_not(b)), "m");
  // a = 0101..., b = 0011... over the low four patterns.
  const std::vector<uint64_t> out = aig.simulate({0b1010, 0b1100});
  EXPECT_EQ(out[0] & 0xf, 0b0110u);
  // mux: a ? b : !b -> pattern k: a=bit k of 1010, b=bit k of 1100
  uint64_t want = 0;
  for (int k = 0; k < 4; ++k) {
    const bool av = (0b1010 >> k) & 1, bv = (0b1100 >> k) & 1;
    if (av ? bv : !bv) want |= 1u << k;
  }
  EXPECT_EQ(out[1] & 0xf, want);
  // One word per input is the caller's duty: a wrong count is a bug in kaleido (exit 3), not a user error.
  EXPECT_THROW(aig.simulate({0b1010}), InternalError);
}

TEST(Aig, AigerHeaderCountsConeOnly) {
  Aig aig;
  const Lit a = aig.add_input("a");
  const Lit b = aig.add_input("b");
  const Lit c = aig.add_input("c");
  aig.make_and(b, c);  // not in the cone of any output
  aig.add_output(aig.make_and(a, b), "y");
  const std::string text = aig.to_aiger();
  EXPECT_EQ(text.substr(0, text.find('\n')), "aig 4 3 0 1 1");
  EXPECT_NE(text.find("i0 a\n"), std::string::npos);
  EXPECT_NE(text.find("o0 y\n"), std::string::npos);
}

// ------------------------------------------------------------------ JSON and miter

TEST(YosysJson, MalformedInputIsAFileError) {
  EXPECT_THROW(parse_yosys_json("{not json", "x.json"), FileError);
  EXPECT_THROW(parse_yosys_json("{\"creator\": \"x\"}", "x.json"), FileError);
  EXPECT_THROW(parse_yosys_json(R"({"modules": {"m": {"ports": {"a": {"direction": "input", "bits": [true]}}}}})",
                                "x.json"),
               Error);
}

// A module Yosys derived for parameter overrides is `$paramod\m\P=...` in its own JSON and
// `\$paramod\m\P=...` once written to a Verilog netlist and read back: both read as one name,
// and an instance of it is an instance, not an unknown `$` primitive.
TEST(YosysJson, DerivedModuleNamesAreTheSameOnBothSides) {
  const std::string leaf = R"({"ports": {"a": {"direction": "input", "bits": [2]}}, "cells": {}, "netnames": {}})";
  auto design = [&](const std::string& name) {
    return R"({"modules": {")" + name + R"(": )" + leaf + R"(, "top": {"ports": {"a": {"direction": "input",
      "bits": [2]}}, "cells": {"u_leaf": {"type": ")" + name + R"(", "connections": {"a": [2]}}},
      "netnames": {}}}})";
  };
  const std::string derived = R"($paramod\\leaf\\P=4'1000)";  // JSON text: backslashes escaped
  for (const std::string& spelling : {derived, R"(\\)" + derived}) {
    const JsonDesign d = parse_yosys_json(design(spelling), "x.json");
    ASSERT_NE(d.module("$paramod\\leaf\\P=4'1000"), nullptr) << spelling;
    EXPECT_EQ(d.module("top")->cells.at(0).type, "$paramod\\leaf\\P=4'1000") << spelling;
  }
}

// A one-register module: q <= a & b (reset 0), y = q ^ a. `gate_text` is the
// same module in another form.
std::string design_json(const std::string& cells, const std::string& netnames) {
  return R"({"modules": {"m": {
    "ports": {"clk": {"direction": "input", "bits": [2]}, "rst_n": {"direction": "input", "bits": [3]},
              "a": {"direction": "input", "bits": [4]}, "b": {"direction": "input", "bits": [5]},
              "y": {"direction": "output", "bits": [7]}},
    "cells": {)" + cells + R"(},
    "netnames": {)" + netnames + R"(}}}})";
}

const char* kGoldCells = R"(
  "and": {"type": "$_AND_", "connections": {"A": [4], "B": [5], "Y": [6]}},
  "ff": {"type": "$_DFF_PN0_", "connections": {"C": [2], "D": [6], "Q": [8], "R": [3]}},
  "xor": {"type": "$_XOR_", "connections": {"A": [8], "B": [4], "Y": [7]}})";

TEST(Miter, SameFunctionInOtherGatesIsStructurallyOrSatEqual) {
  const JsonDesign gold = parse_yosys_json(design_json(kGoldCells, R"("q": {"hide_name": 0, "bits": [8]})"), "gold");
  // NAND + NOT for the AND; the register carries the same name.
  const JsonDesign gate = parse_yosys_json(
      design_json(R"(
    "nand": {"type": "$_NAND_", "connections": {"A": [5], "B": [4], "Y": [9]}},
    "inv": {"type": "$_NOT_", "connections": {"A": [9], "Y": [6]}},
    "ff": {"type": "$_DFF_PN0_", "connections": {"C": [2], "D": [6], "Q": [8], "R": [3]}},
    "xor": {"type": "$_XOR_", "connections": {"A": [4], "B": [8], "Y": [7]}})",
                  R"("q": {"hide_name": 0, "bits": [8]}, "_12_": {"hide_name": 0, "bits": [9]})"),
      "gate");
  const Miter m = build_miter(gold, gate, "m");
  EXPECT_TRUE(m.problems.empty());
  EXPECT_EQ(m.matched_registers, 1);
  EXPECT_TRUE(m.correspondence_complete());
  ASSERT_EQ(m.pairs.size(), 2u);  // output y, register q next state
  // Structural hashing alone makes both sides one literal.
  EXPECT_EQ(m.structurally_equal, 2u);
  EXPECT_EQ(m.aig.num_outputs(), 0u);
}

TEST(Miter, ChangedGateGivesAMiterOutputThatSimulationSets) {
  const JsonDesign gold = parse_yosys_json(design_json(kGoldCells, R"("q": {"hide_name": 0, "bits": [8]})"), "gold");
  const JsonDesign gate = parse_yosys_json(
      design_json(R"(
    "or": {"type": "$_OR_", "connections": {"A": [4], "B": [5], "Y": [6]}},
    "ff": {"type": "$_DFF_PN0_", "connections": {"C": [2], "D": [6], "Q": [8], "R": [3]}},
    "xor": {"type": "$_XOR_", "connections": {"A": [8], "B": [4], "Y": [7]}})",
                  R"("q": {"hide_name": 0, "bits": [8]})"),
      "gate");
  const Miter m = build_miter(gold, gate, "m");
  ASSERT_EQ(m.aig.num_outputs(), 1u);
  EXPECT_EQ(m.aig.output_name(0), "register q next state");
  auto input = [&](const std::string& n) {
    for (size_t i = 0; i < m.aig.num_inputs(); ++i)
      if (m.aig.input_name(i) == n) return i;
    ADD_FAILURE() << "no input " << n;
    return size_t{0};
  };
  // a != b with reset released sets the output; in reset both next states are 0.
  std::vector<uint64_t> in(m.aig.num_inputs(), 0);
  in[input("in rst_n")] = ~0ull;
  in[input("in a")] = 1;  // a = 1, b = 0 in pattern 0
  EXPECT_EQ(m.aig.simulate(in)[0] & 1u, 1u);
  in[input("in rst_n")] = 0;
  EXPECT_EQ(m.aig.simulate(in)[0] & 1u, 0u);
}

TEST(Miter, RenamedRegisterIsReportedUnmatched) {
  const JsonDesign gold = parse_yosys_json(design_json(kGoldCells, R"("q": {"hide_name": 0, "bits": [8]})"), "gold");
  const JsonDesign gate = parse_yosys_json(design_json(kGoldCells, R"("other": {"hide_name": 0, "bits": [8]})"), "gate");
  const Miter m = build_miter(gold, gate, "m");
  EXPECT_FALSE(m.correspondence_complete());
  ASSERT_EQ(m.unmatched_gold.size(), 1u);
  EXPECT_EQ(m.unmatched_gold[0], "q");
  ASSERT_EQ(m.unmatched_gate.size(), 1u);
  EXPECT_EQ(m.unmatched_gate[0], "other");
}

// A register that drives the output port directly, named in the reference but not in the netlist
// (Yosys keeps one public name per net): paired by the port bit it drives, then checked.
const char* kRegisterAtOutput = R"(
  "and": {"type": "$_AND_", "connections": {"A": [4], "B": [5], "Y": [6]}},
  "ff": {"type": "$_DFF_PN0_", "connections": {"C": [2], "D": [6], "Q": [7], "R": [3]}})";

TEST(Miter, RegisterThatLostItsNameIsPairedByThePortBitItDrives) {
  const JsonDesign gold =
      parse_yosys_json(design_json(kRegisterAtOutput, R"("q": {"hide_name": 0, "bits": [7]})"), "gold");
  const JsonDesign gate = parse_yosys_json(design_json(kRegisterAtOutput, ""), "gate");
  const Miter m = build_miter(gold, gate, "m");
  EXPECT_TRUE(m.problems.empty());
  EXPECT_TRUE(m.correspondence_complete());
  EXPECT_EQ(m.matched_registers, 1);
  EXPECT_EQ(m.registers_paired_by_position, 1);
  EXPECT_EQ(m.aig.num_outputs(), 0u);  // the same function on both sides: hashed away
}

TEST(Miter, APairMadeByPositionIsStillChecked) {
  const JsonDesign gold =
      parse_yosys_json(design_json(kRegisterAtOutput, R"("q": {"hide_name": 0, "bits": [7]})"), "gold");
  std::string other = kRegisterAtOutput;
  other.replace(other.find("$_AND_"), 6, "$_OR_");
  const JsonDesign gate = parse_yosys_json(design_json(other, ""), "gate");
  const Miter m = build_miter(gold, gate, "m");
  EXPECT_EQ(m.registers_paired_by_position, 1);
  ASSERT_EQ(m.aig.num_outputs(), 1u);  // its next state: a AND b against a OR b
  EXPECT_NE(m.aig.output_name(0).find("next state"), std::string::npos) << m.aig.output_name(0);
}

TEST(Miter, MergedRegistersShareOneVariableAndAreBothChecked) {
  // Reference: q1 and q2 both load a & b; the netlist keeps one flip-flop whose output carries both names.
  const JsonDesign gold = parse_yosys_json(
      design_json(R"(
    "and": {"type": "$_AND_", "connections": {"A": [4], "B": [5], "Y": [6]}},
    "ff1": {"type": "$_DFF_PN0_", "connections": {"C": [2], "D": [6], "Q": [8], "R": [3]}},
    "ff2": {"type": "$_DFF_PN0_", "connections": {"C": [2], "D": [6], "Q": [9], "R": [3]}},
    "xor": {"type": "$_XOR_", "connections": {"A": [8], "B": [9], "Y": [7]}})",
                  R"("q1": {"hide_name": 0, "bits": [8]}, "q2": {"hide_name": 0, "bits": [9]})"),
      "gold");
  const JsonDesign gate = parse_yosys_json(
      design_json(R"(
    "and": {"type": "$_AND_", "connections": {"A": [4], "B": [5], "Y": [6]}},
    "ff": {"type": "$_DFF_PN0_", "connections": {"C": [2], "D": [6], "Q": [8], "R": [3]}},
    "xor": {"type": "$_XOR_", "connections": {"A": [8], "B": [8], "Y": [7]}})",
                  R"("q1": {"hide_name": 0, "bits": [8]}, "q2": {"hide_name": 0, "bits": [8]})"),
      "gate");
  const Miter m = build_miter(gold, gate, "m");
  EXPECT_TRUE(m.correspondence_complete());
  EXPECT_EQ(m.matched_registers, 1);
  bool merged_pair = false;
  for (const ComparedPair& p : m.pairs) merged_pair = merged_pair || p.label.find("merged") != std::string::npos;
  EXPECT_TRUE(merged_pair);
  EXPECT_EQ(m.aig.num_outputs(), 0u);  // y = q ^ q = 0 on both sides once q1 = q2
}

TEST(Miter, DifferentPortsAreAProblem) {
  const JsonDesign gold = parse_yosys_json(design_json(kGoldCells, R"("q": {"hide_name": 0, "bits": [8]})"), "gold");
  std::string text = design_json(kGoldCells, R"("q": {"hide_name": 0, "bits": [8]})");
  text.replace(text.find("\"y\""), 3, "\"z\"");
  const JsonDesign gate = parse_yosys_json(text, "gate");
  const Miter m = build_miter(gold, gate, "m");
  ASSERT_FALSE(m.problems.empty());
  EXPECT_NE(m.problems.front().find("port y"), std::string::npos);
}

TEST(Miter, LatchesAndLoopsAreRefused) {
  const JsonDesign latch = parse_yosys_json(
      design_json(R"("l": {"type": "$_DLATCH_P_", "connections": {"E": [2], "D": [4], "Q": [7]}})", ""), "latch");
  EXPECT_THROW(build_miter(latch, latch, "m"), Error);
  const JsonDesign loop = parse_yosys_json(
      design_json(R"("g1": {"type": "$_AND_", "connections": {"A": [4], "B": [9], "Y": [7]}},
                     "g2": {"type": "$_NOT_", "connections": {"A": [7], "Y": [9]}})",
                  ""),
      "loop");
  try {
    build_miter(loop, loop, "m");
    FAIL() << "a combinational loop must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("combinational loop"), std::string::npos);
  }
}

TEST(CellModels, FlipFlopsUseOneIfPerAsynchronousControl) {
  const ppa::Library lib = ppa::read_liberty(generic_liberty());
  ppa::CellModelOptions opt;
  opt.latches = false;
  const ppa::CellModels m = ppa::cell_models(lib, opt);
  EXPECT_TRUE(m.unmodelled.empty());
  const size_t dffr = m.verilog.find("module DFFR_X1");
  ASSERT_NE(dffr, std::string::npos);
  const std::string body = m.verilog.substr(dffr, m.verilog.find("endmodule", dffr) - dffr);
  EXPECT_NE(body.find("always @(posedge kld_clk or posedge kld_clr)"), std::string::npos) << body;
  EXPECT_NE(body.find("if (kld_clr) kld_iq <= 1'b0;"), std::string::npos) << body;
}

// ------------------------------------------------------------------ the flow

hw::HwConfig config_2x2() {
  hw::HwConfig c;
  c.rows = 2;
  c.cols = 2;
  c.group_w = 2;
  c.data_w = 8;
  c.acc_w = 16;
  c.max_t = 2;
  c.max_h = 2;
  c.max_w = 2;
  c.max_k = 4;
  c.max_m = 2;
  c.lanes = 1;
  c.win_cap = 4;
  return c;
}

// ctest runs every test in its own process, so each flow test synthesises
// what it needs once; the 2x2 array test checks several netlists in one go.

fs::path generate_2x2(const fs::path& dir, int lane_groups = 1) {
  const fs::path rtl = dir / "rtl";
  hw::HwConfig c = config_2x2();
  c.lane_groups = lane_groups;
  hw::write_rtl(c, rtl);
  return rtl;
}

const ProofResult* proof(const EquivResult& r, const std::string& module) {
  for (const ProofResult& p : r.proofs)
    if (p.module == module) return &p;
  return nullptr;
}

// `netlist` with the first `from` after `anchor` replaced by `to`, written to `out`.
fs::path edited_netlist(const std::string& netlist, const std::string& anchor, const std::string& from,
                        const std::string& to, const fs::path& out) {
  std::string text = read_file(netlist);
  const size_t start = text.find(anchor);
  EXPECT_NE(start, std::string::npos) << anchor;
  const size_t at = start == std::string::npos ? start : text.find(from, start);
  EXPECT_NE(at, std::string::npos) << "no `" << from << "` after `" << anchor << "`: netlist layout changed?";
  if (at == std::string::npos) return {};
  text.replace(at, from.size(), to);
  write_file_atomic(out, text);
  return out;
}

TEST(EquivFlow, TwoByTwoArrayProvenAndChangedNetlistsCaught) {
  REQUIRE_TOOLS();
  const fs::path dir = temp_dir("2x2");
  const fs::path rtl = generate_2x2(dir);
  EquivOptions o;
  o.rtl_dir = rtl;
  o.top = "kld_array";
  o.out_dir = dir / "array";
  o.proof_timeout_s = 300;
  const EquivResult r = run_equivalence(o);

  // The synthesised netlist: PE, row load register and array (with its wiring) proven.
  ASSERT_EQ(r.proofs.size(), 3u);
  EXPECT_NE(proof(r, "kld_pe"), nullptr);
  EXPECT_NE(proof(r, "kld_load_reg"), nullptr);
  EXPECT_EQ(r.proofs[2].module, "kld_array");  // submodules first
  for (const ProofResult& p : r.proofs) {
    EXPECT_EQ(p.status, Status::Equivalent) << p.module << ": " << p.reason;
    EXPECT_GT(p.compared, 0u);
    EXPECT_TRUE(p.unmatched_gold.empty()) << p.module;
  }
  const ProofResult* pe = proof(r, "kld_pe");
  ASSERT_NE(pe, nullptr);
  EXPECT_EQ(pe->kind, "module");
  EXPECT_GT(pe->matched_registers, 0);
  const ProofResult* array = proof(r, "kld_array");
  ASSERT_NE(array, nullptr);
  EXPECT_EQ(array->kind, "module + wiring");
  EXPECT_EQ(array->instances.size(), 6u);  // 2 x 2 PEs and a load register per row, cut as black boxes
  EXPECT_TRUE(r.all_equivalent());
  ASSERT_TRUE(fs::exists(r.json_report));
  EXPECT_NE(read_file(r.md_report).find("All modules equivalent."), std::string::npos);

  // One gate of the PE changed (XOR2 -> XNOR2, AND2 -> OR2): NOT equivalent, with a counterexample.
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{{"XOR2_X1", "XNOR2_X1"},
                                                                                 {"AND2_X1", "OR2_X1"}}) {
    SCOPED_TRACE(from + " -> " + to);
    EquivOptions m = o;
    m.netlist = edited_netlist(r.netlist, "module kld_pe", "  " + from + " ", "  " + to + " ", dir / (from + ".v"));
    ASSERT_FALSE(m.netlist.empty());
    m.modules = {"kld_pe"};
    m.out_dir = dir / ("mutated_" + from);
    const EquivResult mr = run_equivalence(m);
    ASSERT_EQ(mr.proofs.size(), 1u);
    EXPECT_EQ(mr.proofs[0].status, Status::NotEquivalent) << mr.proofs[0].reason;
    EXPECT_FALSE(mr.proofs[0].differing.empty());
    EXPECT_FALSE(mr.proofs[0].counterexample.empty());
    EXPECT_FALSE(mr.all_equivalent());
  }

  // Without random simulation the answer comes from yosys-abc, and is still right.
  {
    EquivOptions m = o;
    m.netlist = dir / "XOR2_X1.v";
    m.modules = {"kld_pe"};
    m.sim_rounds = 0;
    m.out_dir = dir / "nosim";
    const EquivResult mr = run_equivalence(m);
    ASSERT_EQ(mr.proofs.size(), 1u);
    EXPECT_EQ(mr.proofs[0].status, Status::NotEquivalent) << mr.proofs[0].reason;
    EXPECT_NE(mr.proofs[0].method.find("yosys-abc"), std::string::npos);
    EXPECT_FALSE(mr.proofs[0].differing.empty());
  }

  // Miswired: the first row's two PEs get each other's weights (a swap: every register of the
  // top row's weights stays in use, so the check can match them all and give a verdict).
  {
    EquivOptions m = o;
    const fs::path half = edited_netlist(r.netlist, "module kld_array", ".w_i(w_south[15:8])", ".w_i(w_south[7:0])",
                                         dir / "miswired_half.v");
    ASSERT_FALSE(half.empty());
    m.netlist = edited_netlist(half.string(), "module kld_array", ".w_i(w_south[7:0])", ".w_i(w_south[15:8])",
                               dir / "miswired.v");
    ASSERT_FALSE(m.netlist.empty());
    m.out_dir = dir / "miswired";
    const EquivResult mr = run_equivalence(m);
    const ProofResult* mpe = proof(mr, "kld_pe");
    const ProofResult* marray = proof(mr, "kld_array");
    ASSERT_TRUE(mpe && marray);
    EXPECT_EQ(mpe->status, Status::Equivalent) << mpe->reason;
    EXPECT_EQ(marray->status, Status::NotEquivalent) << marray->reason;
    ASSERT_FALSE(marray->differing.empty());
    EXPECT_NE(marray->differing[0].find("g_row[0].g_col["), std::string::npos) << marray->differing[0];
    EXPECT_NE(marray->differing[0].find("].u_pe.w_i"), std::string::npos) << marray->differing[0];
  }
}

// Both lane kinds: one group per lane, and two groups in alternate cycles (LANE_GROUPS 2).
TEST(EquivFlow, DetectorLaneIsEquivalent) {
  REQUIRE_TOOLS();
  for (int lane_groups : {1, 2}) {
    SCOPED_TRACE("LANE_GROUPS " + std::to_string(lane_groups));
    const fs::path dir = temp_dir("lane" + std::to_string(lane_groups));
    EquivOptions o;
    o.rtl_dir = generate_2x2(dir, lane_groups);
    o.top = "kld_detector_lane";
    o.out_dir = dir / "out";
    o.proof_timeout_s = 300;
    const EquivResult r = run_equivalence(o);
    ASSERT_EQ(r.proofs.size(), 1u);
    EXPECT_EQ(r.proofs[0].status, Status::Equivalent) << r.proofs[0].reason;
    // The lane around its window memory, which is cut as a black box.
    ASSERT_EQ(r.proofs[0].instances.size(), 1u);
    EXPECT_EQ(r.proofs[0].instances[0].rfind("u_window (kld_sram_", 0), 0u) << r.proofs[0].instances[0];
    EXPECT_GT(r.proofs[0].compared, 0u);
  }
}

// Every synthesis recipe's netlist of adders, a subtractor and comparisons (carry units of 1 to
// 25 bits) is proven against Yosys's coarse $alu cells: the Kogge-Stone carry map of `delay-ks`
// (scripts/yosys/kogge_stone_lcu.v) included.
TEST(EquivFlow, EveryRecipesCarryUnitsAreProven) {
  REQUIRE_TOOLS();
  const fs::path dir = temp_dir("recipes");
  for (const ppa::SynthRecipe& recipe : ppa::synth_recipes()) {
    SCOPED_TRACE(recipe.name);
    EquivOptions o;
    o.rtl_files = {fs::path(KALEIDO_SOURCE_DIR) / "tests/ppa/data/ppa_adders.v"};
    o.top = "ppa_adders";
    o.synth_recipe = recipe.name;
    o.out_dir = dir / recipe.name;
    o.proof_timeout_s = 300;
    const EquivResult r = run_equivalence(o);
    ASSERT_EQ(r.proofs.size(), 1u);
    EXPECT_EQ(r.proofs[0].status, Status::Equivalent) << r.proofs[0].reason;
    EXPECT_GT(r.proofs[0].compared, 50u);  // every output and register bit
    const std::string script = read_file(dir / recipe.name / "work" / "synth" / "synth.ys");
    EXPECT_EQ(script.find("kogge_stone_lcu.v") != std::string::npos, recipe.kogge_stone_carries);
  }
}

TEST(EquivErrors, MissingToolNamesTheDebianPackage) {
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  const fs::path empty = temp_dir("nopath");
  setenv("PATH", empty.c_str(), 1);
  EquivOptions o;
  o.rtl_dir = fs::path(source_dir()) / "rtl" / hw::default_config_8x8().name();
  o.top = "kld_pe";
  o.out_dir = empty / "out";
  try {
    run_equivalence(o);
    setenv("PATH", saved.c_str(), 1);
    FAIL() << "expected an error for the missing tool";
  } catch (const Error& e) {
    setenv("PATH", saved.c_str(), 1);
    EXPECT_NE(std::string(e.what()).find("apt-get install yosys"), std::string::npos) << e.what();
  }
}

TEST(EquivErrors, MalformedNetlistAndMissingTop) {
  REQUIRE_TOOLS();
  const fs::path dir = temp_dir("bad");
  const fs::path rtl = fs::path(source_dir()) / "rtl" / hw::default_config_8x8().name() / "kld_pe.v";
  EquivOptions o;
  o.rtl_files = {rtl};
  o.top = "kld_pe";
  o.out_dir = dir / "out";

  write_file_atomic(dir / "garbage.v", "module kld_pe(a, b);\n  input a\n  output b;\n  this is not verilog\nendmodule\n");
  o.netlist = dir / "garbage.v";
  try {
    run_equivalence(o);
    FAIL() << "expected an error for a malformed netlist";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("yosys failed reading the netlist"), std::string::npos) << e.what();
  }

  write_file_atomic(dir / "other.v", "module other(input a, output b);\n  assign b = a;\nendmodule\n");
  o.netlist = dir / "other.v";
  try {
    run_equivalence(o);
    FAIL() << "expected an error for a netlist without the top module";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("does not define the top module kld_pe"), std::string::npos) << e.what();
  }

  o.netlist = dir / "missing.v";
  EXPECT_THROW(run_equivalence(o), FileError);

  o.netlist.clear();
  o.modules = {"no_such_module"};
  try {
    run_equivalence(o);
    FAIL() << "expected an error for an unknown module";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.param(), "--modules");
  }
}

TEST(EquivCli, ExitCodeFollowsTheResultAndTimeoutIsNoPass) {
  REQUIRE_TOOLS();
  const fs::path dir = temp_dir("cli");
  const std::string rtl = (fs::path(source_dir()) / "rtl" / hw::default_config_8x8().name()).string();
  const std::string base = std::string(KALEIDO_TEST_KALEIDO_BIN) + " equiv --rtl " + rtl + " --top kld_pe";
  EXPECT_EQ(std::system((base + " --out " + (dir / "ok").string() + " > /dev/null 2>&1").c_str()), 0);
  EXPECT_TRUE(fs::exists(dir / "ok/equiv.json"));
  EXPECT_TRUE(fs::exists(dir / "ok/equiv.md"));
  const fs::path netlist = dir / "ok/work/synth/kld_pe.mapped.v";
  ASSERT_TRUE(fs::exists(netlist));

  const fs::path bad = edited_netlist(netlist.string(), "module kld_pe", "  XOR2_X1 ", "  XNOR2_X1 ", dir / "bad.v");
  EXPECT_NE(std::system((base + " --netlist " + bad.string() + " --out " + (dir / "bad").string() +
                         " > /dev/null 2>&1").c_str()),
            0);

  // A time limit no solver meets: unknown, never equivalent; non-zero exit.
  EXPECT_NE(std::system((base + " --netlist " + netlist.string() + " --sim-rounds 0 --timeout 0.001 --out " +
                         (dir / "timeout").string() + " > /dev/null 2>&1").c_str()),
            0);
  const std::string report = read_file(dir / "timeout/equiv.json");
  EXPECT_NE(report.find("\"status\": \"unknown\""), std::string::npos);
  EXPECT_NE(report.find("time limit"), std::string::npos);
}

}  // namespace
}  // namespace kaleido::equiv
