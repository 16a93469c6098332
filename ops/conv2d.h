#pragma once
// 2-D convolution of NHWC activations read through a fusion expression, written through a sink:
//   out[n, oy, ox, co] = bias[co] + sum_{ky, kx, ci} in[n, oy*sH - pH + ky*dH, ox*sW - pW + kx*dW, ci] * w[co, ci, ky, kx]
// with zero padding outside the image. Algorithms (docs/kernels-conv.md): a general implicit GEMM (always
// correct), a vectorized implicit GEMM (Cin, Cout multiples of 4), Winograd F(4,3) (3x3, stride 1, pad 1,
// dilation 1), a direct kernel for Cout <= 4 and, on tensor cores in fp16, the implicit GEMM (coop) and
// Winograd F(2,3) (coop-winograd). The selection rule and the autotune are in docs/dispatch-conv.md.
#include <optional>
#include <string>
#include <vector>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "graph/expr.h"
#include "ops/conv2d_plan.h"
#include "ops/conv2d_scratch.h"
#include "ops/conv2d_weights.h"

namespace sdgen::ops {

struct Conv2dOptions {
  ConvAlgo algo = ConvAlgo::Auto;  // a forced algorithm whose contract does not hold throws sdgen::Error
  // Device memory for Winograd's intermediate tiles. Without one, Winograd is not eligible.
  Conv2dScratch* scratch = nullptr;
  // GEMM tile of GemmV2 and Winograd (BM x BN, one of convTiles()); 0 x 0 chooses by shape.
  int tileM = 0, tileN = 0;
  // With tileM x tileN: the CPU lanes kernel's tile (tileM = 8 * rows per lane in 8..64, tileN 32 or 64;
  // subgroup size 8 only) instead of one of convTiles(). Tests and benchmarks.
  bool lanes = false;
  // Runs exactly this candidate (the autotune's measurements, tests); its contract failing throws.
  std::optional<ConvCandidate> candidate;
  // Tiles per band instead of the size-based choice (tests, to reach several bands on small images): Winograd
  // F(4,3) exactly that many (ConvProblem::winogradBandTiles), coop-winograd rounded up to its GEMM tile's rows,
  // coop-winograd-rows that many tile rows (of 6 output rows), rounded up to its tile's block rows.
  int64_t winogradBandTiles = 0;
  std::string label = "conv2d";
};

// What ran, for tests and profiles (--profile-conv).
struct Conv2dInfo {
  ConvAlgo algo = ConvAlgo::Auto;
  std::string tile;                  // BM x BN, e.g. "128x128 (8x8 per thread)"
  std::vector<std::string> kernels;  // the label of every dispatch recorded, in order
  std::vector<std::string> skipped;  // with Auto: each better algorithm not taken and the condition that failed
  int nativeVectorNodes = 0, scalarWrappedNodes = 0;  // input/sink access of the vectorized kernels
  uint64_t scratchBytes = 0;
  std::string candidate;  // ConvCandidate::name() of what ran (coop: with its split-K parts)
  std::string source;     // ConvPlan::source: "rule", "forced", "tuner" or "cache"
};

// `input` has shape [N, H, W, Cin] (any expression), `out` has shape [N, Ho, Wo, Cout] (any sink); the sink
// receives the convolution including the bias. Errors (sdgen::Error) name the mismatching shapes.
Conv2dInfo conv2d(Context& ctx, CommandSequence& seq, const graph::Expr& input, const Conv2dWeights& weights,
                  const graph::Sink& out, const Conv2dOptions& options = {});

// Records the launch that makes `weights`' upsample phase filters (Conv2dWeightsOptions::packUpsamplePhases) from
// its fp16 gemm layout (ops/conv2d_coop_upsample.cpp): run once after the weights are packed, and again whenever
// the gemm layout changes (a LoRA re-merge), so that the recorded steps read them without a launch of their own.
void packUpsamplePhaseFilters(Context& ctx, CommandSequence& seq, const Conv2dWeights& weights);
// Records the launch that makes `weights`' coop-winograd-rows filters (Conv2dWeightsOptions::packWinogradRows) from
// its fp16 gemm layout (ops/conv2d_coop_winograd_rows.cpp), at the same times as packUpsamplePhaseFilters.
void packWinogradRowsFilters(Context& ctx, CommandSequence& seq, const Conv2dWeights& weights);
// Records the launch that makes `weights`' coop-winograd F(2,3) filters again (made: hasWinogradF23()) from its fp16
// gemm layout (ops/conv2d_coop_winograd.cpp): after a LoRA re-merge changed the gemm layout.
void packWinogradF23Filters(Context& ctx, CommandSequence& seq, const Conv2dWeights& weights);
// Makes the coop-winograd filters of weights with Conv2dWeightsOptions::winogradF23OnUse, once, on their own
// submission (what a recording of coop-winograd calls first). Returns whether the weights hold them.
bool makeWinogradF23Filters(Context& ctx, const Conv2dWeights& weights);
// The phases of an upsampling conv on tensor cores are on unless SDGEN_CONV_UPSAMPLE_PHASES=0 (measurements).
bool upsamplePhasesEnabled();

// The output shape [N, Ho, Wo, Cout] for an input shape; throws when the output would be empty.
graph::Shape conv2dOutputShape(const graph::Shape& input, const Conv2dWeights& weights);

}  // namespace sdgen::ops
