#include "engine/command_sequence.h"
#include "engine/compile_log.h"
#include "engine/memory.h"
#include "engine/memory_peak_log.h"

#include <cstring>
#include <set>
#include <thread>

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

// SDGEN_MEMORY_PEAK_LOG's summary: what was live at the largest recorded peak, by kind (the name's last
// parentheses) and by name; a release before the peak is not in it, one after the peak still is.
TEST(MemoryPeakLogTest, ReportsWhatWasLiveAtThePeak) {
  MemoryPeakLog log;
  EXPECT_EQ(log.report("device"), "");
  const int block = 0;
  const uint64_t mib = 1 << 20;
  uint64_t inUse = 0;
  auto alloc = [&](uint64_t offset, const std::string& name, uint64_t size) {
    inUse += size;
    log.allocated(&block, offset, name, size, inUse);
  };
  alloc(0, "conv1.weight (gemm layout)", 10 * mib);
  alloc(1, "scratch early", 30 * mib);
  log.released(&block, 1);
  inUse -= 30 * mib;
  alloc(2, "conv2.weight (gemm layout)", 12 * mib);
  alloc(3, "conv2.weight (winograd U)", 40 * mib);  // the peak: 62 MiB
  log.released(&block, 3);
  inUse -= 40 * mib;
  alloc(4, "late", 2 * mib);  // below the peak: not recorded
  const std::string r = log.report("device");
  EXPECT_NE(r.find("device pool: 62.0 MiB in use"), std::string::npos) << r;
  EXPECT_NE(r.find("kind      40.0 MiB  winograd U"), std::string::npos) << r;
  EXPECT_NE(r.find("kind      22.0 MiB  gemm layout"), std::string::npos) << r;
  EXPECT_NE(r.find("name      40.0 MiB  conv2.weight (winograd U)"), std::string::npos) << r;
  EXPECT_EQ(r.find("scratch early"), std::string::npos) << r;
  EXPECT_EQ(r.find("late"), std::string::npos) << r;
  EXPECT_LT(r.find("winograd U"), r.find("gemm layout")) << "largest first\n" << r;
}

// SDGEN_COMPILE_LOG's summary: the totals, counts by the name's first word, every kernel slowest first, long
// names cut (a label may quote a generated name).
TEST(CompileLogTest, ReportsTotalsAndTheSlowestFirst) {
  CompileLog log;
  log.add("conv2d coop 128x128", 400, 100, 250, 50);
  log.add("text layer 0 attention", 2000, 150);
  log.add("conv2d winograd input", 300, 20);
  log.add(std::string(500, 'x'), 1, 1);
  const std::string r = log.report();
  EXPECT_NE(r.find("4 kernels, Slang 2.7 s (making sessions 0.2 s, modules 0.1 s), pipelines 0.3 s"),
            std::string::npos) << r;
  EXPECT_NE(r.find("slang   400.0 ms (session  250.0, modules   50.0)  pipeline   100.0 ms"), std::string::npos) << r;
  EXPECT_NE(r.find("2 kernels      0.8 s  conv2d"), std::string::npos) << r;
  EXPECT_LT(r.find("text layer 0 attention"), r.find("conv2d coop")) << r;
  EXPECT_LT(r.find("conv2d coop"), r.find("conv2d winograd")) << r;
  EXPECT_EQ(r.find(std::string(161, 'x')), std::string::npos) << "bounded names";
  EXPECT_NE(r.find(std::string(160, 'x')), std::string::npos);
  // Completion order, and the first compile this log saw on a thread (this one; another thread's first too).
  EXPECT_NE(r.find("#1    first  conv2d coop 128x128"), std::string::npos) << r;
  EXPECT_NE(r.find("#2           text layer 0 attention"), std::string::npos) << r;
  std::thread([&] { log.add("on another thread", 1, 1); }).join();
  EXPECT_NE(log.report().find("#5    first  on another thread"), std::string::npos) << log.report();
}

}  // namespace
}  // namespace sdgen
