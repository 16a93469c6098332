#pragma once
// Internal to ops/linear.cpp: turns a validated GEMM problem into one dispatch of shaders/linear/gemm.slang
// (parameter block, generated wrapper, tile choice, hazard ranges).
#include <cstdint>
#include <optional>
#include <string>

#include "engine/device_info.h"
#include "ops/linear.h"

namespace sdgen::ops {

struct GemmProblem {
  graph::Expr a;                           // rank 4: rows in the leading axes, K innermost
  const LinearWeights* weights = nullptr;  // packed B (linear), or
  graph::Expr b;                           // B as [1, batches, K, N] (matmul)
  graph::Sink out;                         // rank 4: rows like a, N innermost
  int64_t m = 0, n = 0, k = 0, batches = 1;
  int64_t d1 = 1, d2 = 1;  // row g = batch * m + r sits at (g / (d1 * d2), (g / d2) % d1, g % d2)
  std::optional<GemmTile> tile;  // forced (benchmarks, tests); else chooseGemmTile
  std::string label;
};

// The tile for `m` rows per batch on this device; throws when even the smallest does not fit. With fp16
// weights on a device with tensor cores (gemmCoopSupported), the cooperative-matrix kernel.
GemmTile chooseGemmTile(int64_t m, int64_t n, int64_t k, const DeviceInfo& info, bool fp16Weights = false);
// Whether the device can run the cooperative-matrix kernel (GemmTile::coopTile): the 16x16x16
// f16 x f16 -> f32 subgroup shape, 32-wide subgroups, shared memory for the smallest tile.
bool gemmCoopSupported(const DeviceInfo& info);
// Why a cooperative-matrix tile cannot run on this device (empty: it can).
std::string coopTileProblem(const GemmTile& tile, const DeviceInfo& info);

// The row stride (elements) when `a` is a plain fp16 tensor the tensor-core kernel can read raw: K % 8 == 0,
// contiguous along K, rows evenly spaced by a multiple of 8 elements, 16-byte aligned; 0 otherwise.
int64_t rawHalfRowStride(const graph::Expr& a, int64_t k);

GemmInfo recordGemm(Context& ctx, CommandSequence& seq, const GemmProblem& p);

}  // namespace sdgen::ops
