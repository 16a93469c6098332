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
#include "ops/attention_tiles.h"

namespace sdgen::ops {

struct AttentionOptions {
  std::optional<float> scale;  // unset: 1 / sqrt(D)
  bool causal = false;         // key k > query q masked (CLIP text encoder); requires Sq == Sk
  std::optional<FlashBlocks> blocks;  // unset: the largest that fits the device (set: tests, tuning)
  // CPU devices run the lanes kernel (shaders/attention/flash_lanes.slang) where its contract holds and no
  // blocks are forced; false keeps the shared-memory kernel (tests compare both).
  bool allowLanes = true;
  std::string label = "attention";
};

// What was chosen, for tests and profiles.
struct AttentionInfo {
  std::string qType, kType, vType, outType;  // generated Slang types
  FlashTile tile;       // the shared-memory kernel's tile (unused by the lanes kernel)
  int lanesRowsPerLane = 0;  // > 0: the lanes kernel, each lane this many query rows
  bool vector = false;  // 4 elements along D per access (D % 4 == 0)
  int scalarWrappedNodes = 0;
  std::array<uint32_t, 3> groups{};
};

// q: [B, Sq, H, D]; k, v: [B, Sk, H, D]; out: [B, Sq, H, D]. 1 <= D <= kAttentionMaxHeadDim.
AttentionInfo attention(Context& ctx, CommandSequence& seq, const graph::Expr& q, const graph::Expr& k,
                        const graph::Expr& v, const graph::Sink& out, const AttentionOptions& options = {});

}  // namespace sdgen::ops
