#include <gtest/gtest.h>

#include <set>

#include "golden/scan.hpp"

namespace kaleido {
namespace {

TEST(Scan, VisitsEveryTokenOnceAndReferencesComeFirstInTheSameTile) {
  for (int th = 0; th <= 5; ++th)
    for (int tw = 0; tw <= 7; ++tw) {
      const Grid g{3, 5, 7};
      const ScanOrder s(g, th, tw);
      std::set<int32_t> seen;
      for (int64_t p = 0; p < s.size(); ++p) {
        const int32_t tok = s.token_at(p);
        EXPECT_TRUE(seen.insert(tok).second);
        EXPECT_EQ(s.pos_of(tok), p);
      }
      EXPECT_EQ(static_cast<int64_t>(seen.size()), g.tokens());
      const int eh = th ? th : g.h, ew = tw ? tw : g.w;
      for (int32_t tok = 0; tok < g.tokens(); ++tok) {
        const TokenCoord c = s.coord(tok);
        for (int a = 0; a < 3; ++a) {
          const int32_t r = s.reference(tok, static_cast<Axis>(a));
          if (r < 0) continue;
          const TokenCoord rc = s.coord(r);
          EXPECT_LT(s.pos_of(r), s.pos_of(tok));
          EXPECT_EQ(rc.h / eh, c.h / eh);  // same tile
          EXPECT_EQ(rc.w / ew, c.w / ew);
        }
      }
    }
}

TEST(Scan, RequiredWindowDepthIsTheTileAreaWhenThereAreSeveralFrames) {
  EXPECT_EQ(ScanOrder(Grid{4, 8, 8}, 0, 0).required_window_depth(), 64);
  EXPECT_EQ(ScanOrder(Grid{4, 8, 8}, 4, 4).required_window_depth(), 16);
  EXPECT_EQ(ScanOrder(Grid{4, 8, 8}, 3, 3).required_window_depth(), 9);
  EXPECT_EQ(ScanOrder(Grid{1, 8, 8}, 0, 0).required_window_depth(), 8);  // one frame: the h reference
  EXPECT_EQ(ScanOrder(Grid{1, 1, 8}, 0, 0).required_window_depth(), 1);
  EXPECT_EQ(ScanOrder(Grid{1, 1, 1}, 0, 0).required_window_depth(), 0);
  EXPECT_EQ(ScanOrder(Grid{21, 30, 52}, 0, 0).required_window_depth(), 30 * 52);
}

TEST(Scan, RasterOrderWithoutTiling) {
  const ScanOrder s(Grid{2, 2, 3}, 0, 0);
  for (int64_t p = 0; p < s.size(); ++p) EXPECT_EQ(s.token_at(p), p);
  // Tiles of 1x2: tile (0,0) covers w 0..1 over both frames first.
  const ScanOrder t(Grid{2, 2, 3}, 1, 2);
  const int32_t expect[] = {0, 1, 6, 7, 2, 8, 3, 4, 9, 10, 5, 11};
  for (int64_t p = 0; p < t.size(); ++p) EXPECT_EQ(t.token_at(p), expect[p]) << p;
}

}  // namespace
}  // namespace kaleido
