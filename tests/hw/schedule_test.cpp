// The lane-count rule of docs/hardware.md ("Detector lanes sized by the schedule"), on the
// figures the document quotes for K = 128 (16 groups of 8 channels).
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "hw/schedule.hpp"

namespace kaleido::hw {
namespace {

TEST(LanesToKeepUp, RoundsFitInTheFirstMTilesPasses) {
  const HwConfig a8 = default_config_8x8(), a16 = default_config_16x16();  // SEGS 1 and 2
  ASSERT_EQ(a8.segs(), 1);
  ASSERT_EQ(a16.segs(), 2);
  // 8x8: 16 passes of (1 - r) N per m-tile. r = 0.5: 8 passes' worth, so 2 lanes (8 rounds).
  EXPECT_EQ(lanes_to_keep_up(a8, 16, 0.5), 2);
  // r = 0.861 (the synthetic workload's "0.85"): 2.2 passes' worth, so 2 rounds of 8 lanes; 7 lanes
  // would take 3 rounds. The simulation agrees: 8 lanes starve 884 cycles, as 16 do; 4 starve 2,230.
  EXPECT_EQ(lanes_to_keep_up(a8, 16, 0.861), 8);
  // r = 0.75 is where the default 4 * SEGS lanes stop keeping up.
  EXPECT_EQ(lanes_to_keep_up(a8, 16, 0.75), 4);
  EXPECT_EQ(lanes_to_keep_up(a8, 16, 0.76), 6);  // 3.84 passes: 3 rounds; 5 lanes would take 4
  // r = 0.952: one round of N is longer than the passes (0.77 N): no lane count keeps up.
  EXPECT_EQ(lanes_to_keep_up(a8, 16, 0.952), 0);
  // 16x16: 8 passes per m-tile; r = 0.85 wants SEGS / (1 - r) = 13.3, that is all 16.
  EXPECT_EQ(lanes_to_keep_up(a16, 16, 0.85), 16);
  EXPECT_EQ(lanes_to_keep_up(a16, 16, 0.5), 4);
  // No reuse: every pass is N long, one lane per k-tile's worth of groups suffices.
  EXPECT_EQ(lanes_to_keep_up(a8, 16, 0.0), 1);
  EXPECT_THROW(lanes_to_keep_up(a8, 0, 0.5), InternalError);
  EXPECT_THROW(lanes_to_keep_up(a8, 16, 1.5), InternalError);
}

// The gather-width rule of docs/hardware.md ("Cycle count"), on the figures it quotes for K = 128:
// 8x8 (KT = 16) needs GATHER_W 2 above r = 0.9375, 16x16 (KT = 8) 2 above r = 0.875 and 3 at 0.95.
TEST(GatherWToKeepUp, BeatsKeepUpWithTheMTilesPasses) {
  const HwConfig a8 = default_config_8x8(), a16 = default_config_16x16();
  EXPECT_EQ(gather_w_to_keep_up(a8, 128, 0.5), 1);
  EXPECT_EQ(gather_w_to_keep_up(a8, 128, 0.9375), 1);  // 16 x 0.0625 = 1 pass's worth of N
  EXPECT_EQ(gather_w_to_keep_up(a8, 128, 0.95), 2);
  EXPECT_EQ(gather_w_to_keep_up(a16, 128, 0.861), 1);  // the synthetic "0.85": no bank conflict
  EXPECT_EQ(gather_w_to_keep_up(a16, 128, 0.875), 1);
  EXPECT_EQ(gather_w_to_keep_up(a16, 128, 0.9), 2);
  EXPECT_EQ(gather_w_to_keep_up(a16, 128, 0.952), 3);
  // K = 32 (the clip rows): KT = 2 at 16x16, so r = 0.52 already wants 2.
  EXPECT_EQ(gather_w_to_keep_up(a16, 32, 0.521), 2);
  EXPECT_EQ(gather_w_to_keep_up(a16, 128, 0.99), 0);  // 12.5 tokens a cycle: wider than built
  EXPECT_EQ(gather_w_to_keep_up(a8, 128, 1.0), 0);
  EXPECT_THROW(gather_w_to_keep_up(a8, 0, 0.5), InternalError);
  EXPECT_THROW(gather_w_to_keep_up(a8, 128, -0.1), InternalError);
}

}  // namespace
}  // namespace kaleido::hw
