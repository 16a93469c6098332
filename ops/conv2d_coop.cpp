// The convolution algorithm "coop": an implicit GEMM on tensor cores, run by the cooperative-matrix GEMM of
// shaders/linear/gemm_coop.slang in its im2col mode (A_MODE 2). The input is read raw as fp16 NHWC; any other
// input expression (group norm + SiLU, a skip-connection concat, an upsample) is first computed into fp16
// scratch by one elementwise launch -- a group norm (+ SiLU) of a raw input as silu(x * scale + shift) from a
// per-channel table made by one tiny launch (ops/conv2d_input_affine.h), not from the statistics per element.
// Contract: docs/kernels-conv.md; selection: docs/dispatch-conv.md.
#include <optional>

#include "engine/error.h"
#include "graph/expr_nodes.h"
#include "ops/conv2d_candidates.h"
#include "ops/conv2d_input_affine.h"
#include "ops/conv2d_kernels.h"
#include "ops/elementwise.h"
#include "ops/linear_gemm.h"

namespace sdgen::ops {

using namespace graph;

bool convInputRawHalf(const Expr& input) {
  if (input.node().kind != ExprKind::Buffer) return false;
  const TensorView& t = input.node().tensor;
  return !t.isInt32 && t.dtype == DType::F16 && t.dense() && t.address % 16 == 0 && t.shape.size() == 4;
}

Expr coopConvInput(const ConvCall& c, Conv2dScratch* scratch, const std::string& what) {
  if (convInputRawHalf(c.input)) return c.input;
  if (!scratch) throw Error(c.label + ": internal error: " + what + " conv input needs staging but has no scratch");
  const ConvProblem& p = c.prob;
  const Shape shape{p.n, p.h, p.w, p.cin};
  Expr value = c.input;
  if (std::optional<ConvInputAffine> affine =
          convInputTableWanted(p.n * p.h * p.w * p.cin) ? convInputAffineOf(c.input) : std::nullopt) {
    // The statistics' per-element work (group index, mean, variance, rsqrt) once per (image, channel).
    const std::string label = c.label + " " + what + " affine";
    value = convInputThroughTable(c.ctx, c.seq, *affine, *scratch, label);
    c.info.kernels.push_back(label);
  }
  TensorView staged = view(scratch->acquire(uint64_t(numel(shape)) * 2), DType::F16, shape);
  elementwise(c.ctx, c.seq, value, bufferSink(staged), {.label = c.label + " " + what + " input"});
  c.info.kernels.push_back(c.label + " " + what + " input");
  return buffer(staged);
}

void recordConvCoop(const ConvCall& c, Conv2dScratch* scratch, const ConvCandidate* candidate) {
  const ConvProblem& p = c.prob;
  // A candidate's tile and split-K are checked by candidateViolation; else the GEMM's rules.
  GemmTile tile = candidate ? convCoopGemmTile(*candidate) : chooseGemmTile(p.m(), p.cout, p.k(), c.ctx.info(), true);
  // The unsplit 256x256 fp16-accumulator candidate past 2048 of K flushes even fp16 chunks to planes in scratch
  // (halfTileFlushK; candidateViolation asks for the scratch). Session 42, H100: 7.8e-3 of the general kernel's
  // output with 2048-deep chunks against 4.9e-3 with even ones.
  // The halo tiles flush at whole channel slices (haloFlushK) and never run by upsampling phases.
  const int flushK = !candidate ? 0 : tile.haloConv ? haloFlushK(tile, p.cin) : halfTileFlushK(tile, p.k());
  bool phases = !tile.haloConv && upsamplePhasesEnabled() && upsamplePhasesViolation(c, tile, scratch).empty();
  // A phase's reduction is 4 Cin: within one chunk up to 512 channels. Past that the plain im2col walk runs (ACC 3
  // is untested with the phases' A_MODE 5; no SD model has such an upsampling).
  if (flushK && phases && 4 * int64_t(p.cin) > kHalfTileChunkK) phases = false;
  if (flushK && !phases) tile.flushK = flushK;
  // An upsampling computed per phase has the same rows and 4/9 of the reduction (recordConvCoopUpsample).
  if (!candidate && scratch && p.cout % 4 == 0)
    tile.splitK = chooseSplitK(tile, p.m(), p.cout, phases ? 4 * p.cin : p.k(), 1);
  if (phases) {
    recordConvCoopUpsample(c, scratch, tile);
    return;
  }
  Expr in = coopConvInput(c, scratch, "coop");
  GemmProblem g;
  g.a = in;
  const Conv2dWeights& w = c.weights;
  g.packed = PackedB{w.gemm().address(), w.bias().address(), p.cout, DType::F16, {range(w.gemm()), range(w.bias())}};
  g.conv = GemmConv{in.node().tensor.address, p.h, p.w, p.cin, p.ho, p.wo, p.p.kh, p.p.kw, p.p.strideH, p.p.strideW,
                    p.p.padH, p.p.padW, p.p.dilationH, p.p.dilationW};
  g.out = c.out;
  g.m = p.m();
  g.n = p.cout;
  g.k = p.k();
  g.d1 = p.ho;  // output row g = output pixel (n, oy, ox) of the [N, Ho, Wo, Cout] sink
  g.d2 = p.wo;
  g.tile = tile;
  g.scratch = scratch;
  const std::string kernel = "coop " + std::to_string(tile.bm) + "x" + std::to_string(tile.bn) +
                             (tile.haloConv ? " halo" : "") +
                             (tile.splitK > 1 ? " split " + std::to_string(tile.splitK) : "");
  g.label = c.label + " " + kernel;
  g.sumLabel = c.label + " coop split-K sum";  // ConvKernelRole::SplitSum
  GemmInfo info = recordGemm(c.ctx, c.seq, g);
  c.info.kernels.push_back(g.label);
  if (tile.splitK > 1) c.info.kernels.push_back(g.sumLabel);
  c.info.scalarWrappedNodes += info.scalarWrappedNodes;
}

}  // namespace sdgen::ops
