// Liberty reader: functions, units, cells, tables, merging, and clear errors
// on malformed input. Expected values of the generic library come from its
// documented formulas (scripts/liberty/README.md), not from the file.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "ppa/boolfunc.hpp"
#include "ppa/liberty.hpp"
#include "ppa_helpers.hpp"

namespace kaleido::ppa {
namespace {

using test::TempDir;

// ---------------------------------------------------------------- functions

// Truth table of `text` over `vars` against a reference lambda.
void expect_function(const std::string& text, const std::vector<std::string>& vars,
                     const std::function<bool(uint32_t)>& ref) {
  const BoolFunction f = BoolFunction::parse(text);
  const std::vector<uint8_t> t = f.truth_table(vars);
  ASSERT_EQ(t.size(), size_t{1} << vars.size());
  for (uint32_t k = 0; k < t.size(); ++k) EXPECT_EQ(t[k] != 0, ref(k)) << text << " at assignment " << k;
}

TEST(BoolFunction, LibertySyntaxes) {
  auto A = [](uint32_t k) { return (k & 1) != 0; };
  auto B = [](uint32_t k) { return (k & 2) != 0; };
  auto C = [](uint32_t k) { return (k & 4) != 0; };
  const std::vector<std::string> abc{"A", "B", "C"};
  expect_function("!A", abc, [&](uint32_t k) { return !A(k); });
  expect_function("A'", abc, [&](uint32_t k) { return !A(k); });
  expect_function("A B", abc, [&](uint32_t k) { return A(k) && B(k); });
  expect_function("A*B", abc, [&](uint32_t k) { return A(k) && B(k); });
  expect_function("A+B", abc, [&](uint32_t k) { return A(k) || B(k); });
  expect_function("(A^B)", abc, [&](uint32_t k) { return A(k) != B(k); });
  // | binds loosest, then AND, then ^ (Liberty precedence).
  expect_function("A|B&C", abc, [&](uint32_t k) { return A(k) || (B(k) && C(k)); });
  expect_function("A&B^C", abc, [&](uint32_t k) { return A(k) && (B(k) != C(k)); });
  expect_function("!((A1&A2)|B)", {"A1", "A2", "B"}, [&](uint32_t k) { return !((A(k) && B(k)) || C(k)); });
  expect_function("(A&!S)|(B&S)", {"A", "B", "S"}, [&](uint32_t k) { return C(k) ? B(k) : A(k); });
  expect_function("1", abc, [](uint32_t) { return true; });
  expect_function("(A B)'", abc, [&](uint32_t k) { return !(A(k) && B(k)); });
}

TEST(BoolFunction, SyntaxErrorsAreClear) {
  for (const char* bad : {"A &", "(A|B", "A | | B", ")"}) {
    try {
      BoolFunction::parse(bad);
      ADD_FAILURE() << "no error for " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(BoolFunction, SensitivityAndProbability) {
  // Boolean difference: NAND2 output follows A only when B = 1 (half the time).
  EXPECT_DOUBLE_EQ(BoolFunction::parse("!(A&B)").sensitivity("A"), 0.5);
  EXPECT_DOUBLE_EQ(BoolFunction::parse("A^B").sensitivity("B"), 1.0);
  EXPECT_DOUBLE_EQ(BoolFunction::parse("!((A1&A2)|B)").sensitivity("B"), 0.75);
  EXPECT_DOUBLE_EQ(BoolFunction::parse("!((A1&A2)|B)").sensitivity("A1"), 0.25);
  EXPECT_DOUBLE_EQ(BoolFunction::parse("A").sensitivity("Z"), 0.0);
  EXPECT_DOUBLE_EQ(BoolFunction::parse("A|B").probability_one(), 0.75);
  // OpenSTA's inferred condition for an AND input is the other input.
  BoolFunction when;
  ASSERT_TRUE(BoolFunction::parse("!(A&B)").opensta_inferred_when("A", when));
  EXPECT_DOUBLE_EQ(when.independent_probability(), 0.5);
  EXPECT_FALSE(BoolFunction::parse("IQ").opensta_inferred_when("CK", when));
}

TEST(Glob, Patterns) {
  EXPECT_TRUE(glob_match("kld_sram*", "kld_sram"));
  EXPECT_TRUE(glob_match("kld_sram*", "kld_sram_64x32"));
  EXPECT_FALSE(glob_match("kld_sram*", "kld_srm"));
  EXPECT_TRUE(glob_match("*__lpflow_*", "sky130_fd_sc_hd__lpflow_inputiso1p_1"));
  EXPECT_TRUE(glob_match("a?c", "abc"));
  EXPECT_FALSE(glob_match("a?c", "ac"));
}

// ---------------------------------------------------------------- generic library

// The generator's constants (scripts/liberty/make_kaleido_generic.py, README.md).
constexpr double kSite = 0.266;       // um^2
constexpr double kCinv = 1.6e-15;     // F
constexpr double kTau = 4e-12;        // s
constexpr double kRinv = kTau / kCinv;
constexpr double kVdd = 1.1;

TEST(Liberty, GenericLibraryUnitsAndCells) {
  const Library lib = read_liberty(test::generic_lib());
  EXPECT_EQ(lib.name, "kaleido_generic");
  EXPECT_DOUBLE_EQ(lib.units.time_s, 1e-9);
  EXPECT_DOUBLE_EQ(lib.units.cap_f, 1e-12);
  EXPECT_DOUBLE_EQ(lib.units.leakage_w, 1e-9);
  EXPECT_DOUBLE_EQ(lib.voltage_v, kVdd);
  for (const char* c : {"INV_X1", "BUF_X1", "NAND2_X1", "NOR2_X1", "AND2_X1", "OR2_X1", "XOR2_X1", "XNOR2_X1",
                        "AOI21_X1", "OAI21_X1", "MUX2_X1", "DFF_X1", "DFFR_X1", "TIEHI_X1", "TIELO_X1"})
    EXPECT_NE(lib.cell(c), nullptr) << c;

  const LibCell* inv = lib.cell("INV_X1");
  ASSERT_NE(inv, nullptr);
  EXPECT_NEAR(inv->area, 2 * kSite, 1e-9);
  EXPECT_NEAR(inv->leakage_w(), 2 * 5e-9, 1e-15);
  EXPECT_NEAR(inv->pin("A")->capacitance_f, kCinv, 1e-21);
  EXPECT_EQ(inv->pin("Y")->function, "!A");
  EXPECT_NEAR(lib.cell("NAND2_X1")->pin("B")->capacitance_f, 4.0 / 3.0 * kCinv, 1e-20);
  EXPECT_NEAR(lib.cell("DFF_X1")->area, 17 * kSite, 1e-9);

  const LibCell* dffr = lib.cell("DFFR_X1");
  ASSERT_EQ(dffr->sequentials.size(), 1u);
  EXPECT_FALSE(dffr->sequentials[0].latch);
  EXPECT_EQ(dffr->sequentials[0].next_state, "D");
  EXPECT_EQ(dffr->sequentials[0].clocked_on, "CK");
  EXPECT_EQ(dffr->sequentials[0].clear, "!RN");
  EXPECT_TRUE(dffr->pin("CK")->is_clock);

  const WireLoadModel* wl = lib.wire_load();
  ASSERT_NE(wl, nullptr);
  EXPECT_NEAR(wl->wire_cap_f(3), 3 * 4.0 * 0.2e-15, 1e-21);
  EXPECT_NEAR(wl->wire_cap_f(12), 12 * 4.0 * 0.2e-15, 1e-21);  // beyond the table: slope
}

TEST(Liberty, TablesInterpolateAndExtrapolateLinearly) {
  // The generic tables sample linear formulas, so bilinear lookup must give
  // the formula exactly, on and off the grid and outside it.
  const Library lib = read_liberty(test::generic_lib());
  const LibPin* y = lib.cell("NAND2_X1")->pin("Y");
  ASSERT_FALSE(y->timing.empty());
  const TimingGroup& arc = y->timing.front();
  for (double s : {0.005e-9, 0.05e-9, 0.3e-9, 0.5e-9}) {
    for (double c : {0.0005e-12, 0.004e-12, 0.1e-12, 0.2e-12}) {
      const double delay = kTau * 2.0 + kRinv * c + 0.2 * s;
      EXPECT_NEAR(arc.cell_rise.lookup(s, c), delay, 1e-15) << s << " " << c;
      const double tran = 2.2 * kRinv * (c + 2.0 * kCinv) + 0.1 * s;
      EXPECT_NEAR(arc.fall_transition.lookup(s, c), tran, 1e-15);
    }
  }
  // Internal energy per output transition: 0.5 p C_inv VDD^2 (1 + slew / 0.1 ns).
  const InternalPowerGroup& pw = y->power.front();
  EXPECT_NEAR(pw.rise.lookup(0.05e-9, 0.01e-12), 0.5 * 2.0 * kCinv * kVdd * kVdd * 1.5, 1e-19);
}

// ---------------------------------------------------------------- open PDK libraries

TEST(Liberty, Sky130) {
  const auto path = test::sky130();
  KLD_SKIP_WITHOUT(path, "sky130_fd_sc_hd__tt_025C_1v80.lib.gz");
  const Library lib = read_liberty(path);
  EXPECT_EQ(lib.name, "sky130_fd_sc_hd__tt_025C_1v80");
  EXPECT_GT(lib.cells.size(), 400u);
  EXPECT_DOUBLE_EQ(lib.units.time_s, 1e-9);
  EXPECT_DOUBLE_EQ(lib.units.cap_f, 1e-12);
  EXPECT_DOUBLE_EQ(lib.units.leakage_w, 1e-9);
  EXPECT_DOUBLE_EQ(lib.voltage_v, 1.8);
  const LibCell* ff = lib.cell("sky130_fd_sc_hd__dfrtp_1");
  ASSERT_NE(ff, nullptr);
  EXPECT_NEAR(ff->area, 25.024, 1e-9);
  ASSERT_EQ(ff->sequentials.size(), 1u);
  EXPECT_EQ(ff->sequentials[0].clear, "!RESET_B");
  EXPECT_EQ(ff->sequentials[0].next_state, "D");
  EXPECT_TRUE(ff->pin("CLK")->is_clock);
  EXPECT_EQ(ff->pin("Q")->power.size(), 2u);  // related to CLK and RESET_B
  const LibCell* nand = lib.cell("sky130_fd_sc_hd__nand2_1");
  ASSERT_NE(nand, nullptr);
  const BoolFunction f = BoolFunction::parse(nand->pin("Y")->function);
  EXPECT_EQ(f.truth_table({"A", "B"}), (std::vector<uint8_t>{1, 1, 1, 0}));
  EXPECT_NEAR(nand->pin("A")->capacitance_f, 2.39e-15, 0.2e-15);  // a couple of fF
  ASSERT_NE(lib.wire_load(), nullptr);
  EXPECT_EQ(lib.wire_load()->name, "Small");
}

TEST(Liberty, IhpSg13g2) {
  const auto path = test::pdk_file("sg13g2_stdcell_typ_1p20V_25C.lib.gz");
  KLD_SKIP_WITHOUT(path, "sg13g2_stdcell_typ_1p20V_25C.lib.gz");
  const Library lib = read_liberty(path);
  EXPECT_GT(lib.cells.size(), 50u);
  EXPECT_DOUBLE_EQ(lib.units.leakage_w, 1e-12);
  EXPECT_DOUBLE_EQ(lib.voltage_v, 1.2);
  int flops = 0;
  for (const LibCell& c : lib.cells) flops += !c.sequentials.empty();
  EXPECT_GT(flops, 2);
}

TEST(Liberty, Asap7SplitFilesMergeIntoOneLibrary) {
  const auto simple = test::pdk_file("asap7sc7p5t_SIMPLE_RVT_FF_nldm_211120.lib.gz");
  const auto invbuf = test::pdk_file("asap7sc7p5t_INVBUF_RVT_FF_nldm_220122.lib.gz");
  const auto seq = test::pdk_file("asap7sc7p5t_SEQ_RVT_FF_nldm_220123.lib.gz");
  KLD_SKIP_WITHOUT(simple, "ASAP7 SIMPLE");
  KLD_SKIP_WITHOUT(invbuf, "ASAP7 INVBUF");
  KLD_SKIP_WITHOUT(seq, "ASAP7 SEQ");
  const size_t n = read_liberty(simple).cells.size() + read_liberty(invbuf).cells.size() +
                   read_liberty(seq).cells.size();
  const Library merged = read_liberty(std::vector<std::filesystem::path>{simple, invbuf, seq});
  EXPECT_EQ(merged.cells.size(), n);
  EXPECT_DOUBLE_EQ(merged.units.time_s, 1e-12);
  EXPECT_DOUBLE_EQ(merged.units.cap_f, 1e-15);
  EXPECT_NE(merged.cell("DFFASRHQNx1_ASAP7_75t_R"), nullptr);

  TempDir tmp("asap7");
  const auto out = tmp.path() / "asap7_merged.lib";
  write_merged_liberty({simple, invbuf, seq}, out);
  const std::string text = read_file(out);
  size_t licences = 0;
  for (size_t p = text.find("BSD 3-Clause License"); p != std::string::npos; p = text.find("BSD 3-Clause License", p + 1))
    ++licences;
  EXPECT_EQ(licences, 3u) << "each source's licence header is kept";
  const Library reread = read_liberty(out);
  EXPECT_EQ(reread.cells.size(), n);
  // The merged file has one library group with every cell and an inverter (ABC needs it).
  EXPECT_NE(reread.cell("INVx1_ASAP7_75t_R"), nullptr);
}

TEST(Liberty, MergeMarksDontUseAndRejectsConflicts) {
  TempDir tmp("merge");
  const auto out = tmp.path() / "g.lib";
  write_merged_liberty({test::generic_lib()}, out, {"XOR*"});
  const Library lib = read_liberty(out);
  EXPECT_TRUE(lib.cell("XOR2_X1")->dont_use);
  EXPECT_FALSE(lib.cell("XNOR2_X1")->dont_use);
  try {
    write_merged_liberty({test::generic_lib(), test::generic_lib()}, out);
    ADD_FAILURE() << "duplicate cells accepted";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("already defined"), std::string::npos) << e.what();
  }
  // A library in other units (ps) cannot be merged without rescaling.
  const auto ps_lib = tmp.path() / "ps.lib";
  write_file_atomic(ps_lib, "library (x) {\n  time_unit : \"1ps\";\n  cell (Z) { area : 1; }\n}\n");
  EXPECT_THROW(write_merged_liberty({test::generic_lib(), ps_lib}, out), FileError);
}

// ---------------------------------------------------------------- malformed input

// The error of parsing `text` as a Liberty file.
std::string parse_error(const std::string& text) {
  try {
    library_from_files({parse_liberty_text(text, "bad.lib")});
  } catch (const FileError& e) {
    return e.what();
  }
  return "";
}

TEST(Liberty, TruncatedFileGivesLineNumber) {
  const std::string full = read_file(test::generic_lib());
  const std::string cut = full.substr(0, full.size() / 2);
  const int lines = static_cast<int>(std::count(cut.begin(), cut.end(), '\n')) + 1;
  const std::string err = parse_error(cut);
  ASSERT_FALSE(err.empty());
  EXPECT_NE(err.find("bad.lib"), std::string::npos) << err;
  EXPECT_NE(err.find("truncated"), std::string::npos) << err;
  EXPECT_NE(err.find("line " + std::to_string(lines)), std::string::npos) << err;
}

TEST(Liberty, MalformedStatementsGiveLineNumbers) {
  // Each case: text, line of the error, a word of the message.
  const std::vector<std::tuple<std::string, int, std::string>> cases = {
      {"library (x) {\n  time_unit : \"1ns\";\n  cell (A) {\n    area 3;\n  }\n}\n", 4, "expected ':' or '('"},
      {"library (x) {\n  cell (A) {\n    area : abc;\n  }\n}\n", 3, "not a number"},
      {"library (x) {\n  cell (A) {\n    pin (Y) { direction : output; function : \"(A\"; }\n  }\n}\n", 3,
       "missing ')'"},
      {"library (x) {\n  comment : \"never closed;\n}\n", 2, "string is not closed"},
      {"library (x) {\n  /* open comment\n}\n", 2, "comment is not closed"},
      {"cell (A) { }\n", 1, "expected `library`"},
      {"library (x) {\n  time_unit : \"1 parsec\";\n}\n", 2, "time_unit"},
      {"library (x) {\n cell (A) {\n  pin (Y) { direction : output;\n   timing () { cell_rise (undefined_t) { values (\"1, 2\"); } }\n  }\n }\n}\n",
       4, "undefined template"},
  };
  for (const auto& [text, line, word] : cases) {
    const std::string err = parse_error(text);
    EXPECT_NE(err.find("line " + std::to_string(line) + ":"), std::string::npos) << err << "\n--- for:\n" << text;
    EXPECT_NE(err.find(word), std::string::npos) << err;
  }
}

TEST(Liberty, MissingAndCorruptFiles) {
  EXPECT_THROW(read_liberty(std::filesystem::path("/nonexistent/x.lib")), FileError);
  TempDir tmp("corrupt");
  // A .gz that is not gzip is read as plain text, which then fails to parse.
  const auto bad = tmp.path() / "bad.lib.gz";
  write_file_atomic(bad, "\x01\x02 not a library");
  try {
    read_liberty(bad);
    ADD_FAILURE() << "garbage accepted";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.lib.gz"), std::string::npos);
  }
}

TEST(Liberty, WrittenTreeReadsBackTheSame) {
  TempDir tmp("rt");
  const LibFile f = parse_liberty_file(test::generic_lib());
  std::ostringstream text;
  write_liberty(text, f.library);
  const Library a = read_liberty(test::generic_lib());
  const Library b = library_from_files({parse_liberty_text(text.str(), "rewritten.lib")});
  ASSERT_EQ(a.cells.size(), b.cells.size());
  for (size_t i = 0; i < a.cells.size(); ++i) {
    EXPECT_EQ(a.cells[i].name, b.cells[i].name);
    EXPECT_DOUBLE_EQ(a.cells[i].area, b.cells[i].area);
    ASSERT_EQ(a.cells[i].pins.size(), b.cells[i].pins.size());
    for (size_t p = 0; p < a.cells[i].pins.size(); ++p) {
      EXPECT_EQ(a.cells[i].pins[p].function, b.cells[i].pins[p].function);
      EXPECT_DOUBLE_EQ(a.cells[i].pins[p].capacitance_f, b.cells[i].pins[p].capacitance_f);
    }
  }
}

}  // namespace
}  // namespace kaleido::ppa
