// The convolution algorithm "coop-winograd": Winograd F(2,3) (3x3, stride 1, padding 1) with its 16
// transformed-domain GEMMs on tensor cores (shaders/conv/winograd_f23.slang, shaders/linear/gemm_coop.slang
// A_MODE 4). 2x2 output tiles need 16 products per tile and channel pair where the implicit GEMM needs 36:
// 2.25x fewer tensor-core operations, for one more pass over the output (the fp16 products M).
// Per call: the filter transform (U = G g G^T from the fp16 gemm layout, into scratch: the weights keep one
// packed copy) unless the weights hold U (Conv2dWeightsOptions::winogradF23OnUse: made by the first recording, on
// its own submission), then per band of tiles the GEMM, whose staging makes V = B^T d B from the raw fp16 input
// (or, with the fp16-accumulator tiles, an input-transform launch writes V and the GEMM reads it plainly), and the
// output transform through the sink. Contract: docs/kernels-conv.md; selection: docs/dispatch-conv.md.
#include <algorithm>
#include <array>
#include <string>

#include "engine/error.h"
#include "graph/expr_codegen.h"
#include "graph/expr_nodes.h"
#include "ops/conv2d_candidates.h"
#include "ops/conv2d_kernels.h"
#include "ops/elementwise.h"
#include "ops/linear_gemm.h"

