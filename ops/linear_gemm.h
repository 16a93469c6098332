#pragma once
// Internal to ops/linear.cpp: turns a validated GEMM problem into one dispatch of shaders/linear/gemm.slang
// (parameter block, generated wrapper, hazard ranges: ops/linear_gemm.cpp) on a tile chosen per shape and device
// (ops/gemm_tile_choice.cpp).
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "engine/device_info.h"
#include "ops/conv2d_scratch.h"
#include "ops/layer_norm_rows.h"
#include "ops/linear.h"
#include "ops/linear_norm.h"

namespace sdgen::ops {

// B packed at load time as [K][NP] (LinearWeights, or a convolution's gemm layout) with an fp32 bias [NP].
struct PackedB {
  VkDeviceAddress weight = 0, bias = 0;  // bias 0: none
  int64_t np = 0;                        // row length, N rounded up (4 for the fp32 kernels, 8 for tensor cores)
  DType storage = DType::F32;
  std::vector<MemRange> ranges;          // what a kernel reading them touches (hazards)
  static PackedB of(const LinearWeights& w);
};

// The tensor-core kernel's implicit-GEMM convolution (A_MODE 2): A is the im2col matrix of a raw fp16 NHWC
// input [N, H, W, Cin] at `input` (dense, Cin % 8 == 0), rows = output pixels, k = (ky * kw + kx) * Cin + ci.
// phaseRows > 0 (A_MODE 5): the four output phases of a 3x3 convolution of the nearest 2x upsampling of that
// input, each a 2x2 convolution of the input (kh = kw = 2, Ho = H, Wo = W, stride and dilation 1): rows
// [p * phaseRows, (p + 1) * phaseRows) are phase p (phaseRows = N * H * W, a multiple of the tile's BM), whose
// padding the kernel derives and whose B is the p-th [K][NP] matrix of the packed weights.
// GemmProblem::batches > 1 (A_MODE 2, and the halo tile's 1x3 form, A_MODE 8, unsplit): batch b is images
// [b * N, (b + 1) * N) of the input (m = N * Ho * Wo rows per batch) times the b-th [K][NP] matrix of the packed B
// (coop-winograd-rows' eight products in one launch).
struct GemmConv {
  VkDeviceAddress input = 0;
  int64_t h = 0, w = 0, cin = 0, ho = 0, wo = 0;
  int kh = 0, kw = 0, strideH = 1, strideW = 1, padH = 0, padW = 0, dilationH = 1, dilationW = 1;
  int64_t phaseRows = 0;
};

// The tensor-core kernel's Winograd F(2,3) mode (A_MODE 4, the conv algorithm "coop-winograd"): batch e of the
// GEMM is position (e / 4, e % 4) of the 4x4 transformed tile; A's rows are the tiles [firstTile, firstTile + m)
// of a raw fp16 NHWC input [N, H, W, Cin] (dense, Cin % 8 == 0) cut into tilesH x tilesW tiles of 2x2 outputs,
// V = B^T d B made while staging; packed B holds one [K][NP] matrix per batch, bBatchStride elements apart.
struct GemmWinograd {
  VkDeviceAddress input = 0;
  int64_t h = 0, w = 0, cin = 0, tilesH = 0, tilesW = 0, firstTile = 0, bBatchStride = 0;
};

// coop-winograd-rows' products GEMM applying the output transform itself (A_MODE 9, gemm_coop_rows.slang; the 1x3
// halo tile, 8 batches): the products M_e go to `products` (fp16 [8][m][n], no bias), and the last of the eight
// workgroups of a block of pixels and channels stores y = A^T M + bias (packed B's bias) through GemmProblem::out,
// a 4-d [images, ho, W, n] sink; `counters` hold one zero uint per block (zero again after the launch).
constexpr int kRowsFusedProducts = 8;  // gemm_coop_rows.slang
struct GemmRowsOutput {
  VkDeviceAddress products = 0, counters = 0;
  uint64_t productsBytes = 0, counterCount = 0;
  int64_t firstTileRow = 0, ho = 0;
};

struct GemmProblem {
  graph::Expr a;                           // rank 4: rows in the leading axes, K innermost (conv: the input)
  std::optional<PackedB> packed;           // packed B (linear, conv), or
  int64_t bBatchStride = 0;                // coop, plain A only: packed B of batch b at b * this (elements)
  graph::Expr b;                           // B as [1, batches, K, N] (matmul)
  std::optional<GemmConv> conv;            // tensor cores only: A is the convolution's im2col matrix
  std::optional<GemmWinograd> winograd;    // tensor cores only: A is Winograd F(2,3)'s V (batches = 16)
  std::optional<GemmRowsOutput> rowsOutput;  // with `conv` on the 1x3 halo tile: the output transform too
  graph::Sink out;                         // rank 4: rows like a, N innermost
  int64_t m = 0, n = 0, k = 0, batches = 1;
  int64_t d1 = 1, d2 = 1;  // row g = batch * m + r sits at (g / (d1 * d2), (g / d2) % d1, g % d2)
  std::optional<GemmTile> tile;  // forced (benchmarks, tests); else chooseGemmTile
  Conv2dScratch* scratch = nullptr;  // split-K partials (Slot::Partials); null: no split-K
  std::string label;
  std::string sumLabel;  // split-K's second launch; empty: label + " split-K sum"
  bool geglu = false;    // coop only: packed B is GEGLU-interleaved, `out` is n / 2 wide (ops/linear_geglu.h)
  std::optional<RowNorm> norm;  // coop only: `a` is this layer norm, read while staging (A_MODE 3)
  // Split-K (not a tail split, not GEGLU) on a device that reports its subgroup sizes: the sum launch also writes this
  // layer norm of the output (gemm_split.slang gemmSplitNormMain; GemmInfo::normInSum). Else ignored: the caller
  // (ops::linear) records the norm itself when normInSum is false.
  const LinearNormOutput* normOutput = nullptr;
};

// Split-K for the tensor-core kernel: how many parts K of a `batches` x `m` x `n` x `k` problem is split into
// on tile `t` so that enough workgroups run (docs/dispatch.md); 1 when the tiles alone fill the GPU.
int chooseSplitK(const GemmTile& t, int64_t m, int64_t n, int64_t k, int64_t batches);
// `parts` split-K parts of `slices` K slices as the kernel runs them: whole slices per part, no empty part
// (e.g. 32 parts of 360 slices -> 30 parts of 12).
int normalizedSplitParts(int64_t parts, int64_t slices);

// Wave-balanced split-K (docs/dispatch.md): the 128 x 128 tile in the number of parts whose waves of resident
// workgroups the cost model finds >= 15 % cheaper than `current` (a tile and split chosen by chooseGemmTile and
// chooseSplitK), for problems of >= 2048 rows on a device whose SM count is known; nullopt: keep `current`.
std::optional<GemmTile> chooseWaveSplit(const GemmTile& current, int64_t m, int64_t n, int64_t k,
                                        const DeviceInfo& info);
// One-wave tile (docs/dispatch.md): the 64 x 160 tile where `current` is the unsplit 64 x 64 tile, N is a multiple
// of 160, K has >= 16 slices, M >= 2048, and its tiles fill between 3/4 of and one wave of resident workgroups
// (2 per SM; needs the SM count); nullopt: keep `current`. SDGEN_WAVE_TILE=H|h[O] (a measurement knob) gives it
// fp16 accumulators (K <= 2048) or fp16 slices, through spirv-opt with O where `spirvOpt` (the optimizer) is there.
std::optional<GemmTile> chooseOneWaveTile(const GemmTile& current, int64_t m, int64_t n, int64_t k,
                                          const DeviceInfo& info, bool spirvOpt = false);
// The model's cost of `t` in slice waves (see gemm_tile_choice.cpp), for tests and dispatch tables.
double waveCost(const GemmTile& t, int64_t m, int64_t n, int64_t k, uint32_t multiprocessors);
// The tile for `m` rows per batch on this device; throws when even the smallest does not fit. With fp16
// weights on a device with tensor cores (gemmCoopSupported), the cooperative-matrix kernel.
GemmTile chooseGemmTile(int64_t m, int64_t n, int64_t k, const DeviceInfo& info, bool fp16Weights = false);
// Large plain GEMMs of whole 256 x 256 tiles (M, N multiples of 256 filling >= 240 tiles, K a multiple of 32 and
// >= 2048; docs/dispatch.md): the 256 x 256 tile with fp16 accumulators in 2048-deep chunks (ACC 3), compiled
// through spirv-opt. Needs the f16 x f16 -> f16 shape and the optimizer (`spirvOpt`: it is 5x slower at -O0);
// nullopt where any of this does not hold. Callers give it scratch memory for the chunk planes (K > 2048).
std::optional<GemmTile> chooseLargeCoopTile(int64_t m, int64_t n, int64_t k, const DeviceInfo& info, bool spirvOpt);
// The tile chooseLargeCoopTile and chooseShortKHalfTile choose: 256 x 256, 8 subgroups of 128 x 64, fp16 accumulators added
// into an fp16 total every 2048 of K (ACC 3), compiled through spirv-opt.
GemmTile largeHalfTile();
// Short-K fp16-accumulator tile (docs/dispatch.md): the large tile's kernel (256 x 256, fp16 accumulators,
// spirv-opt) where `current` is an unsplit fp32-accumulator coop tile, M >= 2048, K a multiple of 32 in
// 640..2048, N % 8 == 0 and its tiles fill their waves (one per SM; needs the SM count) to >= 80 %; nullopt:
// keep `current`. GEGLU projections take it too (the epilogue is the same).
std::optional<GemmTile> chooseShortKHalfTile(const GemmTile& current, int64_t m, int64_t n, int64_t k,
                                             const DeviceInfo& info, bool spirvOpt);
// Split fp16-accumulator tile (docs/dispatch.md): the large tile's kernel (256 x 256, fp16 accumulators, spirv-opt)
// in as many K parts as fill one wave of it (one per SM; needs the SM count) to >= 80 %, where `current` is already
// split, M >= 2048 and M, N are multiples of 256, with 640..2048 of K per part (no flush); nullopt: keep `current`.
std::optional<GemmTile> chooseSplitHalfTile(const GemmTile& current, int64_t m, int64_t n, int64_t k,
                                            const DeviceInfo& info, bool spirvOpt);
// The same tile in parts of 448..2048 of K where `current` is the one-wave tile (64 x 160, chooseOneWaveTile), for
// SDXL's 32^2 output projections (docs/dispatch.md; SDGEN_WAVE_SPLIT_HALF=0 turns it off); nullopt: keep `current`.
// The caller stages a layer-normed input once instead of fusing the norm into this tile.
std::optional<GemmTile> chooseWaveSplitHalfTile(const GemmTile& current, int64_t m, int64_t n, int64_t k,
                                                const DeviceInfo& info, bool spirvOpt);
// Wide fp16-accumulator tile (session 40, opt-in SDGEN_WIDE_HALF_TILE=128|160; docs/dispatch.md): 256 x 128 or
// 256 x 160 with fp16 accumulators (spirv-opt) where `current` is the 128 x 128 fp32-accumulator tile, M >= 2048 is a
// multiple of 256 and N of the width but not of 256; K in the fewest parts of <= 2048 (split-K above that: the
// caller's scratch). nullopt: keep `current`. The caller stages a layer-normed input.
std::optional<GemmTile> chooseWideHalfTile(const GemmTile& current, int64_t m, int64_t n, int64_t k,
                                           const DeviceInfo& info, bool spirvOpt);
// Tail split (docs/dispatch.md "Tail split"; SDGEN_TAIL_SPLIT=0 turns it off): where `current` is the unsplit
// 256 x 256 fp16-accumulator tile (no flush) and its tiles (one per SM; needs the SM count) fill >= 2 waves, the
// last at most half: the column tiles that fit the waves before the last whole-K, the rest split over K in as many
// parts (>= 2, <= 8, >= 320 of K each) as the last wave's SMs hold; nullopt: keep `current`. One batch, a plain A
// and scratch memory (the caller's to check).
std::optional<GemmTile> chooseTailSplit(const GemmTile& current, int64_t m, int64_t n, int64_t k, const DeviceInfo& info);
// Whether the device can run the cooperative-matrix kernel (GemmTile::coopTile): the 16x16x16
// f16 x f16 -> f32 subgroup shape, 32-wide subgroups, shared memory for the smallest tile.
bool gemmCoopSupported(const DeviceInfo& info);
// Why a cooperative-matrix tile cannot run on this device (empty: it can).
std::string coopTileProblem(const GemmTile& tile, const DeviceInfo& info);

// The row stride (elements) when `a` is a plain fp16 tensor the tensor-core kernel can read raw: K % 8 == 0,
// contiguous along K, rows evenly spaced by a multiple of 8 elements, 16-byte aligned; 0 otherwise.
int64_t rawHalfRowStride(const graph::Expr& a, int64_t k);

GemmInfo recordGemm(Context& ctx, CommandSequence& seq, const GemmProblem& p);
// n / d = (n * multiplier) >> shift for every 0 <= n < 2^31 (1 <= d < 2^31): the GEMM header's words 28-31 for
// the row decomposition (shaders/linear/gemm.slang rowCoord).
struct DivisionMagic {
  uint32_t multiplier = 0, shift = 0;
};
DivisionMagic divisionMagic(int64_t d);

// GemmTile::fixedShape: the header's shape words (M, N, K, parts, NP, chunk, A's stride, batches x M and, except for
// the fused layer norm's A mode 3, words 16-23 of the geometry) as the constants of a generated IGemmHeader
// (gemm_coop.slang) in info.headerType / headerSource, so that the compiler folds them; addresses stay run-time
// words. `header` is the 32-word GEMM header recordGemm builds.
void fixHeaderWords(GemmInfo& info, std::span<const uint32_t> header);

// The generated entry points (exposed so that CI without tensor cores still compiles them to SPIR-V): the GEMM
// kernel for `tile` with info's A and sink types, vector flags and A mode, and split-K's sum launch.
std::string gemmWrapperSource(const GemmInfo& info, const GemmTile& tile, bool bias, bool geglu = false);
std::string gemmSplitSumSource(const GemmInfo& info, bool bias, bool geglu = false, bool tail = false);
// The split-K sum that also writes a layer norm of the stored rows (GemmProblem::normOutput): X, G, Bt the norm's
// source, gamma and beta types, its output's storage, the subgroup layout (ops::layerNormRowsLayout) and the words of
// its output address and eps; rowThreads > 0: the workgroup-per-row form (gemmSplitNormRowMain) of that many
// invocations instead of the subgroup layout.
std::string gemmSplitNormSource(const GemmInfo& info, bool bias, const std::string& xType, const std::string& gType,
                                const std::string& bType, DType outType, LayerNormRowsLayout layout, uint32_t outWord,
                                uint32_t epsWord, int rowThreads = 0);

}  // namespace sdgen::ops
