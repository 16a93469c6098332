#include "engine/command_sequence.h"
#include "engine/memory.h"

#include <cstring>
#include <set>

#include "tests/test_support.h"

namespace sdgen {
namespace {

class MemoryTest : public test::VulkanTest {};

TEST_F(MemoryTest, ManyTensorsShareOneBlockAndRespectAlignment) {
  MemoryPool& pool = ctx().memory().pool(MemoryKind::Device);
  size_t blocksBefore = pool.stats().blocks;
  std::vector<Allocation> allocs;
  for (int i = 0; i < 100; ++i) allocs.push_back(pool.allocate(1000 + 37 * i, "tensor", 256));
  std::set<VkBuffer> buffers;
  for (size_t i = 0; i < allocs.size(); ++i) {
    EXPECT_EQ(allocs[i].address() % 256, 0u);
    EXPECT_GE(allocs[i].size(), 1000u + 37 * i);
    buffers.insert(allocs[i].buffer());
    for (size_t j = 0; j < i; ++j)  // no two allocations overlap
      EXPECT_FALSE(range(allocs[i]).overlaps(range(allocs[j])));
  }
  EXPECT_LE(pool.stats().blocks - blocksBefore, 1u);
  EXPECT_LE(buffers.size(), 2u);
}

TEST_F(MemoryTest, FreedRangesAreReusedAndCoalesced) {
  MemoryPool& pool = ctx().memory().pool(MemoryKind::Device);
  uint64_t inUse = pool.stats().bytesInUse;
  VkDeviceAddress first;
  {
    Allocation a = pool.allocate(1 << 20, "a");
    Allocation b = pool.allocate(1 << 20, "b");
    first = a.address();
    EXPECT_EQ(pool.stats().bytesInUse, inUse + (2u << 20));
  }
  EXPECT_EQ(pool.stats().bytesInUse, inUse);
  // After both are freed and coalesced, a 2 MiB request fits where the first one was.
  Allocation c = pool.allocate(2 << 20, "c");
  EXPECT_EQ(c.address(), first);
}

TEST_F(MemoryTest, PeakFollowsTheLargestUseSinceTheLastReset) {
  MemoryPool& pool = ctx().memory().pool(MemoryKind::Device);
  const uint64_t base = pool.stats().bytesInUse;
  { Allocation big = pool.allocate(3 << 20, "big"); }
  EXPECT_GE(pool.stats().peakBytesInUse, base + (3u << 20));
  pool.resetPeak();
  EXPECT_EQ(pool.stats().peakBytesInUse, base);
  Allocation a = pool.allocate(1 << 20, "a");
  { Allocation b = pool.allocate(1 << 20, "b"); }
  EXPECT_EQ(pool.stats().peakBytesInUse, base + (2u << 20));
  EXPECT_EQ(pool.stats().bytesInUse, base + (1u << 20));
}

TEST_F(MemoryTest, LargeRequestsGetADedicatedBlockThatIsReleased) {
  MemoryPool& pool = ctx().memory().pool(MemoryKind::Device);
  size_t blocks = pool.stats().blocks;
  {
    Allocation big = pool.allocate(300ull << 20, "big weights");
    EXPECT_EQ(pool.stats().blocks, blocks + 1);
  }
  EXPECT_EQ(pool.stats().blocks, blocks);
}

TEST_F(MemoryTest, OutOfMemoryNamesTheRequestAndBudget) {
  try {
    Allocation a = ctx().allocate(1ull << 50, "the impossible tensor");
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("the impossible tensor"), std::string::npos) << msg;
    EXPECT_NE(msg.find("budget"), std::string::npos) << msg;
    EXPECT_NE(msg.find("MiB"), std::string::npos) << msg;
  }
}

TEST_F(MemoryTest, HostKindsAreMappedAndRoundTrip) {
  std::vector<float> values = test::randomFloats(5000, 7);
  Allocation dev = test::uploadFloats(ctx(), values, DType::F32);
  EXPECT_EQ(test::downloadFloats(ctx(), dev, values.size(), DType::F32), values);
  Allocation staging = ctx().memory().allocate(MemoryKind::Staging, 64, "staging");
  EXPECT_NE(staging.mapped(), nullptr);
  // Device memory is mapped exactly where the host sees it coherently: always on a CPU device (lavapipe; a GPU's
  // device memory type is chosen not host visible where it has one); what the mapping shows is what was uploaded.
  const bool mapped = ctx().memory().pool(MemoryKind::Device).hostMapped();
  EXPECT_EQ(dev.mapped() != nullptr, mapped);
  if (ctx().info().type == "cpu") EXPECT_TRUE(mapped);
  if (mapped) EXPECT_EQ(std::memcmp(dev.mapped(), values.data(), values.size() * 4), 0);
}

TEST_F(MemoryTest, UploadsLargerThanTheStagingChunkStream) {
  std::vector<float> values = test::randomFloats((40u << 20) / 4, 11);  // 40 MiB > 32 MiB staging chunk
  Allocation dev = test::uploadFloats(ctx(), values, DType::F32);
  EXPECT_EQ(test::downloadFloats(ctx(), dev, values.size(), DType::F32), values);
}

}  // namespace
}  // namespace sdgen
