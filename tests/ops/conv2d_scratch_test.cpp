// ops::Conv2dScratch: its slots never overlap, a larger request retires (not frees) the current allocation, and
// side() is one second scratch of the same lifetime whose memory overlaps none of the first's (so that ops
// recorded on it have no hazard with the main chain's through scratch memory), counted in bytesHeld(). A
// recording pass frees what it outgrew of its own allocations and says so, and recordWithinPass records again
// then, so the scratch ends at the largest need instead of the sum of its growth steps.
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

TEST_F(Conv2dScratchTest, ARecordingPassFreesItsOwnOutgrownAllocations) {
  using Slot = ops::Conv2dScratch::Slot;
  ops::Conv2dScratch s(ctx(), "test scratch");
  const uint64_t before = s.bytesHeld();
  const uint64_t pool = ctx().memory().pool(MemoryKind::Device).stats().bytesInUse;
  {
    ops::Conv2dScratch::RecordingPass pass(s);
    s.acquire(1 << 16);
    s.acquire(1 << 18, Slot::Partials);
    EXPECT_FALSE(pass.outgrown());  // first allocations of each slot: nothing outgrown yet
    s.acquire(1 << 20);             // outgrows the pass's own 64 KiB: freed, not retired
    EXPECT_TRUE(pass.outgrown());
    s.side().acquire(1 << 17);  // made during the pass: the side scratch is in it too
    s.side().acquire(1 << 19);
    s.acquire(1 << 18, Slot::Partials);  // fits
  }
  EXPECT_EQ(before, 0u);
  // Held: the largest request of each slot, nothing of the steps in between.
  EXPECT_EQ(s.bytesHeld(), uint64_t(1 << 20) + (1 << 18) + (1 << 19));
  EXPECT_EQ(ctx().memory().pool(MemoryKind::Device).stats().bytesInUse - pool,
            uint64_t(1 << 20) + (1 << 18) + (1 << 19));
  // After the pass, what it made is addressed by what was kept: a larger request retires it again.
  {
    ops::Conv2dScratch::RecordingPass pass(s);
    s.acquire(1 << 21);
    EXPECT_FALSE(pass.outgrown());
    EXPECT_THROW(ops::Conv2dScratch::RecordingPass nested(s), Error);  // passes do not nest
  }
  EXPECT_EQ(s.bytesHeld(), uint64_t(1 << 21) + (1 << 20) + (1 << 18) + (1 << 19));
  // outside any pass a larger request retires, as before
  s.side().acquire(1 << 20);
  EXPECT_EQ(s.bytesHeld(), uint64_t(1 << 21) + (1 << 20) + (1 << 18) + (1 << 19) + (1 << 20));
}

TEST_F(Conv2dScratchTest, RecordWithinPassRecordsAgainOnlyWhereThePassOutgrewItsScratch) {
  ops::Conv2dScratch s(ctx(), "test scratch");
  int calls = 0;
  std::vector<VkDeviceAddress> addresses;
  // A "recording" that grows the scratch level by level, as the VAE decoder's convs do.
  auto record = [&] {
    ++calls;
    std::vector<VkDeviceAddress> seen;
    for (uint64_t bytes : {1u << 16, 1u << 18, 1u << 20}) seen.push_back(s.acquire(bytes).address());
    return seen;
  };
  addresses = ops::recordWithinPass(s, record);
  EXPECT_EQ(calls, 2);  // outgrown: recorded again, on the one allocation of the largest size
  EXPECT_EQ(s.bytesHeld(), uint64_t(1 << 20));
  EXPECT_EQ(addresses[0], addresses[2]);
  EXPECT_EQ(addresses[1], addresses[2]);
  calls = 0;
  ops::recordWithinPass(s, record);
  EXPECT_EQ(calls, 1);  // everything fits: one recording
  EXPECT_EQ(s.bytesHeld(), uint64_t(1 << 20));
  // The counters grow the same way (zeroed when made).
  calls = 0;
  ops::recordWithinPass(s, [&] {
    ++calls;
    s.counters(1000);
    return s.counters(100000).address();
  });
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(s.bytesHeld(), uint64_t(1 << 20) + 400000);
}

}  // namespace
}  // namespace sdgen
