#pragma once
// Group norm of NHWC activations over pixel blocks (shaders/group_norm_tiles.slang), optionally followed by SiLU:
// a statistics launch whose workgroups each read a block of whole pixels and write per-group partial sums, then a
// normalization launch whose workgroups add their image's partials and normalize their block. Unlike the
// one-launch ops::groupNormRows (one workgroup per (image, group): 64 for SD's 32 groups of 2 images) it fills
// the GPU and reads whole pixels; the partial sums cost one small fp32 buffer (groupNormTilesPartials).
#include <cstdint>
#include <string>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "graph/expr.h"

namespace sdgen::ops {

// How a shape is split (shaders/group_norm_tiles.slang "Layout"): VEC channels per column, TQ columns side by
// side in a workgroup of 256 invocations, R pixel rows of them, K columns per invocation; `blocks` blocks of
// `pixelsPerBlock` pixels (a multiple of R) per image.
struct GroupNormTilesPlan {
  int vec = 1, columnsPerRow = 1, rows = 1, columnsPerThread = 1;
  int64_t pixelsPerBlock = 1, blocks = 1;
};
inline constexpr int kGroupNormTilesThreads = 256;
inline constexpr int kGroupNormTilesMaxColumnsPerThread = 4;
// Workgroups the blocks aim at: four per SM of a 132-SM H100/H200 (32 KB of loads in flight per SM), fewer where
// an image has fewer pixel rows. SDGEN_GROUP_NORM_WORKGROUPS=N sets it for measurements.
inline constexpr int64_t kGroupNormTilesTargetWorkgroups = 528;

// Whether the kernel takes it: NHWC [N, H, W, C], 1 <= groups <= 256 dividing C, C / VEC <= 1024 columns
// (C <= 4096 read 4 at a time, 1024 one at a time), under 2^31 elements, N <= 65535.
bool groupNormTilesFit(const graph::Shape& nhwc, int groups);
// The split of a shape that fits (the caller checks groupNormTilesFit).
GroupNormTilesPlan groupNormTilesPlan(const graph::Shape& nhwc, int groups);
// The fp32 partial sums the launches exchange: [N, blocks, groups, 2].
graph::Shape groupNormTilesPartials(const graph::Shape& nhwc, int groups);

// out = act(group norm of x [N, H, W, C] with `groups` groups, gamma and beta [C] (expressions of any storage),
// eps), act = SiLU where `silu`; out is a dense fp32 or fp16 tensor of x's shape; partials a dense fp32 tensor of
// at least groupNormTilesPartials' elements; `copy` (optional) a dense tensor of out's dtype and shape that also
// gets x itself, written by the same launch. Throws, naming `label`, where the shapes do not fit.
void groupNormTiles(Context& ctx, CommandSequence& seq, const graph::Expr& x, const graph::Expr& gamma,
                    const graph::Expr& beta, int groups, float eps, bool silu, const graph::TensorView& partials,
                    const graph::TensorView& out, const std::string& label, const graph::TensorView* copy = nullptr);

}  // namespace sdgen::ops
