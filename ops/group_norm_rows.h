#pragma once
// Group norm of NHWC activations in one launch (shaders/group_norm_rows.slang), optionally followed by SiLU:
// each (image, group)'s statistics and its normalized values written together, instead of a statistics launch
// (Graph::groupStats, often split in parts plus a combine) whose lazy result the consumer stages into fp16
// scratch (another launch). Used where the consumer would read a raw fp16 tensor anyway: the tensor-core
// convolutions and linear layers of the UNet's resnets and transformer blocks (nn::Builder::groupNorm).
#include <cstdint>
#include <string>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "graph/expr.h"

namespace sdgen::ops {

// One workgroup holds one group's channels as columns of 4 (or of 1 where cg % 4 != 0) across its invocations:
// 256 of them for groups of up to kGroupNormRowsSmallGroup elements, 1024 for larger ones.
inline constexpr int64_t kGroupNormRowsMaxGroupChannels = 256;
inline constexpr int64_t kGroupNormRowsSmallGroup = 4096;
// Where an invocation's share of the group fits in registers (at most this many fp32 values, by workgroup size),
// it is loaded once and held there between the statistics and the normalization (docs/kernels.md).
inline constexpr int64_t kGroupNormRowsHeldFloats1024 = 44;
inline constexpr int64_t kGroupNormRowsHeldFloats256 = 64;
// and at most this many pixels (loads): 41 single-channel loads per invocation (the 64^2 level's groups of 10
// channels) ran 9 % slower held than looped, 31 and fewer faster (H200, docs/perf.md session 24).
inline constexpr int64_t kGroupNormRowsHeldPixels = 32;
inline bool groupNormRowsFit(const graph::Shape& nhwc, int groups) {
  return nhwc.size() == 4 && groups > 0 && nhwc[3] % groups == 0 && nhwc[3] / groups <= kGroupNormRowsMaxGroupChannels;
}

// The pixels per invocation held in registers for P pixels of a group of cg channels read vec at a time by
// `threads` invocations, or 0 (the two-pass loop) where they do not fit the budgets above (SDGEN_GROUP_NORM_HELD=N
// sets the most pixels; 0: never).
int groupNormRowsHeld(int64_t p, int64_t cg, int vec, int threads);

// out = act(group norm of x [N, H, W, C] with `groups` groups, gamma and beta [C] (expressions of any storage),
// eps), act = SiLU where `silu`; out is a dense tensor (fp32 or fp16) of x's shape. Throws, naming `label`, where
// the shape does not fit (groupNormRowsFit).
void groupNormRows(Context& ctx, CommandSequence& seq, const graph::Expr& x, const graph::Expr& gamma,
                   const graph::Expr& beta, int groups, float eps, bool silu, const graph::TensorView& out,
                   const std::string& label);

}  // namespace sdgen::ops
