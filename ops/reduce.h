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
// wholeRows: the kernel that reads whole rows of C * D elements, a workgroup per (a, part) (shaders/reduce.slang
// reduceRowsMain; needs D % 4 == 0 and C * D / 4 dividing 256), then a tree combine of the parts; where each
// (a, c) reads only its D elements of every row otherwise (the VAE's groups of 4 channels: 8 bytes every 256).
struct ReduceSplit {
  int parts = 1;
  graph::TensorView partials;
  bool wholeRows = false;
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

// Whether the whole-rows kernel can reduce [a, b, c, d] (D % 4 == 0, C * D / 4 divides 256, C >= 2).
bool wholeRowsReducible(int64_t c, int64_t d);
// The reduction of group statistics [a, b, c, d] on `device`: the whole-rows kernel where it applies and the
// reduction is split anyway (chooseReduceParts > 1), with about 1024 workgroups of at least 32768 elements, at
// most kMaxRowReduceParts parts per image; else chooseReduceParts' split of the per-(a, c) kernel. `partials`
// is left empty (the caller's memory).
inline constexpr int kMaxRowReduceParts = 256;
ReduceSplit chooseReducePlan(const DeviceInfo& device, int64_t a, int64_t b, int64_t c, int64_t d);

}  // namespace sdgen::ops
