#pragma once
// Records dispatches, copies and fills into one command buffer, deriving barriers from the memory each
// command declares it reads and writes. A recorded sequence can be submitted again without re-recording;
// runtime scalars (uniform slots) can change between submissions. Commands are kept on the host until end(),
// which waits for the kernels still compiling (KernelRef) and writes the command buffer: recording a graph
// never waits for a compiler, so its kernels compile in parallel.
#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "engine/hazard_tracker.h"
#include "engine/memory.h"
#include "engine/pipeline.h"

namespace sdgen {

class Context;

inline MemRange range(const Allocation& a) { return {a.address(), a.size()}; }
inline MemRange range(const Allocation& a, uint64_t offset, uint64_t size) { return {a.address() + offset, size}; }

struct CommandTiming {
  std::string label;
  double ns = 0;
};

struct SequenceOptions {
  bool timestamps = false;   // a GPU timestamp after every command
  // A GPU timestamp at the start and at the end only: the sequence's GPU time (spanMs) without the per-command
  // timestamps' serialization, and without the host's submit and wait (what CUDA events around a launch measure).
  bool spanTimestamps = false;
  uint32_t uniformSlots = 64;  // 32-bit runtime scalars addressable by kernels
};

class CommandSequence {
 public:
  explicit CommandSequence(Context& ctx, SequenceOptions options = {});
  ~CommandSequence();
  CommandSequence(const CommandSequence&) = delete;
  CommandSequence& operator=(const CommandSequence&) = delete;

  // --- recording ---
  // `params` is the kernel's parameter block (copied now); `reads`/`writes` declare the memory it touches.
  void dispatch(const KernelRef& kernel, std::array<uint32_t, 3> groups, std::span<const uint32_t> params,
                std::span<const MemRange> reads, std::span<const MemRange> writes, const std::string& label = "");
  void dispatch(const KernelRef& kernel, std::array<uint32_t, 3> groups, std::span<const uint32_t> params,
                std::initializer_list<MemRange> reads, std::initializer_list<MemRange> writes,
                const std::string& label = "") {
    dispatch(kernel, groups, params, std::span(reads.begin(), reads.size()),
             std::span(writes.begin(), writes.size()), label);
  }
  void copy(const Allocation& src, uint64_t srcOffset, const Allocation& dst, uint64_t dstOffset, uint64_t size,
            const std::string& label = "copy");
  void fill(const Allocation& dst, uint64_t offset, uint64_t size, uint32_t value, const std::string& label = "fill");
  // Finishes recording (adds the barrier that makes results visible to the host): waits for the kernels
  // being compiled and writes the command buffer. Throws the first compile error (the sequence stays open).
  void end();

  // --- execution ---
  void submit();
  void wait();
  void run() {
    submit();
    wait();
  }

  // --- runtime scalars ---
  void setUniform(uint32_t slot, float value);
  void setUniformU32(uint32_t slot, uint32_t value);
  VkDeviceAddress uniformsAddress() const { return uniforms_.address(); }

  // --- inspection ---
  size_t commandCount() const { return labels_.size(); }
  size_t dispatchCount() const { return dispatches_; }
  size_t barrierCount() const { return hazards_.barriersEmitted(); }
  // Per-command GPU time of the last completed submission (requires options.timestamps).
  std::vector<CommandTiming> timings() const;
  // With spanTimestamps, after a run: the GPU time from the sequence's first command to the end of its last.
  double spanMs() const;

 private:
  struct DispatchOp { KernelRef kernel; PushConstants pc; std::array<uint32_t, 3> groups; };
  struct CopyOp { VkBuffer src, dst; VkBufferCopy region; };
  struct FillOp { VkBuffer dst; uint64_t offset, size; uint32_t value; };
  struct ResetQueriesOp { VkQueryPool pool; };
  struct TimestampOp { VkQueryPool pool; uint32_t index; };
  using Op = std::variant<BarrierSpec, DispatchOp, CopyOp, FillOp, ResetQueriesOp, TimestampOp>;
  void emit(const Op& op);
  void barrier(const std::optional<BarrierSpec>& b);
  void timestamp();
  VkDeviceAddress storeParams(std::span<const uint32_t> params);

  Context& ctx_;
  SequenceOptions options_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  bool ended_ = false, inFlight_ = false;
  std::vector<Op> ops_;  // until end() writes them into cmd_
  HazardTracker hazards_;
  Allocation uniforms_;
  std::vector<Allocation> paramChunks_;
  uint64_t paramUsed_ = 0;
  std::vector<VkQueryPool> queryPools_;
  uint32_t queryCount_ = 0;
  std::vector<std::string> labels_;
  size_t dispatches_ = 0;
};

}  // namespace sdgen
