#pragma once
// Sum and sum of squares (fp32) of an expression over axes 1 and 3 of its shape [A, B, C, D]:
// out[(a*C + c)*2] = sum, out[(a*C + c)*2 + 1] = sum of squares, for every a, c.
// Per-row statistics of a matrix [R, N]: reshape to [R, 1, 1, N]. Group statistics of an NHWC tensor:
// [N, H*W, G, C/G].
#include <string>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "graph/expr.h"

namespace sdgen::ops {

struct ReduceInfo {
  std::string exprType;
  bool vector = false;
};

ReduceInfo sumAndSumOfSquares(Context& ctx, CommandSequence& seq, const graph::Expr& input,
                              const graph::TensorView& out, const std::string& label = "reduce");

}  // namespace sdgen::ops
