#include "engine/memory.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "engine/device.h"
#include "engine/error.h"
#include "engine/fault_injection.h"

namespace sdgen {

const char* memoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::Device: return "device";
    case MemoryKind::Staging: return "staging";
    case MemoryKind::Readback: return "readback";
    case MemoryKind::Params: return "params";
  }
  return "?";
}

Allocation& Allocation::operator=(Allocation&& o) noexcept {
  if (this != &o) {
    reset();
    pool_ = o.pool_;
    block_ = o.block_;
    offset_ = o.offset_;
    size_ = o.size_;
    reserved_ = o.reserved_;
    o.pool_ = nullptr;
    o.block_ = nullptr;
  }
  return *this;
}

Allocation::~Allocation() { reset(); }

void Allocation::reset() {
  if (block_) pool_->release(block_, offset_, reserved_);
  block_ = nullptr;
  pool_ = nullptr;
}

static uint32_t pickMemoryType(VkPhysicalDevice pd, MemoryKind kind, uint32_t allowedTypes) {
  VkPhysicalDeviceMemoryProperties props;
  vkGetPhysicalDeviceMemoryProperties(pd, &props);
  VkMemoryPropertyFlags required = 0, preferred = 0, avoided = 0;
  switch (kind) {
    case MemoryKind::Device:
      required = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
      avoided = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
      break;
    case MemoryKind::Staging:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      avoided = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
      break;
    case MemoryKind::Readback:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
      avoided = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
      break;
    case MemoryKind::Params:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
      break;
  }
  int best = -1, bestScore = -1000;
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
    if (!(allowedTypes & (1u << i))) continue;
    VkMemoryPropertyFlags f = props.memoryTypes[i].propertyFlags;
    if ((f & required) != required) continue;
    int score = 0;
    if (preferred && (f & preferred) == preferred) score += 2;
    if (f & avoided) score -= 1;
    if (score > bestScore) { bestScore = score; best = static_cast<int>(i); }
  }
  if (best < 0) throw Error(std::string("no Vulkan memory type suits ") + memoryKindName(kind) + " memory");
  return static_cast<uint32_t>(best);
}

static constexpr VkBufferUsageFlags kBlockUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                                  VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                                  VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                                  VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;

MemoryPool::MemoryPool(Device& device, MemoryKind kind, uint64_t blockSize)
    : device_(device), kind_(kind), blockSize_(std::min<uint64_t>(blockSize, device.info().maxBufferSize)) {
  if (kind == MemoryKind::Device && MemoryPeakLog::requested()) peakLog_ = std::make_unique<MemoryPeakLog>();
  // Learn which memory types a block buffer may live in.
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = 4096;
  bi.usage = kBlockUsage;
  VkBuffer probe;
  vkCheck(vkCreateBuffer(device.handle(), &bi, nullptr, &probe), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device.handle(), probe, &req);
  vkDestroyBuffer(device.handle(), probe, nullptr);
  memoryType_ = pickMemoryType(device.physical(), kind, req.memoryTypeBits);
  VkPhysicalDeviceMemoryProperties props;
  vkGetPhysicalDeviceMemoryProperties(device.physical(), &props);
  heap_ = props.memoryTypes[memoryType_].heapIndex;
  // Device memory the host can see without flushes (a CPU device such as lavapipe, where every type is host
  // visible; some integrated GPUs) is mapped too, so that loads write weights straight into it.
  const VkMemoryPropertyFlags coherent = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  mapped_ = kind != MemoryKind::Device || (props.memoryTypes[memoryType_].propertyFlags & coherent) == coherent;
}

MemoryPool::~MemoryPool() {
  if (peakLog_) std::fputs(peakLog_->report(memoryKindName(kind_)).c_str(), stderr);
  for (auto& b : blocks_) destroyBlock(b.get());
}

static uint64_t heapBudget(Device& device, uint32_t heap, uint64_t* usage) {
  const auto& info = device.info();
  *usage = 0;
  if (!info.memoryBudget) return info.heaps[heap].size;
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 mem{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2, &budget};
  vkGetPhysicalDeviceMemoryProperties2(device.physical(), &mem);
  *usage = budget.heapUsage[heap];
  return budget.heapBudget[heap];
}

MemoryBlock* MemoryPool::createBlock(uint64_t size, const std::string& what) {
  auto mib = [](uint64_t b) { return std::to_string((b + (1 << 20) - 1) >> 20) + " MiB"; };
  auto oom = [&](const char* why) {
    uint64_t usage = 0;
    uint64_t budget = heapBudget(device_, heap_, &usage);
    return OutOfMemoryError(std::string("out of GPU memory: cannot allocate ") + mib(size) + " of " +
                            memoryKindName(kind_) + " memory for '" + what + "' (" + why + "; heap " +
                            std::to_string(heap_) + " budget " + mib(budget) + ", in use " + mib(usage) +
                            ", held by sdgen " + mib(stats_.bytesReserved) + ")");
  };
  if (size > device_.info().maxBufferSize) throw oom("larger than the device's maximum buffer size");
  uint64_t usage = 0;
  uint64_t budget = heapBudget(device_, heap_, &usage);
  if (device_.info().memoryBudget && usage + size > budget) throw oom("over the heap budget");

  auto block = std::make_unique<MemoryBlock>();
  block->size = size;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = kBlockUsage;
  vkCheck(vkCreateBuffer(device_.handle(), &bi, nullptr, &block->buffer), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_.handle(), block->buffer, &req);

  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = memoryType_;
  VkResult r = injectFault(FaultKind::Alloc) ? VK_ERROR_OUT_OF_DEVICE_MEMORY
                                             : vkAllocateMemory(device_.handle(), &ai, nullptr, &block->memory);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
    vkDestroyBuffer(device_.handle(), block->buffer, nullptr);
    throw oom(vkResultName(r));
  }
  if (r != VK_SUCCESS) vkDestroyBuffer(device_.handle(), block->buffer, nullptr);
  vkCheck(r, "vkAllocateMemory");
  vkCheck(vkBindBufferMemory(device_.handle(), block->buffer, block->memory, 0), "vkBindBufferMemory");
  VkBufferDeviceAddressInfo addrInfo{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  addrInfo.buffer = block->buffer;
  block->address = vkGetBufferDeviceAddress(device_.handle(), &addrInfo);
  if (mapped_) {
    void* p = nullptr;
    vkCheck(vkMapMemory(device_.handle(), block->memory, 0, VK_WHOLE_SIZE, 0, &p), "vkMapMemory");
    block->mapped = static_cast<uint8_t*>(p);
  }
  block->freeRanges[0] = size;
  stats_.bytesReserved += size;
  stats_.peakBytesReserved = std::max(stats_.peakBytesReserved, stats_.bytesReserved);
  stats_.blocks++;
  blocks_.push_back(std::move(block));
  uint64_t usageNow = 0;
  heapBudget(device_, heap_, &usageNow);
  stats_.peakHeapUsage = std::max(stats_.peakHeapUsage, usageNow);
  return blocks_.back().get();
}

