// Expression typing and text: widths, signedness, parentheses, constants,
// extension helpers, selects.
#include <gtest/gtest.h>

#include "expect_error.hpp"
#include "vlog/module.hpp"

namespace kaleido::vlog {
namespace {

using testing::expect_error;

struct Fixture : ::testing::Test {
  Module m{"expr_fixture"};
  Expr a = m.input("a_i", 8);
  Expr b = m.input("b_i", 8);
  Expr c = m.input("c_i", 9);
  Expr s = m.input("s_i", 8, Sign::Signed);
  Expr t = m.input("t_i", 8, Sign::Signed);
  Expr en = m.input("en_i", 1);
  Expr idx = m.input("idx_i", 3);
  Expr bus = m.input("bus_i", 16);
};

TEST_F(Fixture, ConstantsCarryTheirWidth) {
  EXPECT_EQ(constant(8, 0).str(), "8'd0");
  EXPECT_EQ(constant(1, 1).str(), "1'b1");
  EXPECT_EQ(constant(12, 0xabc, Radix::Hex).str(), "12'habc");
  EXPECT_EQ(constant(4, 5, Radix::Bin).str(), "4'b0101");
  EXPECT_EQ(sconstant(8, -5).str(), "-8'sd5");
  EXPECT_EQ(sconstant(8, 7).str(), "8'sd7");
  EXPECT_EQ(ones(4).str(), "{4{1'b1}}");
  EXPECT_EQ(zero(96).str(), "96'd0");
  expect_error([] { constant(4, 16); }, {"16", "4 bits"});
  expect_error([] { sconstant(8, 128); }, {"128", "8 bits"});
}

TEST_F(Fixture, IntOperandsTakeTheOtherSidesWidth) {
  EXPECT_EQ((a + 1).str(), "a_i + 8'd1");
  EXPECT_EQ((s - 1).str(), "s_i - 8'sd1");
  EXPECT_EQ((a == 255).str(), "a_i == 8'd255");
  expect_error([&] { (void)(a + 256); }, {"256", "a_i", "8-bit"});
  expect_error([&] { (void)(a - -1); }, {"-1", "a_i"});
}

TEST_F(Fixture, WidthAndSignRulesOfOperators) {
  Expr sum = a + b;
  EXPECT_EQ(sum.width(), 8);
  EXPECT_FALSE(sum.is_signed());
  EXPECT_EQ((a == b).width(), 1);
  EXPECT_EQ(reduce_xor(a).width(), 1);
  EXPECT_EQ(concat({a, c}).width(), 17);
  EXPECT_EQ(repl(3, a).width(), 24);
  EXPECT_EQ((s * t).width(), 8);
  EXPECT_TRUE((s * t).is_signed());
  EXPECT_EQ(mul_full(s, t).width(), 16);
  EXPECT_TRUE(mul_full(s, t).is_signed());
  expect_error([&] { (void)(a + c); }, {"'+'", "a_i", "8-bit", "c_i", "9-bit", "zext"});
  expect_error([&] { (void)(a + s); }, {"signedness", "as_signed"});
  expect_error([&] { (void)(a < c); }, {"'<'", "differ in width"});
  expect_error([&] { (void)(a && en); }, {"'&&'", "1 bit"});
  expect_error([&] { (void)!a; }, {"'!'", "1 bit"});
  expect_error([&] { mux(a, b, b); }, {"condition", "1 bit"});
  expect_error([&] { mux(en, a, c); }, {"branches", "width"});
  expect_error([&] { sra(a, 1); }, {">>>", "signed"});
  expect_error([&] { (void)(a << 8); }, {"shift amount 8"});
}

TEST_F(Fixture, ParenthesesOnlyForLeftChainsOfOneFamily) {
  EXPECT_EQ((a + b + a).str(), "a_i + b_i + a_i");
  EXPECT_EQ((a + (b + a)).str(), "a_i + (b_i + a_i)");
  EXPECT_EQ(((a & b) | a).str(), "(a_i & b_i) | a_i");
  EXPECT_EQ(((a == b) && en).str(), "(a_i == b_i) && en_i");
  EXPECT_EQ((~a & b).str(), "~a_i & b_i");
  EXPECT_EQ((-(a + b)).str(), "-(a_i + b_i)");
  EXPECT_EQ(mux(en, a, mux(en, b, a)).str(), "en_i ? a_i : (en_i ? b_i : a_i)");
  EXPECT_EQ(mux(a == b, a, b).str(), "(a_i == b_i) ? a_i : b_i");
  EXPECT_EQ(((a << 2) >> idx).str(), "(a_i << 2) >> idx_i");
}

TEST_F(Fixture, ExtensionHelpers) {
  EXPECT_EQ(zext(a, 9).str(), "{1'b0, a_i}");
  EXPECT_EQ(zext(a, 32).str(), "{24'd0, a_i}");
  EXPECT_EQ(sext(a, 32).str(), "{{24{a_i[7]}}, a_i}");
  EXPECT_EQ(sext(s, 9).str(), "$signed({s_i[7], s_i})");
  EXPECT_TRUE(sext(s, 32).is_signed());
  EXPECT_EQ(trunc(a, 4).str(), "a_i[3:0]");
  EXPECT_EQ(trunc(s, 4).str(), "$signed(s_i[3:0])");
  EXPECT_EQ(resize(s, 8).str(), "s_i");
  EXPECT_EQ(as_unsigned(s).str(), "$unsigned(s_i)");
  EXPECT_EQ(as_signed(as_unsigned(s)).str(), "s_i");
  EXPECT_EQ(mul_full(s, t).str(), "$signed({{8{s_i[7]}}, s_i}) * $signed({{8{t_i[7]}}, t_i})");
  EXPECT_EQ(sext(sconstant(4, -2), 8).str(), "-8'sd2");
  expect_error([&] { zext(c, 8); }, {"shrink", "trunc"});
  expect_error([&] { sext(a + b, 9); }, {"cannot select bits", "wire()"});
}

TEST_F(Fixture, SelectsFoldAndCheckIndexWidths) {
  EXPECT_EQ(bus.slice(15, 8)[3].str(), "bus_i[11]");
  EXPECT_EQ(bus.slice(15, 8).slice(3, 0).str(), "bus_i[11:8]");
  EXPECT_EQ(bus.slice(15, 0).str(), "bus_i");
  EXPECT_EQ(a[idx].str(), "a_i[idx_i]");
  EXPECT_EQ(bus.part(integer(4), 8).str(), "bus_i[11:4]");
  EXPECT_EQ(en[0].str(), "en_i");
  EXPECT_EQ(constant(8, 0xa5).slice(7, 4).str(), "4'd10");
  expect_error([&] { (void)a[8]; }, {"bit 8", "out of range"});
  expect_error([&] { (void)bus[idx]; }, {"exactly 4 bits"});
  expect_error([&] { (void)bus.part(idx, 4); }, {"exactly 4 bits"});
  expect_error([&] { (void)(a + b)[0]; }, {"cannot select bits"});
}

TEST_F(Fixture, SelectIsABalancedTreeOnTheIndexBits) {
  const Expr d = m.input("d_i", 8), none = zero(8);
  // Leaves pair on idx[0]; the missing fourth option and the upper half fold to the default.
  EXPECT_EQ(select(idx, {a, b, d}, none).str(),
            "idx_i[2] ? 8'd0 : (idx_i[1] ? (idx_i[0] ? 8'd0 : d_i) : (idx_i[0] ? b_i : a_i))");
  EXPECT_EQ(select(idx.slice(1, 0), {a, b, d, a}, none).str(),
            "idx_i[1] ? (idx_i[0] ? a_i : d_i) : (idx_i[0] ? b_i : a_i)");
  EXPECT_EQ(select(en, {a}, none).str(), "en_i ? 8'd0 : a_i");
  expect_error([&] { select(idx.slice(1, 0), {a, b, d, a, b}, none); }, {"cannot reach all 5 options"});
  expect_error([&] { select(idx, {a, c}, none); }, {"select option", "c_i"});
  expect_error([&] { select(s, {a}, none); }, {"select index", "unsigned"});
  EXPECT_EQ(select(idx, {}, none).str(), "8'd0");
}

TEST_F(Fixture, ElaborationIntegersStayOutOfHardware) {
  Expr r = integer(3);
  EXPECT_TRUE((r * 8 + 1).is_elab());
  EXPECT_EQ((integer(2) * 8 - 1).str(), "2 * 8 - 1");
  expect_error([&] { (void)(a + r); }, {"genvar/integer", "index or loop bound"});
}

TEST_F(Fixture, MemoryAddressesAreClog2Wide) {
  Memory mem = m.memory("mem", 8, 10);
  EXPECT_EQ(mem.addr_width(), 4);
  Expr addr = m.input("addr_i", 4);
  EXPECT_EQ(mem[addr].str(), "mem[addr_i]");
  EXPECT_EQ(mem[addr].width(), 8);
  expect_error([&] { (void)mem[idx]; }, {"memory 'mem'", "4-bit unsigned"});
}

TEST(VlogClog2, Values) {
  EXPECT_EQ(clog2(1), 1);
  EXPECT_EQ(clog2(2), 1);
  EXPECT_EQ(clog2(3), 2);
  EXPECT_EQ(clog2(8), 3);
  EXPECT_EQ(clog2(9), 4);
}

}  // namespace
}  // namespace kaleido::vlog
