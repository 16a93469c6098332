// ops::Conv2dScratch: its slots never overlap, a larger request retires (not frees) the current allocation, and
// side() is one second scratch of the same lifetime whose memory overlaps none of the first's (so that ops
// recorded on it have no hazard with the main chain's through scratch memory), counted in bytesHeld().
#include <gtest/gtest.h>

#include "ops/conv2d_scratch.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

class Conv2dScratchTest : public test::VulkanTest {};

bool overlap(const Allocation& a, const Allocation& b) {
  return a.address() < b.address() + b.size() && b.address() < a.address() + a.size();
}

TEST_F(Conv2dScratchTest, SlotsAndTheSideScratchNeverOverlap) {
  ops::Conv2dScratch s(ctx(), "test scratch");
  const Allocation& primary = s.acquire(1 << 16);
  const Allocation& partials = s.acquire(1 << 16, ops::Conv2dScratch::Slot::Partials);
  EXPECT_FALSE(overlap(primary, partials));
  EXPECT_EQ(s.bytesHeld(), primary.size() + partials.size());
  ops::Conv2dScratch& side = s.side();
  EXPECT_EQ(&side, &s.side());  // one side scratch
  const Allocation& sidePrimary = side.acquire(1 << 16);
  const Allocation& sidePartials = side.acquire(1 << 16, ops::Conv2dScratch::Slot::Partials);
  for (const Allocation* a : {&primary, &partials})
    for (const Allocation* b : {&sidePrimary, &sidePartials}) EXPECT_FALSE(overlap(*a, *b));
  EXPECT_FALSE(overlap(sidePrimary, sidePartials));
  EXPECT_EQ(s.bytesHeld(), primary.size() + partials.size() + sidePrimary.size() + sidePartials.size());
  // A larger request replaces the slot's allocation; the old one stays held (recorded commands address it).
  const uint64_t before = s.bytesHeld();
  const VkDeviceAddress old = primary.address();
  const Allocation& bigger = s.acquire(1 << 20);
  EXPECT_NE(bigger.address(), old);
  EXPECT_EQ(s.bytesHeld(), before + bigger.size());
  EXPECT_EQ(s.acquire(100).address(), bigger.address());  // a smaller request reuses it
}

}  // namespace
}  // namespace sdgen
