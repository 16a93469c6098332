// The convolution algorithm "coop" on a nearest 2x upsampling (the upsamplers of the UNet and the VAE decoder:
// conv3x3(upsample2x(x)), stride 1, padding 1). Output pixel (2y + a, 2x + b) sees input rows y - 1 + a .. y + a
// and columns x - 1 + b .. x + b only, so each of the four output phases (a, b) is a 2x2 convolution of x itself
// with filters that sum the 3x3 taps falling on the same input pixel: 16 products per output pixel and channel
// pair instead of 36, and the 4x larger upsampled input is never staged. The phase filters come from the fp16
// gemm layout (shaders/conv/upsample_phases.slang): made once where the weights hold them
// (Conv2dWeightsOptions::packUpsamplePhases: the networks' upsamplers, nn::ParameterStore), else per call into
// scratch (a launch in every replay: 23 us for 1280 channels on the H200). Then one tensor-core GEMM over the four
// phases' rows (gemm_coop.slang A_MODE 5) whose sink puts phase p's rows at their pixels (graph::subPixel).
// Contract: docs/kernels-conv.md; selection: docs/dispatch-conv.md.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>

#include "engine/error.h"
#include "graph/expr_nodes.h"
#include "ops/conv2d.h"
#include "ops/conv2d_kernels.h"
#include "ops/linear_gemm.h"

namespace sdgen::ops {

using namespace graph;

bool upsamplePhasesEnabled() {
  const char* v = std::getenv("SDGEN_CONV_UPSAMPLE_PHASES");  // "0": the upsampled input staged, 3x3 taps
  return !v || std::strcmp(v, "0") != 0;
}

std::string upsamplePhasesViolation(const ConvCall& c, const GemmTile& tile, const Conv2dScratch* scratch) {
  const ConvProblem& p = c.prob;
  if (!scratch && !c.weights.hasUpsamplePhases()) return "no scratch memory for the phase filters";
  if (c.input.node().kind != ExprKind::Upsample2x) return "the input is not a nearest 2x upsampling";
  if (!convInputRawHalf(c.input.node().children[0])) return "the upsampled tensor is not a dense fp16 NHWC tensor";
  if (!isWinogradGeometry(p.p) || p.ho != p.h || p.wo != p.w) return "the geometry is not 3x3 s1 p1 d1";
  if (p.cin % 8 || p.cout % 8) return "Cin and Cout must be multiples of 8";
  if ((p.n * (p.h / 2) * (p.w / 2)) % tile.bm) return "the rows of a phase are not whole tiles";
  return {};
}

// The phase-filter launch from `w`'s gemm layout into u (16 Cin Cout fp16): a thread per (ci, 4 co).
static void dispatchUpsamplePhaseFilters(Context& ctx, CommandSequence& seq, const Conv2dWeights& w, VkDeviceAddress u,
                                         const std::string& label) {
  if (w.storage() != DType::F16 || !isWinogradGeometry(w.params()) || w.cout() % 4)
    throw Error(label + ": internal error: phase filters need fp16 3x3 weights and Cout % 4 == 0");
  ConvProblem p;  // what the kernel's header carries: Cin and Cout
  p.n = 1, p.h = p.ho = 1, p.w = p.wo = 1, p.cin = w.cin(), p.cout = w.cout(), p.p = w.params();
  const std::array<uint32_t, 3> grid = convGrid1d(ctx.info(), int64_t(w.cin()) * w.cout() / 4);
  ParamBlock params = convHeader(p, w.gemm().address(), w.bias().address(), u, 0, grid[0]);
  KernelSource src;
  src.generated =
      convWrapper({"conv.upsample_phases"}, "", "upsamplePhaseFiltersMain(upsamplePhaseItem(group, local));");
  src.label = "conv2d coop phase filters";
  seq.dispatch(ctx.kernels().request(src), grid, params, {{MemRange{w.gemm().address(), w.gemm().size()}}},
               {{MemRange{u, uint64_t(16) * w.cin() * w.cout() * 2}}}, label);
}

void packUpsamplePhaseFilters(Context& ctx, CommandSequence& seq, const Conv2dWeights& weights) {
  dispatchUpsamplePhaseFilters(ctx, seq, weights, weights.upsamplePhases().address(),
                               weights.name() + " upsample phase filters");
}

void recordUpsamplePhaseFilters(const ConvCall& c, VkDeviceAddress u) {
  const std::string label = c.label + " coop phase filters";
  dispatchUpsamplePhaseFilters(c.ctx, c.seq, c.weights, u, label);
  c.info.kernels.push_back(label);
}

void recordConvCoopUpsample(const ConvCall& c, Conv2dScratch* scratch, const GemmTile& tile) {
  const ConvProblem& p = c.prob;
  const Expr& x = c.input.node().children[0];
  const int64_t h = p.h / 2, w = p.w / 2, rows = p.n * h * w;
  const uint64_t uBytes = uint64_t(16) * p.cin * p.cout * 2;
  VkDeviceAddress u = 0;
  if (c.weights.hasUpsamplePhases()) {  // made once (packUpsamplePhaseFilters)
    u = c.weights.upsamplePhases().address();
  } else {
    u = scratch->acquire(uBytes, Conv2dScratch::Slot::Filters).address();  // upsamplePhasesViolation: not null
    recordUpsamplePhaseFilters(c, u);
    c.info.scratchBytes = std::max(c.info.scratchBytes, uBytes);
  }
  const MemRange uRange{u, uBytes};
  const MemRange biasRange{c.weights.bias().address(), c.weights.bias().size()};
  GemmProblem g;
  g.a = x;
  g.packed = PackedB{u, c.weights.bias().address(), p.cout, DType::F16, {uRange, biasRange}};
  g.conv = GemmConv{x.node().tensor.address, h, w, p.cin, h, w, 2, 2, 1, 1, 0, 0, 1, 1, rows};
  g.out = subPixel(c.out);
  g.m = 4 * rows;
  g.n = p.cout;
  g.k = 4 * p.cin;
  g.d1 = h;  // row g = (phase * N + n, y, x) of the sub-pixel sink's [4N, H, W, Cout]
  g.d2 = w;
  g.tile = tile;
  g.scratch = scratch;
  g.label = c.label + " coop phases " + std::to_string(tile.bm) + "x" + std::to_string(tile.bn) +
            (tile.splitK > 1 ? " split " + std::to_string(tile.splitK) : "");
  g.sumLabel = c.label + " coop split-K sum";  // ConvKernelRole::SplitSum
  GemmInfo info = recordGemm(c.ctx, c.seq, g);
  c.info.kernels.push_back(g.label);
  if (tile.splitK > 1) c.info.kernels.push_back(g.sumLabel);
  c.info.scalarWrappedNodes += info.scalarWrappedNodes;
}

}  // namespace sdgen::ops
