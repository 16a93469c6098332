#pragma once
// Device memory: large blocks, each one VkDeviceMemory bound to one VkBuffer, sub-allocated first-fit.
// Kernels address tensors through buffer device addresses (block address + offset), so a tensor costs
// no Vulkan object of its own.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/memory_peak_log.h"

namespace sdgen {

class Device;
class MemoryPool;

enum class MemoryKind {
  Device,    // device-local; tensors and weights
  Staging,   // host-visible, coherent; uploads
  Readback,  // host-visible, cached when available; downloads
  Params,    // host-visible, coherent, device-local when available; kernel parameter blocks and uniforms
};
const char* memoryKindName(MemoryKind kind);

struct MemoryBlock {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceAddress address = 0;
  uint64_t size = 0;
  uint8_t* mapped = nullptr;
  bool dedicated = false;
  std::map<uint64_t, uint64_t> freeRanges;  // offset -> size
};

// A sub-allocation. Move-only; returns its range to the pool on destruction.
class Allocation {
 public:
  Allocation() = default;
  Allocation(MemoryPool* pool, MemoryBlock* block, uint64_t offset, uint64_t size, uint64_t reserved)
      : pool_(pool), block_(block), offset_(offset), size_(size), reserved_(reserved) {}
  ~Allocation();
  Allocation(Allocation&& o) noexcept { *this = std::move(o); }
  Allocation& operator=(Allocation&& o) noexcept;
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  explicit operator bool() const { return block_ != nullptr; }
  VkBuffer buffer() const { return block_->buffer; }
  uint64_t offset() const { return offset_; }
  uint64_t size() const { return size_; }  // the requested size (bounds checks use it)
  VkDeviceAddress address() const { return block_->address + offset_; }
  // Host pointer for host-visible kinds; nullptr for device memory.
  uint8_t* mapped() const { return block_->mapped ? block_->mapped + offset_ : nullptr; }
  void reset();

 private:
  MemoryPool* pool_ = nullptr;
  MemoryBlock* block_ = nullptr;
  uint64_t offset_ = 0, size_ = 0, reserved_ = 0;  // reserved_: size rounded up to the alignment
};

struct MemoryStats {
  uint64_t bytesInUse = 0;
  uint64_t peakBytesInUse = 0;
  uint64_t bytesReserved = 0;  // sum of block sizes
  uint64_t peakBytesReserved = 0;
  // The whole process's usage of the pool's heap as VK_EXT_memory_budget reports it (driver allocations
  // included), sampled after every block this pool allocates and by sampleHeapUsage(); 0 without the extension.
  uint64_t peakHeapUsage = 0;
  size_t blocks = 0;
};

class MemoryPool {
 public:
  MemoryPool(Device& device, MemoryKind kind, uint64_t blockSize);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  // `what` names the request in the out-of-memory error.
  Allocation allocate(uint64_t size, const std::string& what, uint64_t alignment = 256);
  MemoryStats stats() const;
  // Starts a new peak measurement from what is in use now (e.g. to measure one phase of a program).
  void resetPeak();
  // Reads the heap's usage now (VK_EXT_memory_budget) into peakHeapUsage; returns it (0 without the extension).
  uint64_t sampleHeapUsage();
  MemoryKind kind() const { return kind_; }
  // Whether this pool's blocks are mapped (Allocation::mapped() is set): every host kind, and Device memory where
  // its type is host visible and coherent (CPU devices, some integrated GPUs).
  bool hostMapped() const { return mapped_; }

 private:
  friend class Allocation;
  void release(MemoryBlock* block, uint64_t offset, uint64_t size);
  MemoryBlock* createBlock(uint64_t size, const std::string& what);
  void destroyBlock(MemoryBlock* block);

  Device& device_;
  MemoryKind kind_;
  uint64_t blockSize_;
  uint32_t memoryType_ = 0;
  uint32_t heap_ = 0;
  bool mapped_ = false;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<MemoryBlock>> blocks_;
  MemoryStats stats_;
  std::unique_ptr<MemoryPeakLog> peakLog_;  // SDGEN_MEMORY_PEAK_LOG (device memory only)
};

// One pool per memory kind.
class MemoryManager {
 public:
  explicit MemoryManager(Device& device);
  MemoryPool& pool(MemoryKind kind) { return *pools_[static_cast<int>(kind)]; }
  Allocation allocate(MemoryKind kind, uint64_t size, const std::string& what, uint64_t alignment = 256) {
    return pool(kind).allocate(size, what, alignment);
  }

 private:
  std::unique_ptr<MemoryPool> pools_[4];
};

}  // namespace sdgen
