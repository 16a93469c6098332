#include "engine/command_sequence.h"

#include <algorithm>
#include <cstring>

#include "engine/context.h"
#include "engine/error.h"
#include "engine/pipeline.h"

namespace sdgen {

static constexpr uint64_t kParamChunk = 64 << 10;
static constexpr uint32_t kQueriesPerPool = 1024;

CommandSequence::CommandSequence(Context& ctx, SequenceOptions options) : ctx_(ctx), options_(options) {
  Device& dev = ctx.device();
  if ((options_.timestamps || options_.spanTimestamps) && !dev.info().timestampsSupported)
    throw Error("GPU timestamps requested but device '" + dev.info().name + "' does not support them");
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = dev.commandPool();
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  vkCheck(vkAllocateCommandBuffers(dev.handle(), &ai, &cmd_), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  vkCheck(vkCreateFence(dev.handle(), &fi, nullptr, &fence_), "vkCreateFence");

  uniforms_ = ctx.memory().allocate(MemoryKind::Params, std::max(1u, options_.uniformSlots) * 4, "uniform slots");
  std::memset(uniforms_.mapped(), 0, uniforms_.size());

  // Order this submission after everything earlier on the queue (a replay reads what the last one wrote).
  barrier(BarrierSpec{VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                      VK_ACCESS_2_MEMORY_WRITE_BIT, VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT});
  if (options_.timestamps || options_.spanTimestamps) timestamp();
}

CommandSequence::~CommandSequence() {
  VkDevice dev = ctx_.device().handle();
  if (inFlight_) vkWaitForFences(dev, 1, &fence_, VK_TRUE, UINT64_MAX);
  for (auto p : queryPools_) vkDestroyQueryPool(dev, p, nullptr);
  vkDestroyFence(dev, fence_, nullptr);
  vkFreeCommandBuffers(dev, ctx_.device().commandPool(), 1, &cmd_);
}

void CommandSequence::barrier(const std::optional<BarrierSpec>& b) {
  if (b) ops_.push_back(*b);
}

void CommandSequence::emit(const Op& op) {
  if (const auto* b = std::get_if<BarrierSpec>(&op)) {
    VkMemoryBarrier2 mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    mb.srcStageMask = b->srcStages;
    mb.srcAccessMask = b->srcAccess;
    mb.dstStageMask = b->dstStages;
    mb.dstAccessMask = b->dstAccess;
    VkDependencyInfo di{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    di.memoryBarrierCount = 1;
    di.pMemoryBarriers = &mb;
    vkCmdPipelineBarrier2(cmd_, &di);
  } else if (const auto* d = std::get_if<DispatchOp>(&op)) {
    vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, d->kernel.wait().handle());
    vkCmdPushConstants(cmd_, ctx_.kernels().layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                       pushConstantBytes(ctx_.kernels().pushWords()), &d->pc);
    vkCmdDispatch(cmd_, d->groups[0], d->groups[1], d->groups[2]);
  } else if (const auto* c = std::get_if<CopyOp>(&op)) {
    vkCmdCopyBuffer(cmd_, c->src, c->dst, 1, &c->region);
  } else if (const auto* f = std::get_if<FillOp>(&op)) {
    vkCmdFillBuffer(cmd_, f->dst, f->offset, f->size, f->value);
  } else if (const auto* r = std::get_if<ResetQueriesOp>(&op)) {
    vkCmdResetQueryPool(cmd_, r->pool, 0, kQueriesPerPool);  // re-executed on every replay
  } else if (const auto* t = std::get_if<TimestampOp>(&op)) {
    vkCmdWriteTimestamp2(cmd_, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, t->pool, t->index);
  }
}

void CommandSequence::timestamp() {
  uint32_t pool = queryCount_ / kQueriesPerPool, index = queryCount_ % kQueriesPerPool;
  if (pool == queryPools_.size()) {
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = kQueriesPerPool;
    VkQueryPool qp;
    vkCheck(vkCreateQueryPool(ctx_.device().handle(), &qi, nullptr, &qp), "vkCreateQueryPool");
    queryPools_.push_back(qp);
    ops_.push_back(ResetQueriesOp{qp});
  }
  ops_.push_back(TimestampOp{queryPools_[pool], index});
  queryCount_++;
}

VkDeviceAddress CommandSequence::storeParams(std::span<const uint32_t> params) {
  uint64_t bytes = (params.size_bytes() + 15) & ~uint64_t(15);
  if (bytes == 0) bytes = 16;
  if (paramChunks_.empty() || paramUsed_ + bytes > paramChunks_.back().size()) {
    paramChunks_.push_back(
        ctx_.memory().allocate(MemoryKind::Params, std::max(kParamChunk, bytes), "kernel parameter blocks"));
    paramUsed_ = 0;
  }
  Allocation& chunk = paramChunks_.back();
  std::memcpy(chunk.mapped() + paramUsed_, params.data(), params.size_bytes());
  VkDeviceAddress addr = chunk.address() + paramUsed_;
  paramUsed_ += bytes;
  return addr;
}

void CommandSequence::dispatch(const KernelRef& kernel, std::array<uint32_t, 3> groups,
                               std::span<const uint32_t> params, std::span<const MemRange> reads,
                               std::span<const MemRange> writes, const std::string& label) {
  if (ended_) throw Error("CommandSequence: dispatch after end()");
  const auto& limits = ctx_.device().info().maxWorkgroupCount;
  for (int i = 0; i < 3; ++i)
    if (groups[i] == 0 || groups[i] > limits[i])
      throw Error("dispatch of " + kernel.name() + ": workgroup count " + std::to_string(groups[i]) +
                  " on axis " + std::to_string(i) + " outside 1.." + std::to_string(limits[i]));
  barrier(hazards_.access(reads, writes, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT));
  PushConstants pc{storeParams(params), uniforms_.address()};
  std::copy_n(params.begin(), std::min<size_t>(params.size(), ctx_.kernels().pushWords()), pc.words);
  ops_.push_back(DispatchOp{kernel, pc, groups});
  labels_.push_back(label.empty() ? kernel.name() : label);
  dispatches_++;
  if (options_.timestamps) timestamp();
}

void CommandSequence::copy(const Allocation& src, uint64_t srcOffset, const Allocation& dst, uint64_t dstOffset,
                           uint64_t size, const std::string& label) {
  if (ended_) throw Error("CommandSequence: copy after end()");
  if (srcOffset + size > src.size() || dstOffset + size > dst.size())
    throw Error("copy '" + label + "': range outside its allocation");
  MemRange r = range(src, srcOffset, size), w = range(dst, dstOffset, size);
  if (r.overlaps(w)) throw Error("copy '" + label + "': source and destination overlap");
  barrier(hazards_.access({&r, 1}, {&w, 1}, VK_PIPELINE_STAGE_2_TRANSFER_BIT));
  ops_.push_back(CopyOp{src.buffer(), dst.buffer(), VkBufferCopy{src.offset() + srcOffset, dst.offset() + dstOffset, size}});
  labels_.push_back(label);
  if (options_.timestamps) timestamp();
}

void CommandSequence::fill(const Allocation& dst, uint64_t offset, uint64_t size, uint32_t value,
                           const std::string& label) {
  if (ended_) throw Error("CommandSequence: fill after end()");
  if (offset % 4 || size % 4 || offset + size > dst.size())
    throw Error("fill '" + label + "': offset and size must be multiples of 4 inside the allocation");
  MemRange w = range(dst, offset, size);
  barrier(hazards_.access({}, {&w, 1}, VK_PIPELINE_STAGE_2_TRANSFER_BIT));
  ops_.push_back(FillOp{dst.buffer(), dst.offset() + offset, size, value});
  labels_.push_back(label);
  if (options_.timestamps) timestamp();
}

void CommandSequence::end() {
  if (ended_) return;
  // Every kernel first: a compile error leaves the sequence open and the command buffer untouched.
  for (const Op& op : ops_)
    if (const auto* d = std::get_if<DispatchOp>(&op)) d->kernel.wait();
  if (options_.spanTimestamps && !options_.timestamps) timestamp();  // after every command (ALL_COMMANDS)
  barrier(hazards_.flush(VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  vkCheck(vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
  for (const Op& op : ops_) emit(op);
  vkCheck(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
  ops_.clear();
  ops_.shrink_to_fit();
  ended_ = true;
}

void CommandSequence::submit() {
  if (!ended_) end();
  if (inFlight_) wait();
  vkCheck(vkResetFences(ctx_.device().handle(), 1, &fence_), "vkResetFences");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  ctx_.device().submit(si, fence_);
  inFlight_ = true;
}

void CommandSequence::wait() {
  if (!inFlight_) return;
  VkResult r = vkWaitForFences(ctx_.device().handle(), 1, &fence_, VK_TRUE, UINT64_MAX);
  inFlight_ = false;
  if (r == VK_ERROR_DEVICE_LOST) throw Error("GPU device lost while running a command sequence");
  vkCheck(r, "vkWaitForFences");
}

void CommandSequence::setUniform(uint32_t slot, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  setUniformU32(slot, bits);
}

void CommandSequence::setUniformU32(uint32_t slot, uint32_t value) {
  if (slot >= options_.uniformSlots) throw Error("uniform slot " + std::to_string(slot) + " out of range");
  if (inFlight_) wait();  // the GPU may still read the old value
  std::memcpy(uniforms_.mapped() + 4 * slot, &value, 4);
}

double CommandSequence::spanMs() const {
  if (!(options_.spanTimestamps || options_.timestamps) || queryCount_ < 2 || !ended_)
    throw Error("CommandSequence::spanMs: the sequence was not recorded with timestamps and run");
  uint64_t first = 0, last = 0;
  vkCheck(vkGetQueryPoolResults(ctx_.device().handle(), queryPools_.front(), 0, 1, 8, &first, 8,
                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
  const uint32_t lastIndex = queryCount_ - 1;
  vkCheck(vkGetQueryPoolResults(ctx_.device().handle(), queryPools_[lastIndex / kQueriesPerPool],
                                lastIndex % kQueriesPerPool, 1, 8, &last, 8,
                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
  return static_cast<double>(last - first) * ctx_.device().info().timestampPeriodNs / 1e6;
}

std::vector<CommandTiming> CommandSequence::timings() const {
  std::vector<CommandTiming> out;
  if (!options_.timestamps || queryCount_ < 2) return out;
  std::vector<uint64_t> ticks(queryCount_);
  for (size_t p = 0; p < queryPools_.size(); ++p) {
    uint32_t first = static_cast<uint32_t>(p) * kQueriesPerPool;
    uint32_t count = std::min(kQueriesPerPool, queryCount_ - first);
    vkCheck(vkGetQueryPoolResults(ctx_.device().handle(), queryPools_[p], 0, count, count * 8, ticks.data() + first,
                                  8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
            "vkGetQueryPoolResults");
  }
  double period = ctx_.device().info().timestampPeriodNs;
  for (size_t i = 0; i + 1 < queryCount_; ++i)
    out.push_back({labels_[i], static_cast<double>(ticks[i + 1] - ticks[i]) * period});
  return out;
}

}  // namespace sdgen
