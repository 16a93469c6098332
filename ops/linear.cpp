#include "ops/linear.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "engine/error.h"
#include "graph/expr_nodes.h"
#include "ops/conv2d_plan.h"
#include "ops/elementwise.h"
#include "ops/layer_norm_rows.h"
#include "ops/linear_gemm.h"

namespace sdgen::ops {

using namespace graph;

static Shape leading(const Shape& s) { return Shape(s.begin(), s.end() - 1); }

// A layer norm read while staging A is recomputed by every column tile: on the H100 that wins up to 5 tiles
// (64² attn2 q, N 320: 0.027 -> 0.022 ms) and loses from 10 (32² q, N 640: 0.025 -> 0.029; ff geglu 1.5x).
constexpr int64_t kFusedNormMaxColumnTiles = 5;
// ... and wherever the rows are so few that the GEMM is latency bound (kFusedNormMaxRows, linear.h).

bool stageLinearInput(const Expr& x, int64_t n, const DeviceInfo& device) {
  if (!useCpuGemmKernels(device)) return false;  // GPUs stage A in shared memory per tile: cheap to recompute
  const int64_t tiles = (n + 31) / 32;           // the lanes kernel's column tile (chooseGemmTile)
  const int64_t leaves = static_cast<int64_t>(tensorsRead(x).size());  // one per tensor leaf
  return (tiles - 1) * (leaves - 1) > 2;
}

std::optional<GemmTile> chooseGemvTile(int64_t m, int64_t n, int64_t k, const DeviceInfo& device, bool fp16Weights) {
  const char* env = std::getenv("SDGEN_GEMV");
  if ((env && std::string(env) == "0") || !fp16Weights || m < 1 || m > 8 || useCpuGemmKernels(device))
    return std::nullopt;
  const int sg = int(device.subgroupSize);
  if (sg < 4 || sg > 128 || (sg & (sg - 1)) || uint32_t(8 * sg) > device.maxWorkgroupInvocations) return std::nullopt;
  const int64_t words = (n + 7) / 8;
  const int wordLanes = words >= 1024 ? std::min(8, sg) : 1, kLanes = sg / wordLanes;
  const int64_t columns = (words + wordLanes - 1) / wordLanes;  // subgroups per part
  int parts = 1;
  while (parts < 8 && columns * parts < 4096 && k / (2 * parts) >= kLanes) parts *= 2;
  const GemmTile t = GemmTile::gemvTile(m <= 2 ? 2 : m <= 4 ? 4 : 8, sg, parts, wordLanes);
  if (t.sharedBytes() > device.sharedMemoryPerWorkgroup) return std::nullopt;
  return t;
}

int splitSumNormForm() {
  const char* v = std::getenv("SDGEN_SPLIT_SUM_NORM");
  return v && std::strcmp(v, "0") == 0 ? 0 : v && std::strcmp(v, "1") == 0 ? 1 : 2;
}
bool splitSumNormEnabled() { return splitSumNormForm() > 0; }

// LinearOptions::normOutput: its source is the tensor the sink writes, a dense [rows, N] of the product's rows (the
// sum launch re-reads what each lane stored), and its output a dense tensor of the same shape.
static void checkNormOutput(const LinearNormOutput& no, const Sink& out, int64_t rows, int64_t n,
                            const std::string& label) {
  const SinkNode* s = &out.node();
  while (s->kind == SinkKind::Map && s->children.size() == 1) s = &s->children[0].node();
  const TensorView& src = no.source;
  const bool plain = s->kind == SinkKind::Buffer && s->tensor.address == src.address &&
                     s->tensor.dtype == src.dtype && !src.isInt32 && src.dense() && !src.shape.empty() &&
                     src.shape.back() == n && numel(src.shape) == rows * n;
  if (!plain)
    throw Error(label + ": the layer norm of the output needs the output written whole into its source tensor " +
                shapeString(src.shape) + " (a buffer sink, optionally with an elementwise epilogue)");
  if (no.out.isInt32 || !no.out.dense() || no.out.shape != src.shape)
    throw Error(label + ": the layer norm's output must be a dense tensor of shape " + shapeString(src.shape) +
                ", got " + shapeString(no.out.shape));
}

GemmInfo linear(Context& ctx, CommandSequence& seq, const Expr& x, const LinearWeights& weights, const Sink& out,
                const LinearOptions& options) {
  const Shape& xs = x.shape();
  const Shape& os = out.shape();
  const std::string shapes = "input " + shapeString(xs) + ", weights [" + std::to_string(weights.outFeatures()) +
                             "," + std::to_string(weights.inFeatures()) + "], output " + shapeString(os);
  if (xs.back() != weights.inFeatures())
    throw Error(options.label + ": input features " + std::to_string(xs.back()) + " differ from the weights' " +
                std::to_string(weights.inFeatures()) + " (" + shapes + ")");
  const int64_t outWidth = options.gegluOutput ? weights.outFeatures() / 2 : weights.outFeatures();
  if (os.back() != outWidth || leading(os) != leading(xs))
    throw Error(options.label + ": output must be [..., " + std::to_string(outWidth) +
                "] with the input's leading axes (" + shapes + ")" + (options.gegluOutput ? " (GEGLU output)" : ""));
  // The leading axes of the rank-4 padded shape are the rows: row m sits at (m / (d1 d2), m / d2 % d1, m % d2).
  Shape p = pad4(xs);
  GemmProblem g;
  g.a = x;
  const int64_t m = p[0] * p[1] * p[2], n = weights.outFeatures(), k = weights.inFeatures();
  GemmTile tile = options.tile ? *options.tile : chooseGemmTile(m, n, k, ctx.info(), weights.storage() == DType::F16);
  if (!options.tile && !options.gegluOutput)
    if (std::optional<GemmTile> few = chooseGemvTile(m, n, k, ctx.info(), weights.storage() == DType::F16)) tile = *few;
  if (options.gegluOutput) {
    if (!tile.isCoop())
      throw Error(options.label + ": a GEGLU output needs the cooperative-matrix kernel (fp16 weights on a device "
                  "with tensor cores), " + tile.describe() + " was chosen");
    if (n % 8) throw Error(options.label + ": a GEGLU output needs an even number of 4-column blocks (N % 8 == 0)");
    if (tile.splitK > 1) throw Error(options.label + ": a GEGLU output cannot use split-K (a tail split it can)");
    if (!options.tile)
      if (std::optional<GemmTile> half = chooseShortKHalfTile(tile, m, n, k, ctx.info(), ctx.compiler().optimizerAvailable()))
        tile = *half;
    if (!options.tile && options.scratch)
      if (std::optional<GemmTile> tail = chooseTailSplit(tile, m, n, k, ctx.info())) tile = *tail;
  } else if (!options.tile && tile.isCoop() && options.scratch && n % 4 == 0) {
    tile.splitK = chooseSplitK(tile, m, n, k, 1);
    if (std::optional<GemmTile> balanced = chooseWaveSplit(tile, m, n, k, ctx.info())) tile = *balanced;
    else if (std::optional<GemmTile> wave = chooseOneWaveTile(tile, m, n, k, ctx.info(), ctx.compiler().optimizerAvailable()))
      tile = chooseWaveSplitHalfTile(*wave, m, n, k, ctx.info(), ctx.compiler().optimizerAvailable()).value_or(*wave);
    else if (std::optional<GemmTile> half = chooseShortKHalfTile(tile, m, n, k, ctx.info(), ctx.compiler().optimizerAvailable()))
      tile = *half;
    if (std::optional<GemmTile> half = chooseSplitHalfTile(tile, m, n, k, ctx.info(), ctx.compiler().optimizerAvailable()))
      tile = *half;
    if (std::optional<GemmTile> wide = chooseWideHalfTile(tile, m, n, k, ctx.info(), ctx.compiler().optimizerAvailable()))
      tile = *wide;
    if (std::optional<GemmTile> large = chooseLargeCoopTile(m, n, k, ctx.info(), ctx.compiler().optimizerAvailable()))
      tile = *large;
    if (std::optional<GemmTile> tail = chooseTailSplit(tile, m, n, k, ctx.info())) tile = *tail;
  }
  // Tensor cores: a layer norm of a raw fp16 input is read while staging A where at most 5 column tiles
  // normalize each element again, or where the rows are few (measured, docs/dispatch.md); any other input that
  // is not a raw fp16 matrix is computed once into fp16 scratch (so is a tail split's: it reads a plain A, and the
  // split fp16-accumulator tile's: one workgroup per SM, its A staging is its bound; 0.0472 against 0.0367 + the
  // norm launch's ~0.005 ms on SDXL's 32^2 attn2 q, session 38; and the wide fp16-accumulator tiles', 256 rows too).
  const bool splitHalf = tile.f16Accumulators && (tile.splitK > 1 || (tile.bm == 256 && tile.bn < 256));
  if (tile.isCoop() && options.fuseNorm && tile.tailParts <= 1 && !splitHalf &&
      ((n + tile.bn - 1) / tile.bn <= kFusedNormMaxColumnTiles || m <= kFusedNormMaxRows) && rawHalfRowStride(x, k) == 0)
    g.norm = rowNormOf(x, k);
  const bool stageHalf = options.scratch && tile.isCoop() && k % 8 == 0 && rawHalfRowStride(x, k) == 0 && !g.norm;
  const bool stage = options.scratch && !options.tile && !stageHalf && stageLinearInput(x, n, ctx.info());
  if (stage || stageHalf) {
    // fp32 like the fused evaluation (CPU rule), fp16 where the kernel rounds A to fp16: no result changes.
    const DType dt = stageHalf ? DType::F16 : DType::F32;
    const Allocation& mem = options.scratch->acquire(uint64_t(numel(xs)) * dtypeSize(dt));
    TensorView staged = view(mem, dt, xs);
    elementwise(ctx, seq, x, bufferSink(staged), {.label = options.label + " input"});
    g.a = buffer(staged);
  }
  g.packed = PackedB::of(weights);
  g.out = out;
  g.m = m;
  g.n = n;
  g.k = k;
  g.d1 = p[1];
  g.d2 = p[2];
  g.label = options.label;
  g.tile = tile;
  g.scratch = options.scratch;
  g.geglu = options.gegluOutput;
  if (options.normOutput) {
    checkNormOutput(*options.normOutput, out, m, n, options.label);
    if (splitSumNormEnabled()) g.normOutput = &*options.normOutput;
  }
  GemmInfo info = recordGemm(ctx, seq, g);
  info.stagedInput = stage || stageHalf;
  if (options.normOutput && !info.normInSum) {
    const LinearNormOutput& no = *options.normOutput;
    layerNormRows(ctx, seq, buffer(no.source), no.gamma, no.beta, no.eps, no.out, no.label);
  }
  return info;
}

// The batched product as a GEMM problem, shapes checked (a: [B, M, K] or [M, K]; b: [B, K, N], [K, N], or
// [B, N, K] / [N, K] with transposeB).
static GemmProblem matmulProblem(const Expr& a, const Expr& b, const Sink& out, const MatmulOptions& options) {
  const Shape& as = a.shape();
  const Shape& os = out.shape();
  Expr bk = b;  // B as [.., K, N]
  if (options.transposeB && b.shape().size() >= 2) {
    int r = static_cast<int>(b.shape().size());
    bk = transpose(b, r - 2, r - 1);
  }
  const Shape& bs = bk.shape();
  const std::string shapes = "a " + shapeString(as) + ", b " + shapeString(b.shape()) +
                             (options.transposeB ? " (transposed)" : "") + ", output " + shapeString(os);
  auto fail = [&](const std::string& why) { throw Error(options.label + ": " + why + " (" + shapes + ")"); };
  if (as.size() < 2 || as.size() > 3) fail("a must be [M, K] or [B, M, K]");
  if (bs.size() < 2 || bs.size() > 3) fail("b must be [K, N] or [B, K, N]");
  if (bs.size() > as.size()) fail("b has batches but a does not");
  const int64_t batches = as.size() == 3 ? as[0] : 1, m = as[as.size() - 2], k = as.back();
  const int64_t n = bs.back();
  if (bs[bs.size() - 2] != k) fail("inner dimensions differ");
  if (bs.size() == 3 && bs[0] != batches && bs[0] != 1) fail("batch counts differ");
  Shape want = as.size() == 3 ? Shape{batches, m, n} : Shape{m, n};
  if (os != want) fail("output must be " + shapeString(want));

  GemmProblem g;
  g.a = a;
  g.b = broadcast(bk, as.size() == 3 ? Shape{batches, k, n} : Shape{k, n});
  g.out = out;
  g.m = m;
  g.n = n;
  g.k = k;
  g.batches = batches;
  g.d1 = batches;  // a [B, M, K] is [1, B, M, K] in the kernel: row batch * M + r -> (0, batch, r)
  g.d2 = m;
  g.label = options.label;
  g.tile = options.tile;
  return g;
}

GemmInfo matmul(Context& ctx, CommandSequence& seq, const Expr& a, const Expr& b, const Sink& out,
                const MatmulOptions& options) {
  return recordGemm(ctx, seq, matmulProblem(a, b, out, options));
}

GemmInfo matmulHalfB(Context& ctx, CommandSequence& seq, const Expr& a, const TensorView& b, const Sink& out,
                     const MatmulOptions& options) {
  if (options.transposeB) throw Error(options.label + ": matmulHalfB takes B as [.., K, N], not transposed");
  GemmProblem g = matmulProblem(a, buffer(b), out, options);
  const bool packable = !b.isInt32 && b.dtype == DType::F16 && b.dense() && b.address % 16 == 0 && g.n % 8 == 0;
  const GemmTile tile = options.tile ? *options.tile : chooseGemmTile(g.m, g.n, g.k, ctx.info(), packable);
  if (!packable || !tile.isCoop()) return recordGemm(ctx, seq, g);  // B read as an expression
  // B in the layout of packed fp16 weights ([K][NP], NP = N): the tensor-core kernel reads it as weights, one
  // matrix per batch (or one for all: a [K, N] or [1, K, N] b).
  g.packed = PackedB{b.address, 0, g.n, DType::F16, rangesOf({b})};
  g.bBatchStride = b.shape.size() == 3 && b.shape[0] > 1 ? g.k * g.n : 0;
  g.b = Expr();
  g.tile = tile;
  if (!options.tile && options.scratch && g.n % 4 == 0) g.tile->splitK = chooseSplitK(tile, g.m, g.n, g.k, g.batches);
  g.scratch = options.scratch;
  return recordGemm(ctx, seq, g);
}

}  // namespace sdgen::ops
