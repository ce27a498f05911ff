// The report formatting in one place: the Markdown table writer and the two
// number styles. Expected strings are written out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "common/error.hpp"
#include "common/format.hpp"
#include "common/markdown.hpp"

namespace kaleido {
namespace {

TEST(MarkdownTable, HeaderSeparatorWithAlignmentAndRows) {
  using markdown::Align;
  markdown::Table t({"name", {"value", Align::Right}, {"note", Align::Left}, {"mid", Align::Center}});
  t.add_row({"a", "1", "x", "y"});
  t.add_row({"b", "22", "", "z"});
  EXPECT_EQ(t.render(),
            "| name | value | note | mid |\n"
            "|---|---:|:---|:---:|\n"
            "| a | 1 | x | y |\n"
            "| b | 22 | | z |\n");
}

TEST(MarkdownTable, EmptyTableHasOnlyTheHeaderAndARowStaysOneLine) {
  markdown::Table t({"a", "b"});
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.render(), "| a | b |\n|---|---|\n");
  t.add_row({"two\nlines", "c"});
  EXPECT_FALSE(t.empty());
  EXPECT_EQ(t.render(), "| a | b |\n|---|---|\n| two lines | c |\n");
}

TEST(MarkdownTable, ARowWithTheWrongNumberOfCellsIsABug) {
  markdown::Table t({"a", "b"});
  EXPECT_THROW(t.add_row({"only one"}), InternalError);
  EXPECT_THROW(t.add_row({"1", "2", "3"}), InternalError);
}

TEST(Format, SignificantDigitsAsPrintfG) {
  EXPECT_EQ(sig(3.14159, 4), "3.142");
  EXPECT_EQ(sig(1234567.0, 4), "1.235e+06");
  EXPECT_EQ(sig(0.000012345, 3), "1.23e-05");
  EXPECT_EQ(sig(2.5, 6), "2.5");
  EXPECT_EQ(sig(100.0, 6), "100");
  EXPECT_EQ(sig(-0.5, 1), "-0.5");
}

TEST(Format, FixedDecimalsAsPrintfF) {
  EXPECT_EQ(fixed(3.14159, 2), "3.14");
  EXPECT_EQ(fixed(2.0, 1), "2.0");
  EXPECT_EQ(fixed(-1.25, 0), "-1");
  EXPECT_EQ(fixed(99.95, 0), "100");
}

TEST(Format, NonFiniteValuesAreNamed) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(fixed(inf, 2), "inf");
  EXPECT_EQ(fixed(-inf, 2), "-inf");
  EXPECT_EQ(fixed(nan, 2), "nan");
  EXPECT_EQ(fixed(-nan, 2), "nan");  // the sign of a NaN means nothing
  EXPECT_EQ(sig(-nan, 4), "nan");
  EXPECT_EQ(sig(inf, 4), "inf");
}

}  // namespace
}  // namespace kaleido
