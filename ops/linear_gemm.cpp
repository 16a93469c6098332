#include "ops/linear_gemm.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "engine/error.h"
#include "engine/param_block.h"
#include "graph/expr_codegen.h"
#include "graph/expr_nodes.h"
#include "ops/conv2d_plan.h"
#include "ops/elementwise.h"
#include "ops/layer_norm_rows.h"

namespace sdgen::ops {

using namespace graph;

static constexpr int kHeaderWords = 32;  // shaders/linear/gemm.slang kGemmHeaderWords

PackedB PackedB::of(const LinearWeights& w) {
  return PackedB{w.weightAddress(), w.biasAddress(), w.paddedOut(), w.storage(), w.ranges()};
}

int64_t rawHalfRowStride(const Expr& a, int64_t k) {
  if (a.node().kind != ExprKind::Buffer || k % 8) return 0;
  const TensorView& t = a.node().tensor;
  if (t.isInt32 || t.dtype != DType::F16 || t.address % 16 || t.shape.empty() || t.strides.back() != 1) return 0;
  int64_t rowStride = 0, span = 1;  // the stride of one row, and of the rows inside the current axis
  for (size_t i = t.shape.size() - 1; i-- > 0;) {
    if (t.shape[i] == 1) continue;
    if (rowStride == 0) rowStride = t.strides[i];
    else if (t.strides[i] != rowStride * span) return 0;
    span *= t.shape[i];
  }
  if (rowStride == 0) rowStride = ((k + 7) / 8) * 8;  // a single row
  return rowStride % 8 == 0 && rowStride >= k ? rowStride : 0;
}

std::string GemmTile::describe() const {
  const std::string shape = std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk);
  if (isLanes()) return "lanes " + std::to_string(lanes) + "x" + std::to_string(rowsPerLane) + " " + shape;
  if (isGemv())
    return "gemv " + std::to_string(bm) + " rows, " + std::to_string(gemvLanes) + " lanes, " +
           std::to_string(gemvWordLanes) + " words, K in " + std::to_string(gemvParts);
  if (isCoop())
    return "coop " + shape + " warp " + std::to_string(16 * warpRows) + "x" + std::to_string(16 * warpCols) +
           (halfAccumulate ? " acc16" : "") + (f16Accumulators ? " f16acc" : "") +
           (flushK > 0 ? " flush " + std::to_string(flushK) : "") + (doubleBuffer ? " dbuf" : "") +
           (splitK > 1 ? " split " + std::to_string(splitK) : "") +
           (tailParts > 1 ? " tail " + std::to_string(tailStart) + " split " + std::to_string(tailParts) : "") +
           (haloConv ? " halo" : "") + (haloWinograd ? "-f23" : "") + (spirvOpt ? " opt" : "") +
           (fixedShape ? " fixed" : "") + (coopEmulation ? " emulated" : "");
  return "tiled " + shape;
}

bool gemmCoopSupported(const DeviceInfo& info) {
  return info.coopMatrixKHR && info.hasCoopMatrix(16, 16, 16, "f16", "f32") && info.subgroupSize == 32 &&
         GemmTile::coopTile(64, 64, 32, 2, 2).sharedBytes() <= info.sharedMemoryPerWorkgroup;
}

std::string coopTileProblem(const GemmTile& t, const DeviceInfo& info) {
  if (t.bm <= 0 || t.bn <= 0 || t.bk <= 0 || t.warpRows <= 0 || t.warpCols <= 0 || t.bm % (16 * t.warpRows) ||
      t.bn % (16 * t.warpCols) || t.bk % 16)
    return "BM must be a multiple of 16 x warp rows, BN of 16 x warp columns, BK of 16";
  // The emulation's own scratch (shaders/coop_emulation.slang): 2 x 256 + 32 floats.
  const uint32_t shared = t.sharedBytes() + (t.coopEmulation ? 4 * (2 * 256 + 32) : 0);
  if (shared > info.sharedMemoryPerWorkgroup)
    return "it needs " + std::to_string(shared) + " bytes of shared memory, the device allows " +
           std::to_string(info.sharedMemoryPerWorkgroup);
  if (t.coopEmulation && t.subgroups() != 1) return "the emulation takes one subgroup per workgroup";
  if (uint32_t(t.threads()) > info.maxWorkgroupInvocations)
    return "it needs " + std::to_string(t.threads()) + " invocations, the device allows " +
           std::to_string(info.maxWorkgroupInvocations);
  if ((t.halfAccumulate || t.f16Accumulators) && !t.coopEmulation && !info.hasCoopMatrix(16, 16, 16, "f16", "f16"))
    return "fp16 accumulation needs the 16x16x16 f16 x f16 -> f16 shape";
  if (t.splitK < 1 || t.splitK > 64) return "split-K must be 1 to 64 parts";
  if (t.flushK < 0 || (t.flushK > 0 && (!t.f16Accumulators || t.flushK % t.bk || t.splitK > 1 || t.doubleBuffer)))
    return "a flush interval needs fp16 accumulators, a multiple of BK, no split-K and one shared slice";
  if (t.haloConv && (t.bm % 16 || (t.bk != 32 && t.bk != 16) || t.tailParts > 1 || t.doubleBuffer ||
                     t.halfAccumulate || t.fixedShape || (t.flushK > 0 && t.flushK % (9 * t.bk))))
    return "the halo convolution tile needs BK 32 (or 16: 3 taps per step), no tail split, double buffer, fp16 "
           "slice sums or fixed shape, and a flush interval of whole channel slices (a multiple of 9 x BK)";
  if (t.haloWinograd && (!t.haloConv || t.bk != 16 || t.warpRows % 2 || t.splitK > 1 || t.flushK > 0))
    return "the halo tile with Winograd F(2,3) needs BK 16, pairs of fragment rows (even warp rows), no split-K and "
           "no flush interval";
  if (t.tailParts < 0 || t.tailParts > 64 ||
      (t.tailParts > 1 && (t.splitK > 1 || t.flushK > 0 || t.tailStart <= 0 || t.tailStart % t.bn)))
    return "a tail split needs 2 to 64 parts, no split-K, no flush interval and a tail start that is a positive "
           "multiple of BN";
  return {};
}

