#include "engine/hazard_tracker.h"

namespace sdgen {

static VkAccessFlags2 readAccess(VkPipelineStageFlags2 stage) {
  if (stage == VK_PIPELINE_STAGE_2_TRANSFER_BIT) return VK_ACCESS_2_TRANSFER_READ_BIT;
  if (stage == VK_PIPELINE_STAGE_2_HOST_BIT) return VK_ACCESS_2_HOST_READ_BIT;
  return VK_ACCESS_2_SHADER_STORAGE_READ_BIT;
}

static VkAccessFlags2 writeAccess(VkPipelineStageFlags2 stage) {
  if (stage == VK_PIPELINE_STAGE_2_TRANSFER_BIT) return VK_ACCESS_2_TRANSFER_WRITE_BIT;
  if (stage == VK_PIPELINE_STAGE_2_HOST_BIT) return VK_ACCESS_2_HOST_WRITE_BIT;
  return VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;
}

std::optional<BarrierSpec> HazardTracker::access(std::span<const MemRange> reads, std::span<const MemRange> writes,
                                                 VkPipelineStageFlags2 stage) {
  bool hazard = false;
  for (const auto& p : pending_) {
    for (const auto& r : reads)
      if (p.write && p.range.overlaps(r)) hazard = true;
    for (const auto& w : writes)
      if (p.range.overlaps(w)) hazard = true;
    if (hazard) break;
  }
  std::optional<BarrierSpec> barrier;
  if (hazard) {
    BarrierSpec b;
    for (const auto& p : pending_) {
      b.srcStages |= p.stage;
      if (p.write) b.srcAccess |= writeAccess(p.stage);
    }
    b.dstStages = stage;
    b.dstAccess = readAccess(stage) | writeAccess(stage);
    barrier = b;
    barriers_++;
    pending_.clear();  // a global barrier orders everything before it
  }
  for (const auto& r : reads) pending_.push_back({r, false, stage});
  for (const auto& w : writes) pending_.push_back({w, true, stage});
  return barrier;
}

std::optional<BarrierSpec> HazardTracker::flush(VkPipelineStageFlags2 dstStage, VkAccessFlags2 dstAccess) {
  BarrierSpec b;
  for (const auto& p : pending_)
    if (p.write) {
      b.srcStages |= p.stage;
      b.srcAccess |= writeAccess(p.stage);
    }
  pending_.clear();
  if (!b.srcStages) return std::nullopt;
  b.dstStages = dstStage;
  b.dstAccess = dstAccess;
  barriers_++;
  return b;
}

}  // namespace sdgen
