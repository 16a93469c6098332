#pragma once
// Assigns intermediate tensors to offsets in one arena so that tensors whose lifetimes overlap never share
// bytes, and tensors that are never alive together do.
#include <cstdint>
#include <vector>

namespace sdgen::graph {

struct LiveTensor {
  uint64_t bytes = 0;
  int firstStep = 0, lastStep = 0;  // inclusive execution steps during which the tensor must exist
};

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // per tensor, aligned
  uint64_t peakBytes = 0;         // arena size
  uint64_t naiveBytes = 0;        // sum of all sizes (one buffer each)
};

// Greedy by decreasing size; each tensor goes to the lowest offset free of every placed tensor whose
// lifetime overlaps its own.
MemoryPlan planMemory(const std::vector<LiveTensor>& tensors, uint64_t alignment = 256);

}  // namespace sdgen::graph
