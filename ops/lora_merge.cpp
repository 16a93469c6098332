#include "ops/lora_merge.h"

#include <algorithm>

#include "engine/error.h"
#include "engine/param_block.h"

namespace sdgen::ops {

namespace {

constexpr uint32_t kThreads = 256;
constexpr uint64_t kMaxGroups = 512;  // the grid-stride loop covers the rest (as weight_pack.cpp)

const ComputePipeline& mergeKernel(Context& ctx) {
  KernelSource src;
  src.module = "weights/lora_merge.slang";
  src.label = "lora_merge";
  return ctx.kernels().get(src);
}

}  // namespace

void loraMerge(Context& ctx, CommandSequence& seq, VkDeviceAddress c, VkDeviceAddress l, VkDeviceAddress rt,
               const LoraMergeShape& s, float scale, const std::string& what) {
  if (s.rank == 0) throw Error(what + ": a LoRA of rank 0");
  if (s.m == 0 || s.n == 0) return;
  const uint64_t total = uint64_t(s.m) * s.n;
  if (total >= (uint64_t(1) << 31) || uint64_t(s.m) * s.rank >= (uint64_t(1) << 31) ||
      uint64_t(s.rank) * s.n >= (uint64_t(1) << 31))
    throw Error(what + ": " + std::to_string(s.m) + "x" + std::to_string(s.n) + " (rank " + std::to_string(s.rank) +
                ") exceeds the LoRA merge kernel's 31-bit indexing");
  if (c % 4 || l % 4 || rt % 4) throw Error(what + ": LoRA merge operands are not 4-byte aligned");
  const uint32_t groups = static_cast<uint32_t>(std::min<uint64_t>(kMaxGroups, (total + kThreads - 1) / kThreads));
  ParamBlock p;
  p.address(c).address(l).address(rt).u32(s.m).u32(s.n).u32(s.rank).f32(scale);
  p.u32(static_cast<uint32_t>(total)).u32(groups * kThreads);
  const MemRange reads[] = {{c, total * 4}, {l, uint64_t(s.m) * s.rank * 4}, {rt, uint64_t(s.rank) * s.n * 4}};
  const MemRange writes[] = {{c, total * 4}};
  seq.dispatch(mergeKernel(ctx), {groups, 1, 1}, p, reads, writes, "lora merge " + what);
}

}  // namespace sdgen::ops
