// Builder checks: widths of assignments, port connections, names, statement
// placement, and the whole-module driver/reader analysis. Each error must
// name the things involved.
#include <gtest/gtest.h>

#include "expect_error.hpp"
#include "examples.hpp"

namespace kaleido::vlog {
namespace {

using namespace testing;

// A module with a clock, a reset and a few operands.
struct Base : ::testing::Test {
  Module m{"unit"};
  Expr clk = m.input("clk_i", 1);
  Expr rst_n = m.input("rst_ni", 1);
  Expr a = m.input("a_i", 8);
  Expr en = m.input("en_i", 1);

  // Uses clk_i, rst_ni and en_i, so checks only see what a test adds.
  void tie_off() {
    Expr flag_q = m.signal("flag_q", 1);
    m.always_ff(clk, rst_n).flop(flag_q, en, 0);
    m.assign(m.output("flag_o", 1), flag_q);
  }
};

TEST_F(Base, AssignmentWidthsMustMatchExactly) {
  Expr y = m.output("y_o", 9);
  expect_error([&] { m.assign(y, a); }, {"module unit", "y_o", "9-bit", "a_i", "8-bit", "zext"});
  Expr y_q = m.signal("y_q", 9);
  Always& ff = m.always_ff(clk, rst_n);
  expect_error([&] { ff.body().assign(y_q, a); }, {"non-blocking", "y_q", "9-bit", "a_i", "8-bit"});
  expect_error([&] { m.always_comb().assign(y, a + 1); }, {"blocking", "y_o", "a_i + 8'd1"});
  m.assign(y, zext(a, 9));  // explicit extension is accepted
}

TEST_F(Base, ConditionsAreOneBit) {
  Expr y = m.output("y_o", 8);
  Block& b = m.always_comb();
  expect_error([&] { b.if_(a); }, {"if condition", "a_i", "1-bit"});
  b.assign(y, 0);
  b.if_(a != 0).then_().assign(y, a);
}

TEST_F(Base, TargetsMustBeAssignable) {
  expect_error([&] { m.assign(a, a); }, {"'a_i' is not assignable"});
  Expr p = m.localparam("Init", 8, 3);
  expect_error([&] { m.assign(p, a); }, {"'Init' is not assignable"});
}

TEST_F(Base, FlopAndCombNamingRules) {
  Expr y = m.output("y_o", 8);
  Expr data = m.signal("data", 8);
  Always& ff = m.always_ff(clk, rst_n);
  expect_error([&] { ff.body().assign(data, a); }, {"flop 'data' must be named *_q"});
  expect_error([&] { ff.body().assign(y, a); }, {"output port 'y_o' cannot be a flop"});
  Expr data_q = m.signal("data_q", 8);
  expect_error([&] { m.assign(data_q, a); }, {"'data_q' is named as a flop"});
  expect_error([&] { m.always_comb().assign(data_q, a); }, {"'data_q' is named as a flop", "always @*"});
  expect_error([&] { ff.on_reset().assign(data_q, a); }, {"reset value 'a_i'", "constant"});
  expect_error([&] { m.always_ff(a, rst_n); }, {"clock must be a 1-bit input port named clk*_i"});
  expect_error([&] { m.always_ff(clk, en); }, {"reset must be a 1-bit input port named rst*_ni"});
}

TEST(VlogNames, PortsSignalsAndConstantsFollowTheStyle) {
  Module m("names");
  expect_error([&] { m.input("data", 8); }, {"input port 'data' must end in _i"});
  expect_error([&] { m.output("data_i", 8); }, {"output port 'data_i' must end in _o"});
  expect_error([&] { m.input("DataIn_i", 8); }, {"lower_snake_case"});
  expect_error([&] { m.signal("x_o", 8); }, {"reserved for ports"});
  expect_error([&] { m.signal("reg", 8); }, {"keyword"});
  expect_error([&] { m.signal("unused_bits", 8); }, {"Scope::unused()"});
  expect_error([&] { m.localparam("st_idle", 2, 0); }, {"UpperCamelCase or ALL_CAPS"});
  m.signal("data", 8);
  expect_error([&] { m.signal("data", 4); }, {"'data' is declared twice"});
  expect_error([] { Module bad("BadName"); }, {"lower_snake_case"});
}

TEST_F(Base, InstancePortsAreCheckedAtConnection) {
  Module sub("sub");
  sub.input("x_i", 8);
  sub.input("y_i", 1);
  sub.output("z_o", 4);
  Expr z = m.signal("z", 4);
  Expr wide = m.signal("wide", 9);
  expect_error(
      [&] {
        m.instance(sub, "u_sub", {{"x_i", a}, {"z_o", z}});
      },
      {"instance u_sub of sub", "ports not connected: y_i"});
  expect_error(
      [&] {
        m.instance(sub, "u_sub", {{"x_i", a}, {"y_i", en}, {"z_o", z}, {"w_i", en}});
      },
      {"no port 'w_i'", "ports: x_i, y_i, z_o"});
  expect_error(
      [&] {
        m.instance(sub, "u_sub", {{"x_i", wide}, {"y_i", en}, {"z_o", z}});
      },
      {"port x_i is 8 bits", "'wide'", "9 bits"});
  expect_error(
      [&] {
        m.instance(sub, "u_sub", {{"x_i", a}, {"y_i", en}, {"y_i", en}, {"z_o", z}});
      },
      {"port y_i", "connected twice"});
  expect_error(
      [&] {
        m.instance(sub, "u_sub", {{"x_i", a}, {"y_i", en}, {"z_o", a.slice(3, 0)}});
      },
      {"port z_o is an output", "'a_i[3:0]'"});
  expect_error([&] { m.instance(sub, "sub0", {{"x_i", a}, {"y_i", en}, {"z_o", z}}); }, {"starting with 'u_'"});
  m.instance(sub, "u_sub", {{"z_o", z}, {"y_i", en}, {"x_i", a}});  // any order; emitted in port order
}

TEST_F(Base, ParameterOverridesAreCheckedAtInstantiation) {
  Module sub("sub");
  Expr x = sub.input("x_i", 8);
  Expr y = sub.output("y_o", 8);
  // Offset is used through a localparam computed from it.
  const Expr offset = sub.parameter("Offset", 3, 5);
  sub.assign(y, x + zext(sub.localparam("Bias", offset + 1), 8));
  sub.check();
  Expr z = m.signal("z", 8);
  const std::vector<Connection> conns = {{"x_i", a}, {"y_o", z}};
  expect_error([&] { m.instance(sub, "u_sub", {{"Ofset", 1}}, conns); },
               {"instance u_sub of sub", "no parameter 'Ofset'", "parameters: Offset"});
  expect_error([&] { m.instance(sub, "u_sub", {{"Offset", 8}}, conns); },
               {"instance u_sub of sub", "parameter Offset", "value 8 does not fit its 3 bits"});
  expect_error([&] { m.instance(sub, "u_sub", {{"Offset", 1}, {"Offset", 2}}, conns); },
               {"parameter Offset", "overridden twice"});
  Module plain("plain");
  plain.assign(plain.output("q_o", 8), plain.input("d_i", 8));
  expect_error([&] { m.instance(plain, "u_plain", {{"Width", 8}}, {{"d_i", a}, {"q_o", z}}); },
               {"no parameter 'Width'", "parameters: none"});
  m.instance(sub, "u_sub", {{"Offset", 7}}, conns);  // the largest 3-bit value
  m.assign(m.output("y_o", 8), z);
  tie_off();
  m.check();
}

TEST(VlogParameters, DeclarationRulesAndUnknownValues) {
  Module m("unit");
  expect_error([&] { m.parameter("Wide", 3, 8); }, {"parameter Wide", "default 8 does not fit 3"});
  expect_error([&] { m.parameter("lower_case", 3, 1); }, {"'lower_case'", "UpperCamelCase or ALL_CAPS"});
  Expr sel = m.input("sel_i", 2);
  Expr y = m.output("y_o", 1);
  Expr p = m.parameter("Pick", 2, 1);
  Expr unneeded = m.parameter("Spare", 2, 1);
  (void)unneeded;
  // Its value belongs to each instance: no duplicate-label check against it, and no
  // plain constant value.
  EXPECT_FALSE(detail::has_known_value(p));
  expect_error([&] { detail::constant_value(p); }, {"'Pick'", "module parameter's value is not known"});
  Block& b = m.always_comb();
  b.assign(y, 0);
  CaseStmt& c = b.case_(sel);
  c.item(constant(2, 1)).assign(y, 1);
  c.item(p).assign(y, 1);  // Pick may be overridden to anything: accepted
  c.default_();
  expect_error([&] { m.check(); }, {"parameter 'Spare' is never used"});
}

TEST(VlogDesign, InstancesResolveAgainstTheDesign) {
  Design d(golden_header());
  Module& sub = d.add_module("leaf");
  Expr x = sub.input("x_i", 1);
  Expr y = sub.output("y_o", 1);
  sub.assign(y, x);
  Module& top = d.add_module("top");
  Expr in = top.input("in_i", 1);
  Expr out = top.output("out_o", 1);
  top.instance(sub, "u_leaf", {{"x_i", in}, {"y_o", out}});
  sub.assign(sub.output("extra_o", 1), x);  // the leaf changes after it was instantiated
  expect_error([&] { d.check(); }, {"instance u_leaf", "ports of leaf changed"});

  Design p(golden_header());
  Module& psub = p.add_module("leaf");
  psub.assign(psub.output("y_o", 1), psub.input("x_i", 1));
  Module& ptop = p.add_module("top");
  ptop.instance(psub, "u_leaf", {{"x_i", ptop.input("in_i", 1)}, {"y_o", ptop.output("out_o", 1)}});
  psub.waive(psub.parameter("Late", 1, 0), "UNUSEDPARAM", "added after the instance to test the design check");
  expect_error([&] { p.check(); }, {"instance u_leaf", "parameters of leaf changed"});

  Design e(golden_header());
  Module& t2 = e.add_module("top");
  Expr i2 = t2.input("in_i", 1);
  Expr o2 = t2.output("out_o", 1);
  t2.instance("ghost", {{"x_i", PortDir::Input, 1, false}, {"y_o", PortDir::Output, 1, false}}, "u_ghost",
              {{"x_i", i2}, {"y_o", o2}});
  expect_error([&] { e.check(); }, {"instantiates ghost, which is not in the design"});
  expect_error([&] { e.add_module("top"); }, {"module top is added twice"});
}

TEST_F(Base, UndrivenAndUnreadBitsAreReportedWithRanges) {
  Expr y = m.output("y_o", 4);
  m.assign(y, a.slice(3, 0));
  m.always_ff(clk, rst_n).flop(m.signal("en_q", 1), en, 0);
  expect_error([&] { m.check(); }, {"input 'a_i': bits [7:4] are never read", "Scope::unused()"});
}

TEST_F(Base, UnusedSinkAndWaiverAreHonestAndListed) {
  Expr y = m.output("y_o", 4);
  Expr en_q = m.signal("en_q", 1);
  m.always_ff(clk, rst_n).flop(en_q, en, 0);
  m.assign(y, mux(en_q, a.slice(3, 0), zero(4)));
  m.unused(a.slice(7, 4), "upper nibble is ignored in 4-bit mode");
  m.check();
  const auto u = m.unused_bits();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].bits, "a_i[7:4]");
  const std::string text = m.emit(golden_header());
  EXPECT_NE(text.find("//   a_i[7:4]: upper nibble is ignored in 4-bit mode"), std::string::npos) << text;
  EXPECT_NE(text.find("wire unused_a_i;\n  assign unused_a_i = ^a_i[7:4];"), std::string::npos) << text;
  expect_error([&] { m.unused(a, ""); }, {"justification is mandatory"});
}

