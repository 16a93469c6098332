#include "graph/memory_planner.h"

#include <algorithm>
#include <numeric>

namespace sdgen::graph {

MemoryPlan planMemory(const std::vector<LiveTensor>& tensors, uint64_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(tensors.size(), 0);
  auto roundUp = [&](uint64_t x) { return (x + alignment - 1) / alignment * alignment; };
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return tensors[a].bytes > tensors[b].bytes; });

  std::vector<size_t> placed;
  for (size_t i : order) {
    const LiveTensor& t = tensors[i];
    plan.naiveBytes += roundUp(t.bytes);
    // Intervals already taken by tensors alive at the same time, sorted by offset.
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (size_t j : placed) {
      const LiveTensor& o = tensors[j];
      if (o.firstStep <= t.lastStep && t.firstStep <= o.lastStep)
        busy.push_back({plan.offsets[j], plan.offsets[j] + roundUp(o.bytes)});
    }
    std::sort(busy.begin(), busy.end());
    uint64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + roundUp(t.bytes) <= begin) break;
      offset = std::max(offset, end);
    }
    plan.offsets[i] = offset;
    plan.peakBytes = std::max(plan.peakBytes, offset + roundUp(t.bytes));
    placed.push_back(i);
  }
  return plan;
}

}  // namespace sdgen::graph
