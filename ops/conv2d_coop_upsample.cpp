// The convolution algorithm "coop" on a nearest 2x upsampling (the upsamplers of the UNet and the VAE decoder:
// conv3x3(upsample2x(x)), stride 1, padding 1). Output pixel (2y + a, 2x + b) sees input rows y - 1 + a .. y + a
// and columns x - 1 + b .. x + b only, so each of the four output phases (a, b) is a 2x2 convolution of x itself
// with filters that sum the 3x3 taps falling on the same input pixel: 16 products per output pixel and channel
// pair instead of 36, and the 4x larger upsampled input is never staged. Per call: the phase filters from the
// fp16 gemm layout into scratch (shaders/conv/upsample_phases.slang; the weights keep one packed copy), then one
// tensor-core GEMM over the four phases' rows (gemm_coop.slang A_MODE 5) whose sink puts phase p's rows at their
// pixels (graph::subPixel). Contract: docs/kernels-conv.md; selection: docs/dispatch-conv.md.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "engine/error.h"
#include "graph/expr_nodes.h"
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
  if (!scratch) return "no scratch memory for the phase filters";
  if (c.input.node().kind != ExprKind::Upsample2x) return "the input is not a nearest 2x upsampling";
  if (!convInputRawHalf(c.input.node().children[0])) return "the upsampled tensor is not a dense fp16 NHWC tensor";
  if (!isWinogradGeometry(p.p) || p.ho != p.h || p.wo != p.w) return "the geometry is not 3x3 s1 p1 d1";
  if (p.cin % 8 || p.cout % 8) return "Cin and Cout must be multiples of 8";
  if ((p.n * (p.h / 2) * (p.w / 2)) % tile.bm) return "the rows of a phase are not whole tiles";
  return {};
}

void recordUpsamplePhaseFilters(const ConvCall& c, VkDeviceAddress u) {
  const ConvProblem& p = c.prob;
  if (c.weights.storage() != DType::F16 || !isWinogradGeometry(p.p) || p.cout % 4)
    throw Error(c.label + ": internal error: phase filters need fp16 3x3 weights and Cout % 4 == 0");
  const auto grid = convGrid1d(c, p.cin * p.cout / 4);  // a thread per (ci, 4 co)
  ParamBlock params = convHeader(p, c.weights.gemm().address(), c.weights.bias().address(), u, 0, grid[0]);
  dispatchConvKernel(c,
                     convWrapper({"conv.upsample_phases"}, "", "upsamplePhaseFiltersMain(upsamplePhaseItem(group, local));"),
                     "coop phase filters", grid, params, {MemRange{c.weights.gemm().address(), c.weights.gemm().size()}},
                     {MemRange{u, uint64_t(16) * p.cin * p.cout * 2}});
}

void recordConvCoopUpsample(const ConvCall& c, Conv2dScratch& scratch, const GemmTile& tile) {
  const ConvProblem& p = c.prob;
  const Expr& x = c.input.node().children[0];
  const int64_t h = p.h / 2, w = p.w / 2, rows = p.n * h * w;
  const uint64_t uBytes = uint64_t(16) * p.cin * p.cout * 2;
  const Allocation& u = scratch.acquire(uBytes, Conv2dScratch::Slot::Filters);
  const MemRange uRange{u.address(), uBytes};
  const MemRange biasRange{c.weights.bias().address(), c.weights.bias().size()};
  recordUpsamplePhaseFilters(c, u.address());
  GemmProblem g;
  g.a = x;
  g.packed = PackedB{u.address(), c.weights.bias().address(), p.cout, DType::F16, {uRange, biasRange}};
  g.conv = GemmConv{x.node().tensor.address, h, w, p.cin, h, w, 2, 2, 1, 1, 0, 0, 1, 1, rows};
  g.out = subPixel(c.out);
  g.m = 4 * rows;
  g.n = p.cout;
  g.k = 4 * p.cin;
  g.d1 = h;  // row g = (phase * N + n, y, x) of the sub-pixel sink's [4N, H, W, Cout]
  g.d2 = w;
  g.tile = tile;
  g.scratch = &scratch;
  g.label = c.label + " coop phases " + std::to_string(tile.bm) + "x" + std::to_string(tile.bn) +
            (tile.splitK > 1 ? " split " + std::to_string(tile.splitK) : "");
  g.sumLabel = c.label + " coop split-K sum";  // ConvKernelRole::SplitSum
  GemmInfo info = recordGemm(c.ctx, c.seq, g);
  c.info.kernels.push_back(g.label);
  if (tile.splitK > 1) c.info.kernels.push_back(g.sumLabel);
  c.info.scalarWrappedNodes += info.scalarWrappedNodes;
  c.info.scratchBytes = std::max(c.info.scratchBytes, uBytes);
}

}  // namespace sdgen::ops