uint64_t MemoryPool::sampleHeapUsage() {
  uint64_t usage = 0;
  heapBudget(device_, heap_, &usage);
  std::lock_guard lock(mutex_);
  stats_.peakHeapUsage = std::max(stats_.peakHeapUsage, usage);
  return usage;
}

void MemoryPool::destroyBlock(MemoryBlock* block) {
  if (block->mapped) vkUnmapMemory(device_.handle(), block->memory);
  vkDestroyBuffer(device_.handle(), block->buffer, nullptr);
  vkFreeMemory(device_.handle(), block->memory, nullptr);
}

Allocation MemoryPool::allocate(uint64_t size, const std::string& what, uint64_t alignment) {
  const uint64_t requested = size;
  size = std::max<uint64_t>(1, (size + alignment - 1) / alignment) * alignment;
  std::lock_guard lock(mutex_);
  auto take = [&](MemoryBlock* b) -> std::optional<uint64_t> {
    for (auto it = b->freeRanges.begin(); it != b->freeRanges.end(); ++it) {
      uint64_t start = (it->first + alignment - 1) / alignment * alignment;
      uint64_t end = it->first + it->second;
      if (start + size > end) continue;
      uint64_t freeStart = it->first;
      b->freeRanges.erase(it);
      if (start > freeStart) b->freeRanges[freeStart] = start - freeStart;
      if (start + size < end) b->freeRanges[start + size] = end - (start + size);
      return start;
    }
    return std::nullopt;
  };
  MemoryBlock* chosen = nullptr;
  std::optional<uint64_t> offset;
  for (auto& b : blocks_) {
    if (b->dedicated) continue;
    if ((offset = take(b.get()))) { chosen = b.get(); break; }
  }
  if (!chosen) {
    bool dedicated = size > blockSize_ / 2;
    chosen = createBlock(dedicated ? size : blockSize_, what);
    chosen->dedicated = dedicated;
    offset = take(chosen);
  }
  stats_.bytesInUse += size;
  stats_.peakBytesInUse = std::max(stats_.peakBytesInUse, stats_.bytesInUse);
  if (peakLog_) peakLog_->allocated(chosen, *offset, what, size, stats_.bytesInUse);
  return Allocation(this, chosen, *offset, requested, size);
}

void MemoryPool::release(MemoryBlock* block, uint64_t offset, uint64_t size) {
  std::lock_guard lock(mutex_);
  stats_.bytesInUse -= size;
  if (peakLog_) peakLog_->released(block, offset);
  if (block->dedicated) {
    auto it = std::find_if(blocks_.begin(), blocks_.end(), [&](auto& b) { return b.get() == block; });
    stats_.bytesReserved -= block->size;
    stats_.blocks--;
    destroyBlock(block);
    blocks_.erase(it);
    return;
  }
  auto& fr = block->freeRanges;
  auto [it, inserted] = fr.emplace(offset, size);
  // Coalesce with the following and preceding free ranges.
  auto next = std::next(it);
  if (next != fr.end() && it->first + it->second == next->first) {
    it->second += next->second;
    fr.erase(next);
  }
  if (it != fr.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      fr.erase(it);
    }
  }
}

MemoryStats MemoryPool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void MemoryPool::resetPeak() {
  std::lock_guard lock(mutex_);
  stats_.peakBytesInUse = stats_.bytesInUse;
}

MemoryManager::MemoryManager(Device& device) {
  // Device blocks of 64 MiB (256 until session 53): what a process holds is whole blocks, and SD 1.5's ~2.7 GiB in
  // use at its peak rounded to 11 or 12 blocks of 256 depending on the autotune's choices — 256 MiB of the peak
  // decided by where the last tensor fell. Requests over half a block (the arena, the conv scratch, the largest
  // fused weights) get dedicated memory of their own size.
  pools_[0] = std::make_unique<MemoryPool>(device, MemoryKind::Device, 64ull << 20);
  pools_[1] = std::make_unique<MemoryPool>(device, MemoryKind::Staging, 64ull << 20);
  pools_[2] = std::make_unique<MemoryPool>(device, MemoryKind::Readback, 64ull << 20);
  pools_[3] = std::make_unique<MemoryPool>(device, MemoryKind::Params, 4ull << 20);
}

}  // namespace sdgen
