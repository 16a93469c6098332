#pragma once
// Sum and sum of squares (fp32) of an expression over axes 1 and 3 of its shape [A, B, C, D]:
// out[(a*C + c)*2] = sum, out[(a*C + c)*2 + 1] = sum of squares, for every a, c.
// Per-row statistics of a matrix [R, N]: reshape to [R, 1, 1, N]. Group statistics of an NHWC tensor:
// [N, H*W, G, C/G].
#include <string>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "engine/device_info.h"
#include "graph/expr.h"

namespace sdgen::ops {

struct ReduceInfo {
  std::string exprType;
  bool vector = false;
};

// Split reduction (for few outputs over many rows, e.g. group norm: 32 groups per image): `parts` > 1 splits
// axis 1 into that many parts, one workgroup each, whose sums go to `partials` (dense fp32, A * C * parts * 2
// elements) and a second launch adds them in order (deterministic). parts == 1: one launch, partials unused.
struct ReduceSplit {
  int parts = 1;
  graph::TensorView partials;
};

ReduceInfo sumAndSumOfSquares(Context& ctx, CommandSequence& seq, const graph::Expr& input,
                              const graph::TensorView& out, const std::string& label = "reduce",
                              const ReduceSplit& split = {});

// The parts a group-norm statistics reduction of `outputs` (A * C) sums over `rows` (B) rows of `rowElements`
// (D) elements should use on `device`: enough workgroups to fill a GPU (about 4 per compute unit of a large
// one), each of at least 16384 elements (4096 where D % 4 != 0: the kernel then loads one element at a time);
// 1 on CPU devices (lavapipe: one launch is cheaper than two there) and where the outputs alone fill the GPU.
// At most kMaxReduceParts.
inline constexpr int kMaxReduceParts = 16;
int chooseReduceParts(const DeviceInfo& device, int64_t outputs, int64_t rows, int64_t rowElements);

}  // namespace sdgen::ops
