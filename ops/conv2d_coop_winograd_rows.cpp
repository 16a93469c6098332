// The convolution algorithm "coop-winograd-rows": Winograd F(6,3) along the rows of a 3x3 stride-1 convolution
// (shaders/conv/winograd_rows.slang), its eight products 1x3 convolutions on tensor cores (ops::recordGemm, the
// im2col or the halo tile). 8 products of K = 3 Cin per 6 output rows where the implicit GEMM does 18 taps: 4/9 of
// its MMAs, for a transformed input V and the fp16 products M through memory (each 4/3 of the input / output). Why
// along the rows only: the columns stay a 1x3 convolution, so V and M grow by 8/6 where a 2-D transform's grow by
// 16/4 (F(2,3)) or 36/16 (F(4,3)); the VAE's 256-channel 512^2 convs are where the saved MMAs outweigh the traffic
// (docs/perf.md, session 47). Contract: docs/kernels-conv.md; selection: docs/dispatch-conv.md.
#include <algorithm>
#include <cstdlib>
#include <optional>
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

int64_t winogradRowsBlockRows(const GemmTile& tile) { return tile.haloConv ? tile.bm / 16 : 1; }

int64_t winogradRowsTileRows(const ConvProblem& p, const GemmTile& tile) {
  const int64_t rows = (p.ho + kWinogradRowsOut - 1) / kWinogradRowsOut, block = winogradRowsBlockRows(tile);
  return (rows + block - 1) / block * block;
}

int64_t winogradRowsBandRows(const ConvProblem& p, const GemmTile& tile, int64_t forced) {
  const int64_t rows = winogradRowsTileRows(p, tile), block = winogradRowsBlockRows(tile);
  if (forced > 0) return std::min(rows, (forced + block - 1) / block * block);
  // V [8][N][Tb][W][Cin] and M [8][N][Tb][W][Cout] each within kWinogradRowsBandBytes
  const uint64_t perRow = uint64_t(kWinogradRowsProducts) * 2 * uint64_t(p.n) * uint64_t(p.w) *
                          uint64_t(std::max(p.cin, p.cout));
  const int64_t fit = std::max(block, int64_t(kWinogradRowsBandBytes / std::max<uint64_t>(perRow, 1)) / block * block);
  const int64_t bands = (rows + fit - 1) / fit, even = (rows + bands - 1) / bands;  // bands of even size
  return std::min(rows, (even + block - 1) / block * block);
}

// The filter launch from `w`'s gemm layout into u (fp16 [8][3 Cin][Cout]): a thread per (ci, 4 co).
static void dispatchWinogradRowsFilters(Context& ctx, CommandSequence& seq, const Conv2dWeights& w, VkDeviceAddress u,
                                        const std::string& label) {
  if (!winogradRowsLayoutViolation(w.cout(), w.cin(), w.params(), w.storage()).empty())
    throw Error(label + ": internal error: coop-winograd-rows filters need fp16 3x3 weights, Cin and Cout % 8 == 0");
  dispatchFilterTransform(ctx, seq, w, u, "conv.winograd_rows",
                          "winogradRowsFilterMain(winogradRowsItem(group, local));", 24, kWinogradRowsOut,
                          "coop-winograd-rows", label);
}

void packWinogradRowsFilters(Context& ctx, CommandSequence& seq, const Conv2dWeights& weights) {
  dispatchWinogradRowsFilters(ctx, seq, weights, weights.winogradRows().address(),
                              weights.name() + " coop-winograd-rows filters");
}

static bool winogradRowsFusedOutputDefault() {
  const char* v = std::getenv("SDGEN_WINOGRAD_ROWS_FUSED");  // "0": the output transform as its own launch (A/B)
  return !(v && std::string(v) == "0");
}

