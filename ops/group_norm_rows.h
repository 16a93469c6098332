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
inline bool groupNormRowsFit(const graph::Shape& nhwc, int groups) {
  return nhwc.size() == 4 && groups > 0 && nhwc[3] % groups == 0 && nhwc[3] / groups <= kGroupNormRowsMaxGroupChannels;
}

// out = act(group norm of x [N, H, W, C] with `groups` groups, gamma and beta [C] (expressions of any storage),
// eps), act = SiLU where `silu`; out is a dense tensor (fp32 or fp16) of x's shape. Throws, naming `label`, where
// the shape does not fit (groupNormRowsFit).
void groupNormRows(Context& ctx, CommandSequence& seq, const graph::Expr& x, const graph::Expr& gamma,
                   const graph::Expr& beta, int groups, float eps, bool silu, const graph::TensorView& out,
                   const std::string& label);

}  // namespace sdgen::ops
