#pragma once
// The LoRA merge on the device (shaders/weights/lora_merge.slang): C[M][N] += scale * L[M][R] * Rt[R][N] in fp32,
// one dispatch per LoRA and weight. Used by nn::WeightStream between converting a weight to fp32 and packing it
// (models/lora/, docs/lora.md); tests/ops/lora_merge_test.cpp checks it against a float64 product.
#include <cstdint>
#include <string>

#include "engine/command_sequence.h"
#include "engine/context.h"

namespace sdgen::ops {

struct LoraMergeShape {
  uint32_t m = 0, n = 0, rank = 0;
};

// Records the dispatch. `c`, `l` and `rt` are fp32 arrays of m*n, m*rank and rank*n elements, 4-byte aligned.
// Throws an sdgen::Error naming `what` for an empty rank or sizes past the kernel's 31-bit indexing.
void loraMerge(Context& ctx, CommandSequence& seq, VkDeviceAddress c, VkDeviceAddress l, VkDeviceAddress rt,
               const LoraMergeShape& shape, float scale, const std::string& what);

}  // namespace sdgen::ops