TEST(VlogWaivers, NeedAKnownCodeAndAJustification) {
  Module m("waivers");
  Expr cfg = m.input("cfg_i", 8);
  Expr y = m.output("y_o", 4);
  expect_error([&] { m.waive(cfg, "UNUSED", ""); }, {"justification", "mandatory"});
  expect_error([&] { m.waive(cfg, "NOTACODE", "because of reasons"); }, {"'NOTACODE' is not a known"});
  m.assign(y, cfg.slice(3, 0));
  expect_error([&] { m.check(); }, {"bits [7:4] are never read"});
  m.waive(cfg, "UNUSED", "upper bits are reserved for the next version");
  m.check();
  const auto w = m.waivers();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].code, "UNUSED");
  EXPECT_EQ(w[0].target, "signal cfg_i");
  const std::string text = m.emit(golden_header());
  EXPECT_NE(text.find("//   UNUSED on signal cfg_i: upper bits are reserved for the next version"), std::string::npos);
  EXPECT_NE(text.find("  // Lint waiver (UNUSED): upper bits are reserved for the next version\n"
                      "  /* verilator lint_off UNUSED */\n"
                      "  input wire [7:0] cfg_i,\n"
                      "  /* verilator lint_on UNUSED */\n"),
            std::string::npos)
      << text;
  Design d(golden_header());
  build_waiver_demo(d);
  EXPECT_EQ(d.waivers().size(), 1u);
}

