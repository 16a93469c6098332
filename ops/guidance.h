#pragma once
// Classifier-free guidance combine as an expression (fused into whatever consumes the noise prediction,
// typically the scheduler step): the UNet ran on [uncond; cond] stacked along the batch axis, so
//   guided = uncond + scale * (cond - uncond).
#include "graph/expr.h"

namespace sdgen::ops {

// prediction: [2B, ...] with the unconditional half first; scale: a scalar expression (constant or uniform).
graph::Expr classifierFreeGuidance(const graph::Expr& prediction, const graph::Expr& scale);

}  // namespace sdgen::ops
