#include "engine/hazard_tracker.h"

#include <gtest/gtest.h>

namespace sdgen {
namespace {

constexpr auto kCompute = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
constexpr auto kTransfer = VK_PIPELINE_STAGE_2_TRANSFER_BIT;

TEST(HazardTracker, IndependentCommandsNeedNoBarrier) {
  HazardTracker t;
  MemRange a{0x1000, 256}, b{0x2000, 256}, c{0x3000, 256}, d{0x4000, 256};
  EXPECT_FALSE(t.access({&a, 1}, {&b, 1}, kCompute));
  EXPECT_FALSE(t.access({&c, 1}, {&d, 1}, kCompute));
  EXPECT_FALSE(t.access({&a, 1}, {}, kCompute));  // read-after-read is no hazard
  EXPECT_EQ(t.barriersEmitted(), 0u);
}

TEST(HazardTracker, ReadAfterWriteNeedsBarrier) {
  HazardTracker t;
  MemRange a{0x1000, 256}, b{0x2000, 256}, c{0x3000, 256};
  EXPECT_FALSE(t.access({&a, 1}, {&b, 1}, kCompute));
  auto bar = t.access({&b, 1}, {&c, 1}, kCompute);
  ASSERT_TRUE(bar);
  EXPECT_EQ(bar->srcStages, kCompute);
  EXPECT_TRUE(bar->srcAccess & VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
  EXPECT_TRUE(bar->dstAccess & VK_ACCESS_2_SHADER_STORAGE_READ_BIT);
}

TEST(HazardTracker, PartialOverlapCounts) {
  HazardTracker t;
  MemRange w{0x1000, 256}, r{0x10ff, 4}, next{0x1100, 16};
  EXPECT_FALSE(t.access({}, {&w, 1}, kCompute));
  EXPECT_FALSE(t.access({&next, 1}, {}, kCompute));  // adjacent, not overlapping
  EXPECT_TRUE(t.access({&r, 1}, {}, kCompute));
}

TEST(HazardTracker, WriteAfterReadAndWriteAfterWrite) {
  HazardTracker t;
  MemRange a{0x1000, 64}, b{0x2000, 64};
  EXPECT_FALSE(t.access({&a, 1}, {}, kCompute));
  EXPECT_TRUE(t.access({}, {&a, 1}, kCompute));  // WAR
  EXPECT_TRUE(t.access({}, {&a, 1}, kCompute));  // WAW
  EXPECT_FALSE(t.access({}, {&b, 1}, kCompute));
}

TEST(HazardTracker, BarrierClearsHistoryAndCarriesStages) {
  HazardTracker t;
  MemRange a{0x1000, 64}, b{0x2000, 64}, c{0x3000, 64};
  EXPECT_FALSE(t.access({}, {&a, 1}, kTransfer));
  auto bar = t.access({&a, 1}, {&b, 1}, kCompute);
  ASSERT_TRUE(bar);
  EXPECT_EQ(bar->srcStages, kTransfer);
  EXPECT_TRUE(bar->srcAccess & VK_ACCESS_2_TRANSFER_WRITE_BIT);
  // a was written before the barrier: reading it again needs nothing new.
  EXPECT_FALSE(t.access({&a, 1}, {&c, 1}, kCompute));
  auto flush = t.flush(VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
  ASSERT_TRUE(flush);
  EXPECT_EQ(flush->srcStages, kCompute);
  EXPECT_FALSE(t.flush(VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT));
}

}  // namespace
}  // namespace sdgen