TEST_F(Base, OneDriverPerBit) {
  Expr y = m.output("y_o", 8);
  m.assign(y.slice(7, 4), a.slice(7, 4));
  m.assign(y.slice(4, 0), a.slice(4, 0));
  expect_error([&] { m.check(); }, {"bits [4] of 'y_o' have more than one driver"});
}

TEST_F(Base, AssignAndAlwaysCannotShareASignal) {
  Expr y = m.output("y_o", 8);
  m.assign(y.slice(3, 0), a.slice(3, 0));
  Block& b = m.always_comb();
  b.assign(y.slice(7, 4), a.slice(7, 4));
  tie_off();
  expect_error([&] { m.check(); }, {"'y_o' is driven both by an always block and by an assign"});
}

TEST_F(Base, CombBlocksMustAssignOnEveryPath) {
  Expr y = m.output("y_o", 8);
  Block& b = m.always_comb();
  b.if_(en).then_().assign(y, a);
  expect_error([&] { m.check(); }, {"'y_o'", "only on some paths", "latch"});
}

TEST_F(Base, EveryCaseHasADefault) {
  Expr y = m.output("y_o", 8);
  Block& b = m.always_comb();
  b.assign(y, 0);
  CaseStmt& c = b.case_(en);
  c.item(bit(true)).assign(y, a);
  tie_off();
  expect_error([&] { c.item(bit(true)); }, {"appears twice"});
  expect_error([&] { c.item(constant(2, 1)); }, {"differ in width"});
  expect_error([&] { m.check(); }, {"case (en_i) has no default branch"});
  c.default_();
  m.check();
}

