#pragma once
// Group norm and layer norm: one statistics launch (fp32 sum and sum of squares, ops/reduce.h) plus a lazy
// expression that the consumer kernel fuses (SiLU, when wanted, is applied by the consumer's expression too).
#include <cstdint>
#include <string>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "graph/expr.h"

namespace sdgen::ops {

// Group norm of NHWC x [N, H, W, C] (C divisible by groups) from statistics [N, groups, 2] (sum, sum of squares):
// (x - mean) * rsqrt(var + eps) * gamma + beta, gamma and beta of shape [C].
graph::Expr groupNormFromStats(const graph::Expr& x, const graph::TensorView& stats, int groups, float eps,
                               const graph::Expr& gamma, const graph::Expr& beta);
// Records the statistics of x into `stats` (fp32, N * groups * 2 elements) and returns the normalized value.
graph::Expr groupNorm(Context& ctx, CommandSequence& seq, const graph::Expr& x, int groups, float eps,
                      const graph::Expr& gamma, const graph::Expr& beta, const graph::TensorView& stats);

// Layer norm over the last axis of x [..., D] from statistics [rows, 2], rows = product of the other axes.
graph::Expr layerNormFromStats(const graph::Expr& x, const graph::TensorView& stats, float eps,
                               const graph::Expr& gamma, const graph::Expr& beta);
graph::Expr layerNorm(Context& ctx, CommandSequence& seq, const graph::Expr& x, float eps, const graph::Expr& gamma,
                      const graph::Expr& beta, const graph::TensorView& stats);

// The checks the one-pass norm ops (ops::layerNormRows, groupNormRows, groupNormTiles) share: gamma and beta of
// shape [channels], out a dense fp32 or fp16 tensor of shape `shape`. Throws, naming `label`.
void checkNormOperands(const std::string& label, const graph::Shape& shape, int64_t channels,
                       const graph::Expr& gamma, const graph::Expr& beta, const graph::TensorView& out);

}  // namespace sdgen::ops