static constexpr int kReduceThreads = 256;  // gemmSplitReduceMain's workgroup

std::string gemmWrapperSource(const GemmInfo& info, const GemmTile& tile, bool bias, bool geglu) {
  auto flag = [](bool b) { return b ? "1" : "0"; };
  if (tile.isCoop())
    return "import sdgen;\nimport expr;\nimport linear.gemm;\nimport linear.gemm_coop;\n" + info.headerSource +
           "typealias A = " + info.aType + ";\ntypealias S = " + info.sinkType + ";\ntypealias H = " +
           info.headerType + ";\n[shader(\"compute\")]\n[numthreads(" + std::to_string(tile.threads()) +
           ", 1, 1)]\nvoid main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n"
           "  gemmCoopMain<A, S, H, " + flag(info.vectorA) + ", " + std::to_string(info.aMode) + ", " + flag(info.vectorOut) + ", " +
           flag(bias) + ", " +
           std::to_string(tile.bm) + ", " + std::to_string(tile.bn) + ", " + std::to_string(tile.bk) + ", " +
           std::to_string(tile.warpRows) + ", " + std::to_string(tile.warpCols) + ", " +
           std::string(tile.f16Accumulators ? (tile.flushK > 0 ? "3" : "2") : tile.halfAccumulate ? "1" : "0") + ", " +
           std::string(tile.tailParts > 1 ? (info.halfPartials ? "3" : "4")
                       : tile.splitK <= 1 ? "0" : info.fusedSplitSum ? "5" : info.halfPartials ? "2" : "1") +
           ", " + flag(geglu) + ", " + flag(tile.doubleBuffer) + ", " + std::to_string(tile.coopSharedWords()) +
           ", " + flag(info.edgeChecks) + ">(group, local);\n}\n";
  if (tile.isGemv())
    return "import sdgen;\nimport expr;\nimport linear.gemm;\nimport linear.gemv;\n"
           "typealias A = " + info.aType + ";\ntypealias S = " + info.sinkType +
           ";\n[shader(\"compute\")]\n[numthreads(" + std::to_string(tile.threads()) +
           ", 1, 1)]\nvoid main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n"
           "  gemvMain<A, S, " + flag(info.vectorOut) + ", " + flag(bias) + ", " + std::to_string(tile.bm) + ", " +
           std::to_string(tile.gemvParts) + ", " + std::to_string(tile.gemvLanes) + ", " +
           std::to_string(tile.gemvWordLanes) + ">(group, local);\n}\n";
  if (tile.isLanes())
    return "import sdgen;\nimport expr;\nimport linear.gemm;\n"
           "typealias A = " + info.aType + ";\ntypealias B = " + info.bType + ";\ntypealias S = " + info.sinkType +
           ";\n[shader(\"compute\")]\n[numthreads(" + std::to_string(tile.lanes) +
           ", 1, 1)]\nvoid main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n"
           "  gemmLanesMain<A, B, S, " + flag(info.vectorA) + ", " + flag(info.vectorOut) + ", " + flag(bias) + ", " +
           std::to_string(tile.lanes) + ", " + std::to_string(tile.rowsPerLane) + ", " + std::to_string(tile.bn / 32) +
           ">(group, local);\n}\n";
  return "import sdgen;\nimport expr;\nimport linear.gemm;\n"
         "typealias A = " + info.aType + ";\ntypealias B = " + info.bType + ";\ntypealias S = " + info.sinkType +
         ";\n[shader(\"compute\")]\n[numthreads(" + std::to_string((info.tileM / 4) * (info.tileN / 4)) +
         ", 1, 1)]\nvoid main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n"
         "  gemmMain<A, B, S, " + flag(info.vectorA) + ", " + flag(info.vectorOut) + ", " + flag(bias) + ", " +
         std::to_string(info.tileM) + ", " + std::to_string(info.tileN) + ", " + std::to_string(info.tileK) +
         ">(group, local);\n}\n";
}

// The split-K sum: the partials of every part (tail: of the tail's columns), plus bias, through the GEMM's own
// sink (GEGLU: value * gelu(gate)).
std::string gemmSplitSumSource(const GemmInfo& info, bool bias, bool geglu, bool tail) {
  return "import sdgen;\nimport expr;\nimport linear.gemm;\nimport linear.gemm_split;\ntypealias S = " +
         info.sinkType + ";\n[shader(\"compute\")]\n[numthreads(" + std::to_string(kReduceThreads) +
         ", 1, 1)]\nvoid main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n"
         "  gemmSplitReduceMain<S, " + std::string(info.vectorOut ? "1" : "0") + ", " + (bias ? "1" : "0") + ", " +
         std::to_string(kReduceThreads) + ", " + (info.halfPartials ? "1" : "0") + ", " + (geglu ? "1" : "0") + ", " +
         (tail ? "1" : "0") + ">(group, local);\n}\n";
}