void recordConvCoopWinogradRows(const ConvCall& c, Conv2dScratch& scratch, const GemmTile& tile, int64_t bandRows,
                                std::optional<bool> fusedOutput) {
  const ConvProblem& p = c.prob;
  if (p.ho != p.h || p.wo != p.w || !tile.isCoop() || tile.f16Accumulators || tile.splitK > 1)
    throw Error(c.label + ": internal error: coop-winograd-rows needs a 3x3 stride-1 convolution and an unsplit "
                "fp32-accumulator tensor-core tile");
  const Expr in = coopConvInput(c, &scratch, "coop-winograd-rows");
  const int64_t rows = winogradRowsTileRows(p, tile), band = winogradRowsBandRows(p, tile, bandRows);
  constexpr int64_t E = kWinogradRowsProducts;
  static_assert(E == kRowsFusedProducts);
  // The halo tile applies the output transform in the products GEMM (A_MODE 9, gemm_coop_rows.slang): no output
  // launch reads M back from memory.
  const bool fused = tile.haloConv && fusedOutput.value_or(winogradRowsFusedOutputDefault());

  // Scratch (the split-K slot: a staged input holds the primary one): U fp16 [8][3 Cin][Cout] unless the weights
  // hold it (packWinogradRowsFilters, makeWinogradRows), then one band's V fp16 [8][N][Tb][W][Cin] and M fp16 [8][N][Tb][W][Cout].
  // Weights that take the filters on first use get them now, on their own submission: recorded into c.seq they
  // would run again in every replay.
  if (!c.weights.hasWinogradRows() && c.weights.winogradRowsOnUse())
    c.weights.makeWinogradRows(c.ctx, [&](const Allocation& u) {
      CommandSequence seq(c.ctx);
      dispatchWinogradRowsFilters(c.ctx, seq, c.weights, u.address(), c.weights.name() + " coop-winograd-rows filters");
      seq.run();
    });
  const bool packedU = c.weights.hasWinogradRows();
  const uint64_t uLayout = uint64_t(E) * 3 * p.cin * p.cout * 2;
  const uint64_t uBytes = packedU ? 0 : (uLayout + 255) / 256 * 256;
  const uint64_t vBytes = (uint64_t(E) * p.n * band * p.w * p.cin * 2 + 255) / 256 * 256;
  const uint64_t mBytes = uint64_t(E) * p.n * band * p.w * p.cout * 2;
  const Allocation& mem = scratch.acquire(uBytes + vBytes + mBytes, Conv2dScratch::Slot::Partials);
  const VkDeviceAddress u = packedU ? c.weights.winogradRows().address() : mem.address();
  const VkDeviceAddress v = mem.address() + uBytes, m = v + vBytes;
  const MemRange uRange{u, uLayout};
  const MemRange biasRange{c.weights.bias().address(), c.weights.bias().size()};
  auto header = [&](uint32_t gridRow) {
    return convHeader(p, c.weights.gemm().address(), c.weights.bias().address(), u, m, gridRow, kWinogradRowsOut);
  };
  if (!packedU) {  // the filters per call (weights packed without them)
    const std::string label = c.label + " coop-winograd-rows filter";
    dispatchWinogradRowsFilters(c.ctx, c.seq, c.weights, u, label);
    c.info.kernels.push_back(label);
  }
  const std::string tileText = std::to_string(tile.bm) + "x" + std::to_string(tile.bn) +
                               (!tile.haloConv ? "" : tile.bk == 16 ? " halo3" : " halo");
  const std::vector<MemRange> inputRanges = rangesOf(tensorsRead(in));
  for (int64_t first = 0; first < rows; first += band) {
    const int64_t tb = std::min(band, rows - first);
    const uint64_t vPart = uint64_t(p.n) * tb * p.w * p.cin * 2, mPart = uint64_t(p.n) * tb * p.w * p.cout * 2;
    {
      const auto grid = convGrid1d(c, p.n * tb * p.w * p.cin / 4);
      ParamBlock params = header(grid[0]);
      params.u32(uint32_t(first)).u32(uint32_t(tb)).address(in.node().tensor.address).address(v);
      const std::string entry = "winogradRowsInputMain(winogradRowsItem(group, local));";
      dispatchConvKernel(c, convWrapper({"conv.winograd_rows"}, "", entry), "coop-winograd-rows input transform", grid,
                         params, inputRanges, {MemRange{v, E * vPart}});
    }
    {  // the eight products in one launch: batch e is images [e N, (e + 1) N) of V times U_e
      GemmProblem g;
      const TensorView vb = view(mem, DType::F16, {E * p.n, tb, p.w, p.cin}, uBytes);
      g.a = buffer(vb);
      g.packed = PackedB{u, 0, p.cout, DType::F16, {uRange}};
      g.conv = GemmConv{vb.address, tb, p.w, p.cin, tb, p.w, 1, 3, 1, 1, 0, 1, 1, 1};
      g.out = bufferSink(view(mem, DType::F16, {E * p.n, tb, p.w, p.cout}, uBytes + vBytes));
      if (fused) {
        const uint64_t blocks =
            uint64_t((p.n * tb * p.w + tile.bm - 1) / tile.bm) * uint64_t((p.cout + tile.bn - 1) / tile.bn);
        const Allocation& counters = scratch.counters(blocks);
        g.out = c.out;
        g.packed->bias = c.weights.bias().address();
        g.packed->ranges.push_back(biasRange);
        g.rowsOutput = GemmRowsOutput{m, counters.address(), E * mPart, blocks, first, p.ho};
      }
      g.m = p.n * tb * p.w;
      g.n = p.cout;
      g.k = 3 * p.cin;
      g.batches = E;
      g.d1 = tb;  // row g = e * m + r sits at (e * N + n, row, column) of M's [8 N, Tb, W, Cout]
      g.d2 = p.w;
      g.tile = tile;
      g.label = c.label + " coop-winograd-rows gemm " + tileText + (fused ? " fused-output" : "");
      GemmInfo info = recordGemm(c.ctx, c.seq, g);
      c.info.kernels.push_back(g.label);
      c.info.scalarWrappedNodes += info.scalarWrappedNodes;
    }
    if (fused) continue;
    const auto grid = convGrid1d(c, p.n * tb * p.wo * p.cout / 4);
    ParamBlock params = header(grid[0]);
    params.u32(uint32_t(first)).u32(uint32_t(tb));
    ExprCodegen gen(params, {true, false});
    const std::string s = gen.emit(c.out);
    c.info.nativeVectorNodes += gen.nativeVectorNodes();
    c.info.scalarWrappedNodes += gen.scalarWrappedNodes();
    std::vector<MemRange> reads = rangesOf(tensorsRead(c.out));
    reads.push_back(MemRange{m, E * mPart});
    reads.push_back(biasRange);
    dispatchConvKernel(c, convWrapper({"conv.winograd_rows"}, "typealias S = " + s + ";\n",
                                      "winogradRowsOutputMain<S>(winogradRowsItem(group, local));"),
                       "coop-winograd-rows output", grid, params, reads, rangesOf(tensorsWritten(c.out)));
  }
  c.info.scratchBytes = std::max(c.info.scratchBytes, uBytes + vBytes + mBytes);
}

}  // namespace sdgen::ops
