// The launch geometry of the CUDA op kernels, checked on the host: grids cover every
// item within the block cap, and channel reductions split their units into non-empty
// splits whose number depends only on the shape.
#include "kernels/cuda/LaunchGeometry.h"

#include <gtest/gtest.h>

namespace tunescope::cuda {
namespace {

TEST(LaunchGeometry, GridCoversEveryItemUpToTheBlockCap) {
  EXPECT_EQ(grid_for(0).blocks, 1u);
  EXPECT_EQ(grid_for(1).blocks, 1u);
  EXPECT_EQ(grid_for(kBlockThreads).blocks, 1u);
  EXPECT_EQ(grid_for(kBlockThreads + 1).blocks, 2u);
  EXPECT_EQ(grid_for(kMaxBlocks * kBlockThreads).blocks, static_cast<unsigned>(kMaxBlocks));
  // Beyond the cap the grid-stride loops take the rest.
  EXPECT_EQ(grid_for(int64_t{1} << 40).blocks, static_cast<unsigned>(kMaxBlocks));
  EXPECT_EQ(grid_for(5).threads, static_cast<unsigned>(kBlockThreads));
}

TEST(LaunchGeometry, ChannelSplitsAreNonEmptyAndCoverEveryUnit) {
  for (int64_t units : {1, 2, 3, 7, 64, 65, 128, 1000, 512 * 32 * 32})
    for (int64_t unit_elements : {1, 9, 256, 1024, 100000}) {
      SCOPED_TRACE(::testing::Message() << units << " units of " << unit_elements);
      const ChannelSplit split = channel_split(units, unit_elements);
      EXPECT_GE(split.splits, 1);
      EXPECT_LE(split.splits, kMaxSplits);
      EXPECT_LE(split.splits, units);
      EXPECT_GE(split.per_split, 1);
      // Every unit in exactly one split; the last split is not empty.
      EXPECT_GE(split.splits * split.per_split, units);
      EXPECT_LT((split.splits - 1) * split.per_split, units);
    }
}

TEST(LaunchGeometry, SmallChannelsStayInOneSplitLargeOnesSpread) {
  EXPECT_EQ(channel_split(7, 17 * 19).splits, 1);     // 2261 elements per channel
  EXPECT_EQ(channel_split(512, 32 * 32).splits, 64);  // a resnet18-small batch: capped
  EXPECT_EQ(channel_split(4 * 8192, 1).splits, 4);    // NHWC rows: one split per 8192
  EXPECT_EQ(channel_split(4 * 8192, 1).per_split, 8192);
}

}  // namespace
}  // namespace tunescope::cuda