// A residual add the tensor-core kernel can take into its accumulators (header words 26-27): the sink is
// residualAdd(child, r) — map(kernelOutput + r) — with r a dense, 16-byte-aligned fp16 tensor whose rows are the
// GEMM's rows in order ([rows / (d1 d2), d1, d2, N] with rows = batches * M). Returns r, or nothing.
static std::optional<TensorView> residualOperand(const GemmProblem& p) {
  const SinkNode& s = p.out.node();
  if (s.kind != SinkKind::Map || p.geglu) return std::nullopt;
  const ExprNode& e = s.epilogue.node();
  if (e.kind != ExprKind::Binary || e.op != int(BinaryOp::Add)) return std::nullopt;
  const Expr* r = nullptr;
  if (e.children[0].node().kind == ExprKind::KernelOutput) r = &e.children[1];
  else if (e.children[1].node().kind == ExprKind::KernelOutput) r = &e.children[0];
  if (!r || r->node().kind != ExprKind::Buffer) return std::nullopt;
  const TensorView& t = r->node().tensor;
  const int64_t rows = p.batches * p.m;
  if (t.isInt32 || t.dtype != DType::F16 || !t.dense() || t.address % 16 || p.d1 <= 0 || p.d2 <= 0 ||
      rows % (p.d1 * p.d2) || pad4(t.shape) != Shape{rows / (p.d1 * p.d2), p.d1, p.d2, p.n})
    return std::nullopt;
  return t;
}

// Split-K partials in fp16 where every tensor the GEMM writes is fp16: half the bytes the parts write and the sum
// launch reads, and a rounding of the order of the output's own (H200, session 30: UNet step GPU time 11.94 ->
// 11.86 ms, its parity vs torch fp32 1.52e-3 -> 1.45e-3; docs/perf.md). SDGEN_SPLIT_PARTIALS=f32 keeps fp32
// partials (measurements).
static bool halfSplitPartials(const Sink& out) {
  const char* v = std::getenv("SDGEN_SPLIT_PARTIALS");
  if (v && std::strcmp(v, "f32") == 0) return false;
  const std::vector<TensorView> written = tensorsWritten(out);
  return !written.empty() && std::all_of(written.begin(), written.end(), [](const TensorView& t) {
    return !t.isInt32 && t.dtype == DType::F16;
  });
}

// SDGEN_SPLIT_FUSED_SUM=1: split-K's fp16 partials summed by each tile's last part (GemmInfo::fusedSplitSum).
static bool fusedSplitSumKnob() {
  const char* v = std::getenv("SDGEN_SPLIT_FUSED_SUM");
  return v && std::strcmp(v, "1") == 0;
}

// SDGEN_GEMM_RESIDUAL=0: residual adds stay in the sink (measurements).
static bool residualPreloadEnabled() {
  const char* v = std::getenv("SDGEN_GEMM_RESIDUAL");
  return !v || std::strcmp(v, "0") != 0;
}

// SDGEN_GEMM_FIXED_SHAPE=1: every tensor-core GEMM with its shape words compiled in (GemmTile::fixedShape; a
// measurement knob, docs/perf.md session 40).
static bool fixedShapeKnob() {
  const char* v = std::getenv("SDGEN_GEMM_FIXED_SHAPE");
  return v && std::strcmp(v, "1") == 0;
}

void fixHeaderWords(GemmInfo& info, std::span<const uint32_t> header) {
  if (header.size() < size_t(kHeaderWords))
    throw Error("gemm: internal error: a header of " + std::to_string(header.size()) + " words");
  std::vector<int> words = {0, 1, 2, 5, 8, 11, 14, 15};
  if (info.aMode != 3)
    for (int i = 16; i < 24; ++i) words.push_back(i);
  std::string cases;
  for (int i : words)
    cases += "    case " + std::to_string(i) + ": return int(" + std::to_string(header[size_t(i)]) + "u);\n";
  info.headerType = "FixedHeader";
  info.headerSource = "struct FixedHeader : IGemmHeader {\n  [ForceInline] static int word(int i) {\n    switch (i) {\n" +
                      cases + "    default: return paramI32(i);\n    }\n  }\n}\n";
}

std::string gemmSplitNormSource(const GemmInfo& info, bool bias, const std::string& xType, const std::string& gType,
                                const std::string& bType, DType outType, LayerNormRowsLayout layout, uint32_t outWord,
                                uint32_t epsWord, int rowThreads) {
  const std::string shape = rowThreads > 0 ? std::to_string(rowThreads) + ", "
                                           : std::to_string(layout.rows) + ", " + std::to_string(layout.quadsPerLane) + ", ";
  return "import sdgen;\nimport expr;\nimport linear.gemm;\nimport linear.gemm_split;\ntypealias S = " +
         info.sinkType + ";\ntypealias X = " + xType + ";\ntypealias G = " + gType + ";\ntypealias Bt = " + bType +
         ";\n[shader(\"compute\")]\n[numthreads(" + std::to_string(rowThreads > 0 ? rowThreads : 256) + ", 1, 1)]\n"
         "void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n  " +
         (rowThreads > 0 ? "gemmSplitNormRowMain" : "gemmSplitNormMain") + "<S, X, G, Bt, " +
         std::string(outType == DType::F16 ? "F16Storage" : "F32Storage") + ", " + (info.vectorOut ? "1" : "0") + ", " +
         (bias ? "1" : "0") + ", " + (info.halfPartials ? "1" : "0") + ", " + shape + std::to_string(outWord) + ", " +
         std::to_string(epsWord) + ">(group, local);\n}\n";
}

