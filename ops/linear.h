#pragma once
// Linear layers and batched matrix products on the tiled GEMM kernel (shaders/linear/gemm.slang).
// Inputs are fusion expressions (a layer-norm or GEGLU prologue is evaluated while staging tiles) and the
// output is a sink (residual add, QKV partition, permute epilogues). Contract: docs/kernels-linear-attention.md.
#include <array>
#include <optional>
#include <string>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "graph/expr.h"
#include "ops/conv2d_scratch.h"
#include "ops/linear_weights.h"

namespace sdgen::ops {

// The halo tile with Winograd F(2,3) and fp16 products (GemmTile::haloWinograd, f16Accumulators): their sums run
// over K = 3 Cin, at most this (the fp16-accumulator tiles' chunk, ops::kHalfTileChunkK).
constexpr int64_t kHaloWinogradMaxProductK = 2048;

// Shared-memory tiled kernel (gemmMain): BM x BN x BK, 4 x 4 per thread. Lanes kernel (gemmLanesMain, CPU
// devices): `lanes` invocations, each `rowsPerLane` rows x BN columns, BM = lanes * rowsPerLane, no shared memory.
// Cooperative-matrix kernel (gemmCoopMain, tensor cores): subgroups of 32, each warpRows x warpCols 16x16
// accumulators, (BM / (16 warpRows)) x (BN / (16 warpCols)) subgroups.
struct GemmTile {
  int bm = 64, bn = 64, bk = 16;
  int lanes = 0, rowsPerLane = 0;  // lanes > 0: the lanes kernel
  int warpRows = 0, warpCols = 0;  // > 0: the cooperative-matrix kernel
  bool halfAccumulate = false;     // coop: fp16 accumulators within a BK slice, added into fp32 after it
  int splitK = 1;                  // coop: > 1 splits K over that many workgroups per tile (split-K)
  bool f16Accumulators = false;    // coop: fp16 accumulators for the whole K (ACC 2; error grows with K)
  bool doubleBuffer = false;       // coop: two shared slices, one barrier per slice
  // coop with f16Accumulators: > 0 adds the fp16 accumulators every flushK elements of K (a multiple of bk)
  // into a running fp16 total in scratch memory (ACC 3): the error of a flushK-deep fp16 sum, not a K-deep one.
  int flushK = 0;
  bool spirvOpt = false;           // compiled through spirv-opt (KernelSource::optimize), where measured faster
  // > 0: the few-row kernel (shaders/linear/gemv.slang): 8 subgroups of gemvLanes (the device's subgroup size),
  // each gemvWordLanes (1, 2, 4, 8) 16-byte column words wide, K split in gemvParts (1, 2, 4, 8) per word;
  // bm = its rows (2, 4, 8), bn = 64 gemvWordLanes / gemvParts.
  int gemvLanes = 0, gemvParts = 0, gemvWordLanes = 0;
  // coop, unsplit (splitK 1), one batch, a plain A: tailParts > 1 splits only the column tiles from column
  // tailStart (a multiple of bn, < N) over K in that many parts, in the same launch after the whole-K tiles of the
  // columns before it (the tail split, gemm_coop.slang SPLIT 3/4; docs/dispatch.md "Tail split").
  int tailStart = 0, tailParts = 0;
  // coop, tests only: the kernel on software cooperative matrices (shaders/coop_emulation.slang), on any device;
  // one subgroup per workgroup (bm = 16 warpRows, bn = 16 warpCols); slow.
  bool coopEmulation = false;
  // coop: the header's shape words (M, N, K, parts, strides, the convolution's geometry) compiled into the kernel
  // as constants, one kernel per problem shape (gemm_coop.slang IGemmHeader; SDGEN_GEMM_FIXED_SHAPE=1 sets it for
  // every tensor-core GEMM: a measurement knob, docs/perf.md session 40).
  bool fixedShape = false;
  // coop, a 3x3 stride-1 convolution (gemm_coop.slang A_MODE 6): the tile's BM rows are BM / 16 output rows of 16
  // pixels, whose input window ((BM / 16 + 2) x 18 pixels, BK channels) is staged once for the 9 taps instead of
  // an A slice per tap (ops/conv2d_coop.cpp, docs/kernels-conv.md "The halo form").
  bool haloConv = false;
  // The halo tile with Winograd F(2,3) along y (gemm_coop.slang A_MODE 7; BK 16, even warpRows, unsplit, the
  // products in fp32 or, with f16Accumulators, fp16): pairs of output rows from 4 products instead of 6.
  bool haloWinograd = false;
  // The halo tile's taps per K step: 3 with BK 16 (one B slice of 3 x 16 rows: the 3x3 tile's column of taps, the
  // 1x3 convolution's row), else 1 (BK 32).
  int haloTaps() const { return haloConv && bk == 16 ? 3 : 1; }
  bool isLanes() const { return lanes > 0; }
  bool isCoop() const { return warpRows > 0; }
  bool isGemv() const { return gemvLanes > 0; }
  int subgroups() const { return isCoop() ? (bm / (16 * warpRows)) * (bn / (16 * warpCols)) : 0; }
  int threads() const {
    return isLanes() ? lanes : isCoop() ? 32 * subgroups() : isGemv() ? 8 * gemvLanes : (bm / 4) * (bn / 4);
  }
  // Coop: shared memory in 16-byte words, the larger of the A + B slice(s) and the epilogue's fp32 rows.
  uint32_t coopSharedWords() const {
    const int aRows = haloConv ? (bm / 16 + 2) * 18 : bm;
    const int slices = (doubleBuffer ? 2 : 1) * (aRows * (bk + 8) / 8 + haloTaps() * bk * (bn + 8) / 8),
              epilogue = subgroups() * 16 * (4 * warpCols + 1);
    return uint32_t(slices > epilogue ? slices : epilogue);
  }
  uint32_t sharedBytes() const {
    if (isLanes()) return 0;
    if (isGemv()) return uint32_t(16 * 8 * gemvWordLanes * bm * 2);
    if (isCoop()) return 16 * coopSharedWords();
    return uint32_t(16 * bk * (bm / 4 + bn / 4));
  }
  std::string describe() const;
  static GemmTile lanesTile(int lanes, int rowsPerLane, int columnGroups) {
    return GemmTile{lanes * rowsPerLane, 32 * columnGroups, 4, lanes, rowsPerLane};
  }
  // Tensor cores (shaders/linear/gemm_coop.slang).
  static GemmTile coopTile(int bm, int bn, int bk, int warpRows, int warpCols, bool halfAccumulate = false,
                           int splitK = 1) {
    return GemmTile{bm, bn, bk, 0, 0, warpRows, warpCols, halfAccumulate, splitK};
  }
  static GemmTile gemvTile(int rows, int subgroupSize, int parts, int wordLanes) {
    GemmTile t{rows, 64 * wordLanes / parts, subgroupSize};
    t.gemvLanes = subgroupSize;
    t.gemvParts = parts;
    t.gemvWordLanes = wordLanes;
    return t;
  }
};

// What was chosen, for tests and profiles.
struct GemmInfo {
  std::string aType, bType, sinkType;  // the generated Slang types (the specialization key)
  // coop: the IGemmHeader type the kernel reads its shape words through, and its generated definition (empty for
  // the runtime words)
  std::string headerType = "RuntimeHeader", headerSource;
  bool vectorA = false;                // A read 4 along K at a time (K % 4 == 0)
  bool vectorB = false;                // matmul: B read 4 along N at a time (N % 4 == 0)
  bool vectorOut = false;              // output stored 4 along N at a time (N % 4 == 0)
  int scalarWrappedNodes = 0;          // leaves/sinks that fell back to scalar access inside vector mode
  int tileM = 0, tileN = 0, tileK = 0;
  int lanes = 0, rowsPerLane = 0;      // > 0: the lanes kernel (CPU devices)
  bool coopMatrix = false;             // the tensor-core kernel (fp16 operands)
  std::string kernel;                  // GemmTile::describe() of the tile that ran
  bool stagedInput = false;            // A was computed once into scratch memory first (see LinearOptions)
  bool rawA = false;                   // coop: A read raw (a plain fp16 tensor, a staged one, a conv input)
  int aMode = 0;                       // coop: 0 expression, 1 raw matrix, 2 im2col of a convolution input, 3 layer
                                       // norm, 4 Winograd F(2,3), 5 an upsampled convolution's phases
  int splitK = 1;                      // coop: K split over this many workgroups, summed by a second launch
  bool halfPartials = false;           // split-K: the partials stored in fp16 (gemm_coop.slang SPLIT = 2)
  // split-K with fp16 partials summed by each tile's last part in the GEMM's own launch (gemm_coop.slang SPLIT 5;
  // SDGEN_SPLIT_FUSED_SUM=1, a measurement knob, session 55): no second launch
  bool fusedSplitSum = false;
  bool edgeChecks = true;              // coop: bounds checks on M, N, K (off where every tile is whole: EDGE 0)
  bool residualPreloaded = false;      // coop: the sink's residual add loaded into the accumulators (words 26-27)
  bool normInSum = false;              // LinearOptions::normOutput written by the split-K sum launch
  std::array<uint32_t, 3> groups{};
};

// A layer norm read by the tensor-core GEMM while staging A wherever the rows are this few (the text encoder: 2 x
// 77 tokens; the UNet's 8^2 level): the GEMM is a few row tiles and latency bound, and the two staging launches
// (~6 us each on the H100) cost more than normalizing again per column tile (CLIP's qkv, N 2304: 36 column tiles
// of 3 x 64 rows). (nn::Builder::layerNorm now writes the normalized rows in one launch on such devices.)
inline constexpr int64_t kFusedNormMaxRows = 256;

// The layer norm of a linear layer's output (after its epilogue), written beside it: a transformer block's residual
// stream and its next norm's input. ops::linear writes `out` = layer norm of `source` over the last axis with gamma,
// beta and eps, where `source` is the tensor the layer's sink writes (dense, [rows, N]). Where the product ends in a
// split-K sum launch (unless SDGEN_SPLIT_SUM_NORM=0), that launch normalizes each row after storing it
// (gemm_split.slang gemmSplitNormRowMain, the default; or gemmSplitNormMain with SDGEN_SPLIT_SUM_NORM=1: the same
// bits as the separate launch); else one ops::layerNormRows launch after the product.
struct LinearNormOutput {
  graph::TensorView source;
  graph::Expr gamma, beta;
  float eps = 1e-5f;
  graph::TensorView out;
  std::string label = "layer norm";
};

// Split-K sum launches write LinearOptions::normOutput and nn::Builder::linearThenLayerNorm builds its one node
// (sessions 40-41, docs/perf.md: SDXL's fp16 step -1.3 ms on the H100 with form 2). SDGEN_SPLIT_SUM_NORM selects
// the form — 2 (the default): a workgroup per row, an invocation per quad; 1: a subgroup per row (the same bits as
// ops::layerNormRows, no faster); 0: off (the norm its own node). splitSumNormForm: 0, 1 or 2.
int splitSumNormForm();
bool splitSumNormEnabled();

struct LinearOptions {
  std::optional<GemmTile> tile;  // forces a kernel and tile (benchmarks, tests); unset: chooseGemmTile
  // Where a computed input may be staged. The GEMM evaluates its input expression once per column tile; on
  // CPU devices (lanes kernel, 32 columns per tile) every evaluation is lane-by-lane loads, so an input
  // that reads several tensors (a layer norm's x, statistics, gamma and beta) and feeds many column tiles
  // is cheaper computed once into this memory by an elementwise launch (stageLinearInput). The tensor-core
  // kernel reads A fastest as a raw fp16 matrix, so any input that is not one is staged there in fp16 (the
  // kernel rounds A to fp16 anyway: same result). Split-K keeps its fp32 partials there too (its own slot).
  // Null: never (and no split-K).
  Conv2dScratch* scratch = nullptr;
  // The weights are a GEGLU projection interleaved by interleaveGegluRows (ops/linear_geglu.h): the output
  // [..., N / 2] receives value * gelu(gate) from the tensor-core kernel's epilogue.
  bool gegluOutput = false;
  // Tensor cores: a layer norm of a raw fp16 input (ops::layerNormFromStats) is read by the GEMM while it
  // stages A (ops/linear_norm.h) instead of being staged into scratch first. False: always stage (benchmarks).
  bool fuseNorm = true;
  std::string label = "linear";
  // Also write the layer norm of the output (LinearNormOutput): in the split-K sum launch where it can, else its own.
  std::optional<LinearNormOutput> normOutput;
};

// Whether the input of a linear layer with `n` outputs is worth staging (LinearOptions::scratch) on `device`:
// evaluating it once per column tile costs (tiles x tensors read) loads per element, staging costs
// (tensors read + 1 store + tiles loads).
bool stageLinearInput(const graph::Expr& x, int64_t n, const DeviceInfo& device);

// The few-row kernel (GemmTile::gemvTile, shaders/linear/gemv.slang) for a linear layer of `m` <= 8 rows on fp16
// weights on a GPU (not on CPU devices, which keep the lanes kernel): subgroups 8 column words wide (whole
// 128-byte rows per quarter warp) from 1024 words (8192 outputs), else one word per subgroup and every lane its
// own rows of K; K split in up to 8 parts so that about 4096 subgroups run, each part at least as deep as the
// lanes that share a word. nullopt where it does not apply, or with SDGEN_GEMV=0 (measurements).
std::optional<GemmTile> chooseGemvTile(int64_t m, int64_t n, int64_t k, const DeviceInfo& device, bool fp16Weights);

// out = x W^T + b. x: [..., K] (rank 1..4), out: [..., N] with the same leading axes; the leading axes are
// batched into the rows of one GEMM.
GemmInfo linear(Context& ctx, CommandSequence& seq, const graph::Expr& x, const LinearWeights& weights,
                const graph::Sink& out, const LinearOptions& options = {});

struct MatmulOptions {
  bool transposeB = false;  // b is [B, N, K] (e.g. keys) instead of [B, K, N]
  std::optional<GemmTile> tile;  // as LinearOptions::tile
  Conv2dScratch* scratch = nullptr;  // matmulHalfB on tensor cores: split-K partials (null: no split-K)
  std::string label = "matmul";
};

// out[b] = a[b] x b[b] for every batch b. a: [B, M, K] or [M, K]; b: [B, K, N] (or [B, N, K] with
// transposeB), a batch of 1 or rank 2 broadcasts over a's batches; out: [B, M, N] (rank of a).
GemmInfo matmul(Context& ctx, CommandSequence& seq, const graph::Expr& a, const graph::Expr& b,
                const graph::Sink& out, const MatmulOptions& options = {});

// matmul with b a tensor: where it is dense fp16 [B, K, N] or [K, N] with N % 8 == 0, 16-byte aligned, and the
// device has tensor cores, b is read in the layout of packed fp16 weights ([K][N] per batch) by the
// cooperative-matrix kernel (split-K where options.scratch is given and the tiles do not fill the GPU);
// elsewhere as matmul(a, buffer(b)). Attention over heads too wide for the flash kernels (the VAE's 512) runs
// its two products this way: keys transposed and values stored once in fp16 (nn::Builder::attention).
GemmInfo matmulHalfB(Context& ctx, CommandSequence& seq, const graph::Expr& a, const graph::TensorView& b,
                     const graph::Sink& out, const MatmulOptions& options = {});

}  // namespace sdgen::ops