namespace sdgen::ops {

using namespace graph;

std::string recordWinogradF23Input(Context& ctx, CommandSequence& seq, const ConvProblem& p, VkDeviceAddress input,
                                   const std::vector<MemRange>& inputRanges, VkDeviceAddress v, int64_t first,
                                   int64_t count, const std::string& label) {
  if (p.cin % 4 || count <= 0 || int64_t(16) * count * p.cin >= (int64_t(1) << 31))
    throw Error(label + ": internal error: the Winograd input transform needs Cin % 4 == 0 and < 2^31 elements of V");
  const auto grid = convGrid1d(ctx.info(), count * p.cin / 4);
  ParamBlock params = convHeader(p, 0, 0, 0, 0, grid[0], 2);
  params.u32(uint32_t(first)).u32(uint32_t(count)).address(input).address(v);
  KernelSource src;
  src.generated = convWrapper({"conv.winograd_f23"}, "", "winogradF23InputMain(winogradF23Item(group, local));");
  src.label = "conv2d coop-winograd input transform";
  const std::string kernel = label + " coop-winograd input transform";
  const MemRange written{v, uint64_t(16) * count * p.cin * 2};
  seq.dispatch(ctx.kernels().request(src), grid, params.words(), std::span(inputRanges), std::span(&written, 1),
               kernel);
  return kernel;
}

// The filter launch from `w`'s gemm layout into u (fp16 [16][Cin][Cout]): a thread per (ci, 4 co).
static void dispatchWinogradF23Filters(Context& ctx, CommandSequence& seq, const Conv2dWeights& w, VkDeviceAddress u,
                                       const std::string& label) {
  if (w.storage() != DType::F16 || !isWinogradGeometry(w.params()) || w.cin() % 4 || w.cout() % 4)
    throw Error(label + ": internal error: coop-winograd filters need fp16 3x3 weights, Cin and Cout % 4 == 0");
  dispatchFilterTransform(ctx, seq, w, u, "conv.winograd_f23",
                          "winogradF23FilterMain(winogradF23Item(group, local));", 16, 2, "coop-winograd", label);
}

void packWinogradF23Filters(Context& ctx, CommandSequence& seq, const Conv2dWeights& weights) {
  dispatchWinogradF23Filters(ctx, seq, weights, weights.winogradF23().address(),
                             weights.name() + " coop-winograd filters");
}

bool makeWinogradF23Filters(Context& ctx, const Conv2dWeights& weights) {
  if (weights.hasWinogradF23() || !weights.winogradF23OnUse()) return weights.hasWinogradF23();
  // On their own submission: recorded into the caller's sequence they would run again in every replay.
  return weights.makeWinogradF23(ctx, [&](const Allocation& u) {
    CommandSequence seq(ctx);
    dispatchWinogradF23Filters(ctx, seq, weights, u.address(), weights.name() + " coop-winograd filters");
    seq.run();
  });
}

void recordConvCoopWinograd(const ConvCall& c, Conv2dScratch& scratch, const ConvCandidate* candidate,
                            int64_t bandTiles) {
  const ConvProblem& p = c.prob;
  const Expr in = coopConvInput(c, &scratch, "coop-winograd");
  const GemmTile tile = candidate ? convCoopGemmTile(*candidate) : coopWinogradGemmTile(p);
  if (!tile.bm) throw Error(c.label + ": internal error: no coop-winograd tile");
  const int64_t tilesH = (p.ho + 1) / 2, tilesW = (p.wo + 1) / 2, tiles = p.n * tilesH * tilesW;
  // The fp16-accumulator tiles read V made by its own launch (a plain batched GEMM); the others make it while
  // staging (A_MODE 4). Session 42 (H100): A_MODE 4's four loads per A word held the 256x256 tile to ~90 TFLOP/s.
  const bool explicitV = tile.f16Accumulators;
  int64_t band = coopWinogradBandTiles(p, tile.bm, bandTiles);
  if (explicitV && bandTiles <= 0) {  // V [16][band][Cin] within the same bound as M
    const int64_t fit = int64_t(kCoopWinogradBandBytes / (uint64_t(16) * 2 * uint64_t(std::max<int64_t>(p.cin, 1))));
    band = std::min(band, std::max<int64_t>(tile.bm, fit / tile.bm * tile.bm));
  }

  // Scratch (the split-K slot: the staged input holds the primary one): U fp16 [16][Cin][Cout] unless the weights
  // hold it, then (explicit V) one band's V fp16 [16][band][Cin], then one band's products M fp16 [16][band][Cout].
  const bool packedU = makeWinogradF23Filters(c.ctx, c.weights);
  const uint64_t uLayout = uint64_t(16) * p.cin * p.cout * 2;
  const uint64_t uBytes = packedU ? 0 : (uLayout + 255) / 256 * 256;
  const uint64_t vBytes = explicitV ? (uint64_t(16) * band * p.cin * 2 + 255) / 256 * 256 : 0;
  const uint64_t mBytes = uint64_t(16) * band * p.cout * 2;
  const Allocation& mem = scratch.acquire(uBytes + vBytes + mBytes, Conv2dScratch::Slot::Partials);
  const VkDeviceAddress u = packedU ? c.weights.winogradF23().address() : mem.address();
  const VkDeviceAddress v = mem.address() + uBytes, m = mem.address() + uBytes + vBytes;
  const MemRange uRange{u, uLayout};
  const MemRange biasRange{c.weights.bias().address(), c.weights.bias().size()};

  if (!packedU) {  // the filters per call (weights without them)
    const std::string label = c.label + " coop-winograd filter";
    dispatchWinogradF23Filters(c.ctx, c.seq, c.weights, u, label);
    c.info.kernels.push_back(label);
  }
  const std::string tileText = std::to_string(tile.bm) + "x" + std::to_string(tile.bn);
  for (int64_t first = 0; first < tiles; first += band) {
    const int64_t count = std::min(band, tiles - first);
    GemmProblem g;
    g.packed = PackedB{u, 0, p.cout, DType::F16, {uRange}};
    if (explicitV) {
      c.info.kernels.push_back(recordWinogradF23Input(c.ctx, c.seq, p, in.node().tensor.address,
                                                      rangesOf(tensorsRead(in)), v, first, count, c.label));
      g.a = buffer(view(mem, DType::F16, {1, 16, count, p.cin}, uBytes));
      g.bBatchStride = p.cin * p.cout;
    } else {
      g.a = in;
      g.winograd = GemmWinograd{in.node().tensor.address, p.h, p.w, p.cin, tilesH, tilesW, first, p.cin * p.cout};
    }
    g.out = bufferSink(view(mem, DType::F16, {1, 16, count, p.cout}, uBytes + vBytes));
    g.m = count;
    g.n = p.cout;
    g.k = p.cin;
    g.batches = 16;
    g.d1 = 16;  // row g = e * count + t sits at (0, e, t) of M's [1, 16, count, Cout]
    g.d2 = count;
    g.tile = tile;
    g.label = c.label + " coop-winograd gemm " + tileText;
    GemmInfo info = recordGemm(c.ctx, c.seq, g);
    c.info.kernels.push_back(g.label);
    c.info.scalarWrappedNodes += info.scalarWrappedNodes;

    const auto grid = convGrid1d(c, count * p.cout / 4);
    ParamBlock params = convHeader(p, c.weights.gemm().address(), c.weights.bias().address(), u, m, grid[0], 2);
    params.u32(uint32_t(first)).u32(uint32_t(count));
    ExprCodegen gen(params, {true, false});
    const std::string s = gen.emit(c.out);
    c.info.nativeVectorNodes += gen.nativeVectorNodes();
    c.info.scalarWrappedNodes += gen.scalarWrappedNodes();
    std::vector<MemRange> reads = rangesOf(tensorsRead(c.out));
    reads.push_back(MemRange{m, uint64_t(16) * count * p.cout * 2});
    reads.push_back(biasRange);
    dispatchConvKernel(c,
                       convWrapper({"conv.winograd_f23"}, "typealias S = " + s + ";\n",
                                   "winogradF23OutputMain<S>(winogradF23Item(group, local));"),
                       "coop-winograd output", grid, params, reads, rangesOf(tensorsWritten(c.out)));
  }
  c.info.scratchBytes = uBytes + vBytes + mBytes;
}

}  // namespace sdgen::ops
