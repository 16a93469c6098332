// The residency probe of bench/residency_probe_bench (shaders/linear/residency_probe.slang) runs and stores, for
// every workgroup, where its walk of the random cycle ends (the host's walk) — for several shared-memory sizes and
// workgroup sizes, so a kernel that skipped steps, mixed up workgroups or lost its shared words fails.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "bench/residency_probe.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

TEST(ResidencyProbe, CycleVisitsEveryEntryOnce) {
  const std::vector<uint32_t> next = bench::randomCycle(1000, 3);
  std::set<uint32_t> seen;
  uint32_t i = 0;
  for (int s = 0; s < 1000; ++s) {
    seen.insert(i);
    i = next[i];
  }
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_EQ(i, 0u);  // back at the start after exactly n steps
}

class ResidencyProbeTest : public test::VulkanTest {};

TEST_F(ResidencyProbeTest, EveryWorkgroupStoresTheEndOfItsWalk) {
  const uint32_t n = 4099, groups = 37;
  const int steps = 53;
  const std::vector<uint32_t> next = bench::randomCycle(n, 11);
  Allocation chain = ctx().allocate(uint64_t(n) * 4, "probe chain");
  ctx().upload(chain, 0, std::span(reinterpret_cast<const uint8_t*>(next.data()), next.size() * 4));
  Allocation out = ctx().allocate(uint64_t(groups) * 4, "probe out");
  for (auto [threads, bytes] : {std::pair{32, 16}, std::pair{128, 4096}, std::pair{256, 16384}}) {
    SCOPED_TRACE(std::to_string(threads) + " invocations, " + std::to_string(bytes) + " bytes");
    test::poison(ctx(), out);
    auto seq = bench::recordResidencyProbe(ctx(), threads, bytes / 16, groups, steps, chain, n, out);
    seq->run();
    std::vector<uint32_t> got(groups);
    ctx().download(out, 0, std::span(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4));
    for (uint32_t g = 0; g < groups; ++g) EXPECT_EQ(got[g], bench::chainEnd(next, g, steps)) << "workgroup " << g;
  }
}

}  // namespace
}  // namespace sdgen
