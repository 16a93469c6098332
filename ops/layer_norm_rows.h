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

// The subgroup-per-row kernel (layerNormSubgroupRowsMain): `rows` rows per workgroup of 256 invocations (256 / the
// device's largest subgroup size), `quadsPerLane` words of 4 per lane (D / 4 over its smallest); rows = 0: the
// workgroup-per-row kernel (layerNormRowsMain), where the device does not report its subgroup sizes, a lane would
// hold more than kLayerNormRowsMaxSubgroupQuads words, or SDGEN_LAYER_NORM_ROWS=workgroup (measurements).
struct LayerNormRowsLayout {
  int rows = 0, quadsPerLane = 0;
};
inline constexpr int64_t kLayerNormRowsMaxSubgroupQuads = 16;
LayerNormRowsLayout layerNormRowsLayout(const DeviceInfo& info, int64_t d);

// out = layer norm of x [..., D] over D with gamma, beta [D] (expressions of any storage) and eps; out is a
// dense tensor (fp32 or fp16) of x's shape. Throws, naming `label`, where D does not fit (layerNormRowsFit).
void layerNormRows(Context& ctx, CommandSequence& seq, const graph::Expr& x, const graph::Expr& gamma,
                   const graph::Expr& beta, float eps, const graph::TensorView& out, const std::string& label);

}  // namespace sdgen::ops