TEST_F(Base, ResetAndClockedBranchesCoverTheSameFlops) {
  Expr y = m.output("y_o", 8);
  Expr a_q = m.signal("a_q", 8);
  Expr b_q = m.signal("b_q", 8);
  Always& ff = m.always_ff(clk, rst_n);
  ff.on_reset().assign(a_q, 0);
  ff.body().assign(a_q, a);
  ff.body().assign(b_q, a);
  m.assign(y, a_q ^ b_q);
  expect_error([&] { m.check(); }, {"flop 'b_q' bits [7:0]", "no reset value"});
}

TEST_F(Base, ResetIsNotData) {
  Expr y = m.output("y_o", 1);
  Expr en_q = m.signal("en_q", 1);
  m.always_ff(clk, rst_n).flop(en_q, en, 0);
  m.assign(y, en_q & rst_n);
  m.unused(a, "operand is not needed by this test module");
  expect_error([&] { m.check(); }, {"reset 'rst_ni'", "SYNCASYNCNET"});
}

TEST_F(Base, UnusedLocalparams) {
  m.assign(m.output("y_o", 8), a);
  m.localparam("Unneeded", 8, 1);
  tie_off();
  expect_error([&] { m.check(); }, {"localparam 'Unneeded' is never used"});
}

TEST_F(Base, UndrivenSignals) {
  Expr floating = m.signal("floating", 8);
  m.assign(m.output("y_o", 8), a ^ floating);
  tie_off();
  expect_error([&] { m.check(); }, {"signal 'floating' is never driven"});
}