// The invocations of gemmSplitNormRowMain's workgroup for rows of n: one per quad, rounded up to 32; 0 where the
// device cannot run it (more than 1024 or its limit, subgroups under 4 wide: its shared sums hold 256 subgroups).
static int splitNormRowThreads(const DeviceInfo& info, int64_t n) {
  const int64_t threads = (n / 4 + 31) / 32 * 32;
  const uint32_t smallest = info.minSubgroupSize ? info.minSubgroupSize : info.subgroupSize;
  if (threads > 1024 || uint32_t(threads) > info.maxWorkgroupInvocations || smallest < 4) return 0;
  return int(threads);
}

// The split-K sum that also writes the layer norm of the stored rows (gemmSplitNormMain): the GEMM's header and
// sink words, then the norm's source, gamma and beta expressions, its output address and eps.
static void recordSplitSumNorm(Context& ctx, CommandSequence& seq, const GemmInfo& info, const ParamBlock& gemmParams,
                               bool bias, const LinearNormOutput& no, LayerNormRowsLayout layout, int rowThreads,
                               int64_t rows, int64_t n, std::vector<MemRange> reads, std::vector<MemRange> writes,
                               const std::string& label) {
  ParamBlock params = gemmParams;
  ExprCodegen gen(params, {true, false});
  const std::string xType = gen.emit(reshape(buffer(no.source), {rows, 1, 1, n}));
  const std::string gType = gen.emit(reshape(no.gamma, {1, 1, 1, n}));
  const std::string bType = gen.emit(reshape(no.beta, {1, 1, 1, n}));
  const uint32_t outWord = uint32_t(params.size());
  params.address(no.out.address);
  const uint32_t epsWord = uint32_t(params.size());
  params.f32(no.eps);
  KernelSource src;
  src.generated = gemmSplitNormSource(info, bias, xType, gType, bType, no.out.dtype, layout, outWord, epsWord,
                                      rowThreads);
  src.label = label;
  for (const MemRange& r : rangesOf(tensorsRead({no.gamma, no.beta}))) reads.push_back(r);
  writes.push_back(rangesOf({no.out})[0]);
  const int64_t workgroups = rowThreads > 0 ? rows : (rows + layout.rows - 1) / layout.rows;
  const std::array<uint32_t, 3> groups{uint32_t(std::min<int64_t>(workgroups, 65535)),
                                       uint32_t((workgroups + 65534) / 65535), 1};
  seq.dispatch(ctx.kernels().request(src), groups, params, reads, writes, label);
}

DivisionMagic divisionMagic(int64_t d) {
  if (d < 1 || d >= (int64_t(1) << 31)) throw Error("gemm: internal error: a row divisor of " + std::to_string(d));
  const uint32_t l = uint32_t(std::bit_width(uint64_t(d - 1)));  // ceil(log2 d)
  const uint32_t s = 31 + l;
  const uint64_t m = ((uint64_t(1) << s) + d - 1) / d;  // < 2^32 since d > 2^(l - 1)
  return {uint32_t(m), s};
}

