// The Slurm helpers that need no cluster (the cluster itself: tests/slurm).
#include <gtest/gtest.h>

#include "common/slurm.hpp"

namespace kaleido::slurm {
namespace {

TEST(Slurm, ArraySpecMergesRangesInOrder) {
  EXPECT_EQ(array_spec({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(array_spec({9, 0, 2, 1, 7, 10}), "0-2,7,9-10");
  EXPECT_EQ(array_spec({5}), "5");
  EXPECT_EQ(array_spec({4, 4, 6}), "4,6");
}

TEST(Slurm, QueueStateSaysWhatIsPendingAndRunning) {
  QueueState q;
  q.pending = 3;
  q.running = 2;
  EXPECT_EQ(q.in_queue(), 5);
  EXPECT_EQ(q.text(), "3 pending, 2 running");
  q.other = 1;
  EXPECT_EQ(q.text(), "3 pending, 2 running, 1 other");
}

}  // namespace
}  // namespace kaleido::slurm