TEST_F(Base, GenerateScopesAndIndexRanges) {
  Expr y = m.output("y_o", 8);
  GenerateFor& g = m.generate_for("g_bit", "i", 0, 8);
  Expr local = g.signal("local_bit", 1);
  g.assign(local, a[g.var()]);
  g.assign(y[g.var()], local & en);
  expect_error([&] { m.assign(y, zext(local, 8)); }, {"'local_bit' is declared inside a generate block"});
  expect_error([&] { m.generate_for("g_bit", "j", 0, 2); }, {"'g_bit' is used twice"});
  expect_error([&] { g.generate_for("g_inner", "i", 0, 2); }, {"genvar 'i' is already used"});
  expect_error([&] { m.generate_for("g_none", "k", 0, 0); }, {"runs no iterations"});
  tie_off();
  m.check();

  Module n("ranges");
  Expr b = n.input("b_i", 8);
  Expr z = n.output("z_o", 8);
  GenerateFor& h = n.generate_for("g_bit", "i", 0, 8);
  n.assign(z.slice(0, 0), b[0]);
  h.assign(z[h.var() + 1], b[h.var()]);  // reaches z[8] in the last iteration
  expect_error([&] { n.check(); }, {"(in g_bit[7])", "reaches bit 8"});
}

TEST_F(Base, GenerateIterationsMustDriveDistinctBits) {
  Expr y = m.output("y_o", 8);
  GenerateFor& g = m.generate_for("g_lane", "i", 0, 2);
  g.assign(y.slice(3, 0), a.part(g.var() * 4, 4));  // every iteration drives y_o[3:0]
  tie_off();
  expect_error([&] { m.check(); }, {"(in g_lane[1])", "bits [3:0] of 'y_o' have more than one driver"});
}

TEST_F(Base, IndexParamMustHoldEveryIndex) {
  GenerateFor& g = m.generate_for("g_lane", "i", 0, 5);
  expect_error([&] { g.index_param("LaneIndex", 2); }, {"index_param LaneIndex", "do not fit 2"});
}

TEST(VlogDesign, InstantiationCyclesAreRejected) {
  Design d(golden_header());
  Module& m = d.add_module("loop_back");
  Expr x = m.input("x_i", 1);
  Expr y = m.output("y_o", 1);
  const std::vector<PortInfo> ports = m.ports();
  m.instance("loop_back", ports, "u_self", {{"x_i", x}, {"y_o", y}});
  expect_error([&] { d.check(); }, {"cycle", "loop_back -> loop_back"});
}

TEST(VlogModules, SignalsOfAnotherModuleAreRejected) {
  Module m1("one");
  Module m2("two");
  Expr x = m1.input("x_i", 1);
  Expr y = m2.output("y_o", 1);
  expect_error([&] { m2.assign(y, x); }, {"module two", "'x_i' belongs to another module"});
}

}  // namespace
}  // namespace kaleido::vlog
