#pragma once
// Derives pipeline barriers from the memory ranges each command declares it reads and writes.
// A barrier is emitted only when a new command touches memory that a command since the last barrier
// wrote (read-after-write, write-after-write) or read (write-after-read); independent commands run unsynchronized.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace sdgen {

struct MemRange {
  VkDeviceAddress address = 0;
  uint64_t size = 0;
  bool overlaps(const MemRange& o) const { return address < o.address + o.size && o.address < address + size; }
};

struct BarrierSpec {
  VkPipelineStageFlags2 srcStages = 0, dstStages = 0;
  VkAccessFlags2 srcAccess = 0, dstAccess = 0;
};

class HazardTracker {
 public:
  // Registers a command; returns the barrier that must precede it, if any.
  std::optional<BarrierSpec> access(std::span<const MemRange> reads, std::span<const MemRange> writes,
                                    VkPipelineStageFlags2 stage);
  // Barrier making every pending write visible to the given stage/access (e.g. host reads at the end).
  std::optional<BarrierSpec> flush(VkPipelineStageFlags2 dstStage, VkAccessFlags2 dstAccess);
  void reset() { pending_.clear(); }
  size_t barriersEmitted() const { return barriers_; }

 private:
  struct Pending {
    MemRange range;
    bool write;
    VkPipelineStageFlags2 stage;
  };
  std::vector<Pending> pending_;
  size_t barriers_ = 0;
};

}  // namespace sdgen
