#pragma once
// Layer norm over the last axis in one launch (shaders/layer_norm_rows.slang): each row's statistics and its
// normalized values written together, instead of a statistics launch (ops::layerNorm) whose lazy result the
// consumer evaluates or stages into scratch (a second launch). Used where the consumer would read a raw
// fp16 matrix anyway: the tensor-core GEMMs of the UNet's transformer blocks (nn::Builder::layerNorm).
#include <cstdint>
#include <string>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "graph/expr.h"

namespace sdgen::ops {

// Rows up to this wide (D % 4 == 0) fit the kernel's registers (64 invocations x 8 words of 4).
inline constexpr int64_t kLayerNormRowsMaxWidth = 2048;
inline bool layerNormRowsFit(int64_t d) { return d > 0 && d % 4 == 0 && d <= kLayerNormRowsMaxWidth; }

// out = layer norm of x [..., D] over D with gamma, beta [D] (expressions of any storage) and eps; out is a
// dense tensor (fp32 or fp16) of x's shape. Throws, naming `label`, where D does not fit (layerNormRowsFit).
void layerNormRows(Context& ctx, CommandSequence& seq, const graph::Expr& x, const graph::Expr& gamma,
                   const graph::Expr& beta, float eps, const graph::TensorView& out, const std::string& label);

}  // namespace sdgen::ops
