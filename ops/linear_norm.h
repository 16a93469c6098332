#pragma once
// A layer norm read by the tensor-core GEMM while it stages A (gemm_coop.slang A_MODE 3) instead of being
// computed into fp16 scratch by a launch of its own: the GEMM reads the raw fp16 input, the row statistics of
// ops::layerNormStats, gamma and beta. Recognized on the expression ops::layerNormFromStats builds.
#include <cstdint>
#include <optional>

#include "graph/expr.h"

namespace sdgen::ops {

struct RowNorm {
  graph::TensorView x;        // the raw fp16 input (rawHalfRowStride > 0)
  VkDeviceAddress stats = 0;  // fp32 (sum, sum of squares) per row, row g at stats + 8 g
  VkDeviceAddress gamma = 0, beta = 0;  // fp32 [K], dense
  float invCount = 0, eps = 0;          // 1 / K, the norm's epsilon
};

// `a` as ops::layerNormFromStats(x, stats, eps, gamma, beta) over its last axis K with x a raw fp16 matrix,
// stats dense per row and gamma, beta dense fp32 [K] vectors; nullopt for anything else.
std::optional<RowNorm> rowNormOf(const graph::Expr& a, int64_t k);

}  // namespace sdgen::ops