GemmInfo recordGemm(Context& ctx, CommandSequence& seq, const GemmProblem& p) {
  // Offsets and coordinates are 32-bit in the kernel. A convolution's im2col A is never stored: its offsets
  // are those of the input tensor (a 1024^2 VAE decode has M x K = 2.4e9 but 2.7e8 input elements).
  const int64_t limit = int64_t(1) << 31;
  const int64_t aElements = p.conv ? (p.m / std::max<int64_t>(p.conv->ho * p.conv->wo, 1)) * p.conv->h * p.conv->w *
                                         p.conv->cin
                                   : p.batches * p.m * p.k;
  if (aElements >= limit || p.batches * p.m * p.n >= limit || p.k * p.n >= limit)
    throw Error(p.label + ": tensors over 2^31 elements are not supported (M " + std::to_string(p.m) + ", N " +
                std::to_string(p.n) + ", K " + std::to_string(p.k) + ", batches " + std::to_string(p.batches) + ")");
  const bool fp16Weights = p.packed && p.packed->storage == DType::F16;
  GemmTile tile = p.tile ? *p.tile : chooseGemmTile(p.m, p.n, p.k, ctx.info(), fp16Weights);
  if (tile.isCoop() && fixedShapeKnob()) tile.fixedShape = true;
  if (tile.isCoop()) {
    if (!gemmCoopSupported(ctx.info()) && !tile.coopEmulation)
      throw Error(p.label + ": the cooperative-matrix GEMM needs a device with 16x16x16 f16 x f16 -> f32 "
                  "subgroup matrices and 32-wide subgroups");
    if (!fp16Weights)
      throw Error(p.label + ": the cooperative-matrix GEMM needs packed fp16 weights (a linear layer stored in "
                  "fp16, not a matmul of two expressions)");
    const std::string why = coopTileProblem(tile, ctx.info());
    if (!why.empty()) throw Error(p.label + ": cooperative-matrix tile " + tile.describe() + ": " + why);
    if (p.packed->np % 8) throw Error(p.label + ": packed weight rows must be a multiple of 8");
  }
  if (tile.isGemv()) {
    const int parts = tile.gemvParts;
    if (!fp16Weights || p.conv || p.winograd || p.norm || p.geglu || p.bBatchStride || tile.splitK > 1)
      throw Error(p.label + ": the few-row kernel takes packed fp16 weights and a plain product (no convolution, "
                  "fused norm, GEGLU, per-batch B or split-K)");
    const bool rows = tile.bm == 2 || tile.bm == 4 || tile.bm == 8;
    const bool split = parts == 1 || parts == 2 || parts == 4 || parts == 8;
    const int wl = tile.gemvWordLanes;
    const bool words = (wl == 1 || wl == 2 || wl == 4 || wl == 8) && wl <= tile.gemvLanes;
    if (p.m > tile.bm || !rows || !split || !words || tile.bn != 64 * wl / parts)
      throw Error(p.label + ": few-row tile " + tile.describe() + " cannot take " + std::to_string(p.m) + " rows");
    if (uint32_t(tile.gemvLanes) != ctx.info().subgroupSize)
      throw Error(p.label + ": few-row tile " + tile.describe() + " on a device with " +
                  std::to_string(ctx.info().subgroupSize) + "-wide subgroups");
    if (p.packed->np % 8) throw Error(p.label + ": packed weight rows must be a multiple of 8");
  }
  if (p.geglu && (!tile.isCoop() || p.n % 8 || tile.splitK > 1))
    throw Error(p.label + ": internal error: a GEGLU output needs the cooperative-matrix kernel, N % 8 == 0 and no "
                "split-K");
  const int64_t splits = tile.splitK;
  const bool tail = tile.tailParts > 1;  // the tail split (gemm_coop.slang SPLIT 3/4)
  if (tail) {
    if (!tile.isCoop() || splits > 1) throw Error(p.label + ": a tail split needs the unsplit cooperative-matrix kernel");
    if (!p.scratch) throw Error(p.label + ": a tail split needs scratch memory for its partials");
    if (p.batches != 1 || p.conv || p.winograd || p.norm || p.bBatchStride)
      throw Error(p.label + ": a tail split takes one batch and a plain A (no convolution, fused norm or per-batch B)");
    if (tile.tailStart <= 0 || tile.tailStart >= p.n || tile.tailStart % tile.bn || (p.n - tile.tailStart) % (p.geglu ? 8 : 4))
      throw Error(p.label + ": tail split from column " + std::to_string(tile.tailStart) + " of N " +
                  std::to_string(p.n) + ": the start must be a multiple of the tile's " + std::to_string(tile.bn) +
                  " below N, the tail's width a multiple of " + (p.geglu ? "8" : "4"));
    if (tile.tailParts * p.m * (p.n - tile.tailStart) >= limit)
      throw Error(p.label + ": tail split partials over 2^31 elements");
  }
  if (splits > 1) {
    if (!tile.isCoop()) throw Error(p.label + ": split-K needs the cooperative-matrix kernel");
    if (!p.scratch) throw Error(p.label + ": split-K needs scratch memory for its partials");
    if (p.n % 4) throw Error(p.label + ": split-K needs N % 4 == 0 (N " + std::to_string(p.n) + ")");
    if (p.batches * splits * p.m * p.n >= limit)
      throw Error(p.label + ": split-K partials over 2^31 elements (" + std::to_string(splits) + " parts)");
  }
  GemmInfo info;
  info.tileM = tile.bm;
  info.tileN = tile.bn;
  info.tileK = tile.bk;
  info.lanes = tile.lanes;
  info.rowsPerLane = tile.rowsPerLane;
  info.coopMatrix = tile.isCoop();
  info.kernel = tile.describe();
  info.vectorA = p.k % 4 == 0;
  info.vectorB = !p.packed && p.n % 4 == 0;
  info.vectorOut = (p.geglu ? p.n / 2 : p.n) % 4 == 0;
  info.splitK = int(splits);
  info.halfPartials = (splits > 1 || tail) && halfSplitPartials(p.out);
  // (p.normOutput: the split sum that also writes the layer norm stays a launch of its own)
  info.fusedSplitSum = splits > 1 && !tail && info.halfPartials && tile.isCoop() && !p.geglu && !p.normOutput &&
                       !p.rowsOutput && p.n % 4 == 0 && fusedSplitSumKnob();
  // Whole tiles only (M, N, K multiples of the tile; split-K parts are whole slices): the kernel drops its
  // bounds checks (EDGE 0).
  info.edgeChecks = !(tile.isCoop() && p.m % tile.bm == 0 && p.n % tile.bn == 0 && p.k % tile.bk == 0 &&
                      (!p.packed || p.packed->np >= p.n));
  info.groups = {uint32_t((p.n + tile.bn - 1) / tile.bn), uint32_t((p.m + tile.bm - 1) / tile.bm),
                 uint32_t(p.batches * splits)};
  if (p.rowsOutput)  // A_MODE 9: group.x = 8 * column tile + product (a block's products are consecutive)
    info.groups = {uint32_t(p.batches * ((p.n + tile.bn - 1) / tile.bn)), uint32_t((p.m + tile.bm - 1) / tile.bm), 1};
  if (tail) {  // one row of workgroups: the whole-K tiles, then every part of every tail tile
    const int64_t rowTiles = (p.m + tile.bm - 1) / tile.bm, wholeCols = tile.tailStart / tile.bn;
    const int64_t tailCols = (p.n + tile.bn - 1) / tile.bn - wholeCols;
    info.groups = {uint32_t(std::min<int64_t>((wholeCols + tailCols * tile.tailParts) * rowTiles, limit - 1)), 1, 1};
  }
  for (int i = 0; i < 3; ++i)
    if (info.groups[i] > ctx.info().maxWorkgroupCount[i])
      throw Error(p.label + ": grid axis " + std::to_string(i) + " needs " + std::to_string(info.groups[i]) +
                  " workgroups, the device allows " + std::to_string(ctx.info().maxWorkgroupCount[i]));

  // Split-K: each part covers `chunk` elements of K (whole slices); the partials are [batches][S][M][N] (tail
  // split: [S][M][N - tailStart]), fp16 or fp32.
  const int64_t parts = tail ? tile.tailParts : splits;
  // The halo tile splits its input channels instead (whole channel slices, all 9 taps each; gemm_coop.slang A_MODE 6).
  const int64_t splitDepth = tile.haloConv && p.conv ? p.conv->cin : p.k;
  const int64_t chunk = ((splitDepth + tile.bk - 1) / tile.bk + parts - 1) / parts * tile.bk;
  const int64_t partialWidth = tail ? p.n - tile.tailStart : p.n;
  MemRange partials{};
  if (splits > 1 || tail) {
    const uint64_t bytes = uint64_t(p.batches * parts * p.m * partialWidth) * (info.halfPartials ? 2 : 4);
    partials = range(p.scratch->acquire(bytes, Conv2dScratch::Slot::Partials), 0, bytes);
  }
  // fp16 accumulation in chunks (ACC 3): every chunk but the last as fp16 [chunk][batches][M to BM][N to BN],
  // in the same slot.
  const bool flushing = tile.isCoop() && tile.flushK > 0 && p.k > tile.flushK;
  if (flushing) {
    if (!p.scratch) throw Error(p.label + ": fp16 accumulation in chunks needs scratch memory for its total");
    const uint64_t planes = uint64_t((p.k + tile.flushK - 1) / tile.flushK - 1);
    const uint64_t bytes = planes * uint64_t(p.batches) * uint64_t((p.m + tile.bm - 1) / tile.bm * tile.bm) *
                           uint64_t((p.n + tile.bn - 1) / tile.bn * tile.bn) * 2;
    if (bytes / 2 >= uint64_t(limit))
      throw Error(p.label + ": fp16 accumulation in chunks: " + std::to_string(planes) + " chunk planes exceed 2^31 "
                  "elements (raise the flush interval)");
    partials = range(p.scratch->acquire(bytes, Conv2dScratch::Slot::Partials), 0, bytes);
  }
  ParamBlock params;
  params.u32(uint32_t(p.m)).u32(uint32_t(p.n)).u32(uint32_t(p.k)).u32(uint32_t(p.d1)).u32(uint32_t(p.d2));
  params.u32(uint32_t(splits > 1 || tail ? parts : 0));
  params.address(p.packed ? p.packed->weight : 0);
  params.u32(uint32_t(p.packed ? p.packed->np : 0));
  params.address(p.packed ? p.packed->bias : 0);
  params.u32(uint32_t(splits > 1 || tail ? chunk : tile.isCoop() && tile.f16Accumulators ? tile.flushK : 0));
  // The tensor-core kernel reads a plain fp16 A through a hoisted row address (no expression in its K loop),
  // or a convolution's input through its im2col addressing.
  if ((p.conv || p.winograd) && !tile.isCoop())
    throw Error(p.label + ": internal error: an implicit convolution needs tensor cores");
  if (p.winograd && (p.conv || p.norm || p.batches != 16 || splits > 1 || tile.flushK > 0 || p.geglu))
    throw Error(p.label + ": internal error: the Winograd mode takes 16 batches, no split-K and no fp16 flush");
  if (p.norm && (!tile.isCoop() || p.conv)) throw Error(p.label + ": internal error: a fused layer norm needs tensor cores");
  if (p.bBatchStride && (!tile.isCoop() || !p.packed || p.conv || p.winograd || p.norm || p.geglu ||
                         p.bBatchStride * p.batches >= limit))
    throw Error(p.label + ": internal error: a per-batch B needs the tensor-core kernel, packed B and a plain A");
  const int64_t rawStride = !tile.isCoop() || p.conv || p.winograd ? 0
                            : p.norm             ? rawHalfRowStride(buffer(p.norm->x), p.k)
                                                 : rawHalfRowStride(p.a, p.k);
  info.rawA = rawStride > 0 || p.conv || p.winograd;
  info.aMode = p.winograd                ? 4
               : p.conv                  ? (p.conv->phaseRows     ? 5
                                            : tile.haloWinograd ? 7
                                            : tile.haloConv     ? (p.conv->kh == 1 ? (p.rowsOutput ? 9 : 8) : 6)
                                                                : 2)
               : p.norm                  ? 3
               : info.rawA               ? 1
                                         : 0;
  if (tile.haloConv != (info.aMode >= 6))
    throw Error(p.label + ": internal error: the halo tile " + tile.describe() + " takes a plain convolution input");
  if (info.aMode >= 6) {  // the halo's contract (gemm_coop.slang A_MODE 6, 7, 8); whole tiles
    const GemmConv& c = *p.conv;
    const int kh = info.aMode >= 8 ? 1 : 3;  // A_MODE 8, 9: a 1x3 convolution (no padding along y), not Winograd
    if (c.kh != kh || c.kw != 3 || c.strideH != 1 || c.strideW != 1 || c.padH != kh / 2 || c.padW != 1 ||
        c.dilationH != 1 || c.dilationW != 1 || c.ho != c.h || c.wo != c.w || c.w % 16 || c.h % (tile.bm / 16) ||
        c.cin % tile.bk || p.k != 3 * kh * c.cin || (p.batches != 1 && (kh != 1 || splits > 1)) || info.edgeChecks ||
        p.geglu || splits > c.cin / tile.bk || (kh == 1 && ((tile.bk != 32 && tile.bk != 16) || tile.flushK > 0)))
      throw Error(p.label + ": the halo tile " + tile.describe() + " needs a 3x3 convolution with stride 1, padding 1 "
                  "(or 1x3 with padding (0, 1), BK 16 or 32 and no fp16 flush), "
                  "W % 16 == 0, H % " + std::to_string(tile.bm / 16) + " == 0, Cin % " + std::to_string(tile.bk) +
                  " == 0, Cout % " + std::to_string(tile.bn) + " == 0 and at most one split-K part per " +
                  std::to_string(tile.bk) + " input channels (got " + std::to_string(c.h) + "x" + std::to_string(c.w) +
                  ", " + std::to_string(c.cin) + " -> " + std::to_string(p.n) + ", " + std::to_string(splits) + " parts)");
    if (info.aMode == 9 &&
        (p.batches != kRowsFusedProducts || splits > 1 || tile.flushK > 0 || p.n % 4 || !p.packed ||
         p.rowsOutput->counterCount < uint64_t(info.groups[0] / kRowsFusedProducts) * info.groups[1]))
      throw Error(p.label + ": internal error: the fused Winograd-rows output needs 8 batches, one K part, packed B, "
                  "Cout % 4 == 0 and a counter per block");
    if (info.aMode == 7 && tile.f16Accumulators && 3 * c.cin > kHaloWinogradMaxProductK)
      throw Error(p.label + ": the halo tile " + tile.describe() + " sums its products in fp16 over 3 x Cin <= " +
                  std::to_string(kHaloWinogradMaxProductK) + " (got Cin " + std::to_string(c.cin) + ")");
  }
  if (p.rowsOutput && info.aMode != 9)
    throw Error(p.label + ": internal error: the fused Winograd-rows output needs the 1x3 halo tile");
  if (p.conv && p.conv->phaseRows &&
      (p.m != 4 * p.conv->phaseRows || p.conv->phaseRows % tile.bm || p.conv->kh != 2 || p.conv->kw != 2 ||
       p.conv->ho != p.conv->h || p.conv->wo != p.conv->w || p.batches != 1))
    throw Error(p.label + ": internal error: the upsampling phases need M = 4 x " + std::to_string(p.conv->phaseRows) +
                " rows (a multiple of the tile's " + std::to_string(tile.bm) + "), 2x2 taps and one batch");
  const VkDeviceAddress aRaw = p.winograd ? p.winograd->input : p.conv ? p.conv->input : p.norm ? p.norm->x.address
                               : info.rawA ? p.a.node().tensor.address : 0;
  params.address(aRaw).u32(uint32_t(rawStride));
  params.u32(uint32_t(p.batches * p.m));
  if (p.conv) {
    const GemmConv& c = *p.conv;
    params.u32(uint32_t(c.h)).u32(uint32_t(c.w)).u32(uint32_t(c.cin)).u32(uint32_t(c.ho)).u32(uint32_t(c.wo));
    params.u32(uint32_t(c.kw));
    params.u32(c.phaseRows ? uint32_t(c.phaseRows)
                           : uint32_t(c.strideH) | uint32_t(c.strideW) << 8 | uint32_t(c.padH) << 16 | uint32_t(c.padW) << 24);
    params.u32(uint32_t(c.dilationH) | uint32_t(c.dilationW) << 8);
  } else if (p.winograd) {
    const GemmWinograd& w = *p.winograd;
    for (int64_t x : {w.h, w.w, w.cin, w.tilesH, w.tilesW, w.firstTile, w.bBatchStride}) params.u32(uint32_t(x));
    params.u32(0);
  } else if (p.norm) {
    params.address(p.norm->stats).address(p.norm->gamma).address(p.norm->beta);
    params.f32(p.norm->invCount).f32(p.norm->eps);
  } else {  // words 16-23: the tail split's first column at 16, B's batch stride at 22
    for (int i = 0; i < 8; ++i) params.u32(i == 0 && tail ? uint32_t(tile.tailStart) : i == 6 ? uint32_t(p.bBatchStride) : 0);
  }
  params.address(p.rowsOutput ? p.rowsOutput->products : partials.address);  // A_MODE 9: the products
  // Whole tiles on fp32 accumulators: a residual add is loaded into them (the sink keeps the rest).
  std::optional<TensorView> residual;
  if (tile.isCoop() && !info.edgeChecks && !tile.f16Accumulators && !p.rowsOutput && residualPreloadEnabled())
    residual = residualOperand(p);
  const Sink out = residual ? p.out.node().children[0] : p.out;
  params.address(residual ? residual->address : 0);
  for (int64_t d : {p.d2, p.d1}) {  // words 28-31: rowCoord divides by multiplying
    const DivisionMagic dm = divisionMagic(d);
    params.u32(dm.multiplier).u32(dm.shift);
  }
  if (params.size() != kHeaderWords) throw Error("gemm: header layout mismatch");
  if (tile.isCoop() && tile.fixedShape) fixHeaderWords(info, params);
  if (info.aMode == 9)  // words 32-35 (gemm_coop.slang A_MODE 9)
    params.address(p.rowsOutput->counters).u32(uint32_t(p.rowsOutput->firstTileRow)).u32(uint32_t(p.rowsOutput->ho));
  MemRange tileCounters{};
  if (info.fusedSplitSum) {  // words 32-33 (gemm_coop.slang SPLIT 5): a counter per batch and tile
    const uint64_t count = uint64_t(p.batches) * info.groups[0] * info.groups[1];
    const Allocation& counters = p.scratch->counters(count);
    tileCounters = MemRange{counters.address(), count * 4};
    params.address(counters.address());
  }

  // Each operand gets its own vector decision: A along K, B and the output along N.
  ExprCodegen genA(params, {info.vectorA, false});
  info.aType = genA.emit(p.a);
  int wrapped = genA.scalarWrappedNodes();
  std::vector<TensorView> read = tensorsRead(p.a);
  std::vector<MemRange> reads;
  if (p.packed) {
    info.bType = std::string("PackedB<") + (p.packed->storage == DType::F16 ? "F16Storage" : "F32Storage") + ">";
    reads = p.packed->ranges;
  } else {
    ExprCodegen genB(params, {info.vectorB, false});
    info.bType = "ExprB<" + genB.emit(p.b) + ", " + (info.vectorB ? "1" : "0") + ">";
    wrapped += genB.scalarWrappedNodes();
    auto more = tensorsRead(p.b);
    read.insert(read.end(), more.begin(), more.end());
  }
  ExprCodegen genS(params, {info.vectorOut, false});
  info.sinkType = genS.emit(out);
  info.scalarWrappedNodes = wrapped + genS.scalarWrappedNodes();
  info.residualPreloaded = residual.has_value();
  for (auto& r : rangesOf(read)) reads.push_back(r);
  if (residual) reads.push_back(rangesOf(std::vector<TensorView>{*residual})[0]);
  std::vector<MemRange> sinkReads = rangesOf(tensorsRead(out)), sinkWrites = rangesOf(tensorsWritten(out));

  const bool bias = p.packed && p.packed->bias != 0;
  KernelSource src;
  src.generated = gemmWrapperSource(info, tile, bias, p.geglu);
  src.label = p.label;
  if (tile.isCoop() && tile.coopEmulation) src.defines = {{"SDGEN_COOP_EMULATION", "1"}};
  else if (tile.isCoop()) src.capabilities = {"spvCooperativeMatrixKHR"};
  src.optimize = tile.spirvOpt;
  if (info.aMode == 9)
    if (const char* v = std::getenv("SDGEN_ROWS_OUT"); v && *v) {  // "OC,OI": gemm_coop_rows.slang's items (A/B)
      int oc = 0, oi = 0;
      if (std::sscanf(v, "%d,%d", &oc, &oi) != 2 || (oc != 4 && oc != 8) || oi < 1 || oi > 4)
        throw Error("SDGEN_ROWS_OUT must be 'OC,OI' with OC 4 or 8 and OI 1..4, got '" + std::string(v).substr(0, 32) + "'");
      src.defines.push_back({"SDGEN_ROWS_OUT_CHANNELS", std::to_string(oc)});
      src.defines.push_back({"SDGEN_ROWS_OUT_ITEMS", std::to_string(oi)});
    }
  if (splits == 1 && !tail) {
    reads.insert(reads.end(), sinkReads.begin(), sinkReads.end());
    if (p.rowsOutput) {  // the products and the counters are written, then read by the blocks' last workgroups
      const MemRange products{p.rowsOutput->products, p.rowsOutput->productsBytes},
          counters{p.rowsOutput->counters, p.rowsOutput->counterCount * 4};
      for (const MemRange& r : {products, counters}) {
        reads.push_back(r);
        sinkWrites.push_back(r);
      }
    }
    if (flushing) {  // the running total is written and read back by the same workgroup
      reads.push_back(partials);
      sinkWrites.push_back(partials);
    }
    seq.dispatch(ctx.kernels().request(src), info.groups, params, reads, sinkWrites, p.label);
    return info;
  }
  // Split-K: the parts write the partials, then one launch sums them through the sink. The tail split's launch
  // also stores its whole-K tiles through the sink.
  if (tail) {
    reads.insert(reads.end(), sinkReads.begin(), sinkReads.end());
    std::vector<MemRange> writes = sinkWrites;
    writes.push_back(partials);
    seq.dispatch(ctx.kernels().request(src), info.groups, params, reads, writes, p.label);
  } else if (info.fusedSplitSum) {  // the parts, then each tile's last part sums them through the sink
    reads.insert(reads.end(), sinkReads.begin(), sinkReads.end());
    std::vector<MemRange> writes = sinkWrites;
    for (const MemRange& r : {partials, tileCounters}) {
      reads.push_back(r);
      writes.push_back(r);
    }
    seq.dispatch(ctx.kernels().request(src), info.groups, params, reads, writes, p.label);
    return info;
  } else {
    seq.dispatch(ctx.kernels().request(src), info.groups, params, reads, std::span(&partials, 1), p.label);
  }
  sinkReads.push_back(partials);
  if (p.packed) sinkReads.insert(sinkReads.end(), p.packed->ranges.begin(), p.packed->ranges.end());  // bias
  const std::string sumLabel = p.sumLabel.empty() ? p.label + " split-K sum" : p.sumLabel;
  if (p.normOutput && !tail && !p.geglu && p.n % 4 == 0) {
    // Form 2 (the default): a workgroup per row where the device can run it; else (form 1) a subgroup per row.
    const LayerNormRowsLayout layout = layerNormRowsLayout(ctx.info(), p.n);
    const int rowThreads = splitSumNormForm() == 2 ? splitNormRowThreads(ctx.info(), p.n) : 0;
    if (layout.rows > 0 || rowThreads > 0) {
      recordSplitSumNorm(ctx, seq, info, params, bias, *p.normOutput, layout, rowThreads, p.batches * p.m, p.n,
                         sinkReads, sinkWrites, sumLabel + " + " + p.normOutput->label);
      info.normInSum = true;
      return info;
    }
  }
  const int64_t quads = p.batches * p.m * (partialWidth / (tail && p.geglu ? 8 : 4));
  const int64_t groups = (quads + kReduceThreads - 1) / kReduceThreads;
  const std::array<uint32_t, 3> reduceGroups{uint32_t(std::min<int64_t>(groups, 65535)),
                                             uint32_t((groups + 65534) / 65535), 1};
  KernelSource reduce;
  reduce.generated = gemmSplitSumSource(info, bias, p.geglu, tail);
  reduce.label = sumLabel;
  seq.dispatch(ctx.kernels().request(reduce), reduceGroups, params, sinkReads, sinkWrites, reduce.label);
  return info;
}

}  // namespace sdgen::ops
