#pragma once
// Scaled dot-product attention in one launch (shaders/attention/flash.slang, FlashAttention-2 schedule):
//   out[b, q, h, :] = softmax_k(scale * Q[b, q, h, :] . K[b, k, h, :]) V[b, k, h, :]
// Q, K and V are fusion expressions (e.g. Q read straight out of a [B, S, H*D] projection through reshape,
// K/V as slices of a fused projection or permutes of head-major tensors); the output is a sink (e.g. a
// [B, S, H*D] buffer viewed as [B, S, H, D] for the out projection). Contract: docs/kernels-linear-attention.md.
#include <array>
#include <optional>
#include <string>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "graph/expr.h"
#include "ops/attention_coop.h"
#include "ops/attention_tiles.h"

namespace sdgen::ops {

struct AttentionOptions {
  std::optional<float> scale;  // unset: 1 / sqrt(D)
  bool causal = false;         // key k > query q masked (CLIP text encoder); requires Sq == Sk
  std::optional<FlashBlocks> blocks;  // unset: the largest that fits the device (set: tests, tuning)
  // CPU devices run the lanes kernel (shaders/attention/flash_lanes.slang) where its contract holds and no
  // blocks are forced; false keeps the shared-memory kernel (tests compare both).
  bool allowLanes = true;
  // Tensor cores (shaders/attention/flash_coop.slang: Q, K, V and P rounded to fp16, fp32 accumulation and
  // softmax). Unset: used where the device supports it (flashCoopSupported), no fp32 blocks are forced, D <= 256
  // fits its shared memory and every tensor q, k and v read is stored in fp16 (the fp16 precision of the
  // models); otherwise the fp32 kernel. true: forced, throws where the device lacks it; false: never.
  std::optional<bool> coop;
  std::optional<FlashCoopBlocks> coopBlocks;  // forces the tensor-core kernel with these blocks (tests, tuning)
  // Tests: the tensor-core kernel's code with cooperative matrices and subgroup operations emulated in shared
  // memory (shaders/coop_emulation.slang), on any device; one subgroup per workgroup; slow.
  bool coopEmulation = false;
  // Tests and benches: false makes the tensor-core kernel read raw fp16 heads through their expressions too.
  bool allowRawInputs = true;
  std::string label = "attention";
};

// What was chosen, for tests and profiles.
struct AttentionInfo {
  std::string qType, kType, vType, outType;  // generated Slang types
  FlashTile tile;       // the shared-memory kernel's tile (unused by the lanes and tensor-core kernels)
  bool coopMatrix = false;  // the tensor-core kernel ran (coopTile), emulated when coopEmulation was set
  FlashCoopTile coopTile;
  int lanesRowsPerLane = 0;  // > 0: the lanes kernel, each lane this many query rows
  bool vector = false;  // 4 elements along D per access (D % 4 == 0)
  bool rawInputs = false;  // the tensor-core kernel read q, k and v as raw fp16 rows (rawHalfHeads)
  int scalarWrappedNodes = 0;
  std::array<uint32_t, 3> groups{};
};

// A [B, S, H, D] fp16 buffer view the tensor-core kernel can read 16 bytes at a time from row addresses:
// contiguous along D, D % 8 == 0, a 16-byte aligned start and strides (elements) that are multiples of 8 —
// e.g. one part of a fused QKV projection split into heads. nullopt otherwise.
struct RawHalfHeads {
  uint64_t address = 0;
  int64_t strideB = 0, strideS = 0, strideH = 0;
};
std::optional<RawHalfHeads> rawHalfHeads(const graph::Expr& x);

// q: [B, Sq, H, D]; k, v: [B, Sk, H, D]; out: [B, Sq, H, D]. 1 <= D <= kAttentionMaxHeadDim.
AttentionInfo attention(Context& ctx, CommandSequence& seq, const graph::Expr& q, const graph::Expr& k,
                        const graph::Expr& v, const graph::Sink& out, const AttentionOptions& options = {});

}  // namespace sdgen::ops
