#include "ops/conv2d.h"

#include "engine/error.h"
#include "ops/conv2d_candidates.h"
#include "ops/conv2d_tune.h"
#include "ops/conv2d_kernels.h"
#include "ops/elementwise.h"

namespace sdgen::ops {

using namespace graph;

static std::string weightsDesc(const Conv2dWeights& w) {
  return "weights '" + w.name() + "' [Cout=" + std::to_string(w.cout()) + ", Cin=" + std::to_string(w.cin()) + ", " +
         w.params().str() + "]";
}

Shape conv2dOutputShape(const Shape& in, const Conv2dWeights& w) {
  if (in.size() != 4) throw Error("conv2d: input must be NHWC [N,H,W,Cin], got shape " + shapeString(in));
  const Conv2dParams& p = w.params();
  int64_t spanH = in[1] + 2 * p.padH - int64_t(p.dilationH) * (p.kh - 1) - 1;
  int64_t spanW = in[2] + 2 * p.padW - int64_t(p.dilationW) * (p.kw - 1) - 1;
  if (spanH < 0 || spanW < 0)
    throw Error("conv2d: input " + shapeString(in) + " is smaller than the (dilated) kernel of " + weightsDesc(w));
  return {in[0], spanH / p.strideH + 1, spanW / p.strideW + 1, w.cout()};
}

// Whether two lists of memory ranges overlap (an in-place convolution would read pixels it already overwrote).
static bool overlaps(const std::vector<MemRange>& a, const std::vector<MemRange>& b) {
  for (auto& x : a)
    for (auto& y : b)
      if (x.overlaps(y)) return true;
  return false;
}

Conv2dInfo conv2d(Context& ctx, CommandSequence& seq, const Expr& input, const Conv2dWeights& weights, const Sink& out,
                  const Conv2dOptions& options) {
  const std::string& label = options.label;
  const Shape& in = input.shape();
  if (in.size() != 4) throw Error(label + ": input must be NHWC [N,H,W,Cin], got shape " + shapeString(in));
  if (in[3] != weights.cin())
    throw Error(label + ": input " + shapeString(in) + " has " + std::to_string(in[3]) + " channels but " +
                weightsDesc(weights) + " expect Cin = " + std::to_string(weights.cin()));
  Shape expected = conv2dOutputShape(in, weights);
  if (out.shape() != expected)
    throw Error(label + ": output sink has shape " + shapeString(out.shape()) + ", expected " + shapeString(expected) +
                " for input " + shapeString(in) + " and " + weightsDesc(weights));
  if (overlaps(rangesOf(tensorsRead(input)), rangesOf(tensorsWritten(out))))
    throw Error(label + ": the output sink writes memory the input expression reads (in-place convolution)");

  ConvProblem prob;
  prob.n = in[0], prob.h = in[1], prob.w = in[2], prob.cin = in[3];
  prob.ho = expected[1], prob.wo = expected[2], prob.cout = expected[3];
  prob.p = weights.params();

  ConvTile forced;
  if (options.tileM || options.tileN) {
    forced = findConvTile(options.tileM, options.tileN);
    if (options.lanes) {
      const int tm = options.tileM / 8;
      const bool ok = (tm == 1 || tm == 2 || tm == 4 || tm == 8) && options.tileM == 8 * tm &&
                      (options.tileN == 32 || options.tileN == 64);
      if (!ok || ctx.info().subgroupSize != 8)
        throw Error(label + ": no lanes tile " + std::to_string(options.tileM) + "x" + std::to_string(options.tileN) +
                    " (tileM 8, 16, 32 or 64, tileN 32 or 64, subgroup size 8; the device has " +
                    std::to_string(ctx.info().subgroupSize) + ")");
      forced = ConvTile::lanesTile(tm, options.tileN / 32);
    } else if (!forced.valid()) {
      std::string list;
      for (auto& t : convTiles()) list += (list.empty() ? "" : ", ") + std::to_string(t.bm) + "x" + std::to_string(t.bn);
      throw Error(label + ": no GEMM tile " + std::to_string(options.tileM) + "x" + std::to_string(options.tileN) +
                  " (available: " + list + ")");
    }
  }
  ConvContext cc{ctx.info(), weights, options.scratch != nullptr, forced, convInputRawHalf(input)};
  ConvPlan plan;
  if (options.candidate) {
    if (options.algo != ConvAlgo::Auto || forced.valid())
      throw Error(label + ": a forced candidate excludes a forced algorithm or tile");
    plan = planConvCandidate(*options.candidate, prob, cc, label);
  } else if (options.algo == ConvAlgo::Auto && !forced.valid() && weights.tuner() && weights.tuner()->enabled()) {
    plan = weights.tuner()->plan(prob, cc, label);  // measured (or cached) choice; the rule where none runs
  } else {
    plan = planConv(options.algo, prob, cc, label);
  }

  Conv2dInfo info;
  info.algo = plan.algo;
  info.skipped = plan.skipped;
  info.tile = plan.tile.str();
  info.source = plan.source;
  if (plan.candidate) info.candidate = plan.candidate->name();
  ConvCall call{ctx, seq, prob, input, weights, out, label, info};
  switch (plan.algo) {
    case ConvAlgo::General: recordConvGeneral(call, plan.tile); break;
    case ConvAlgo::GemmV2: recordConvGemmV2(call, plan.tile); break;
    case ConvAlgo::Winograd: {
      recordConvWinograd(call, plan.tile, *options.scratch, options.winogradBandTiles);
      break;
    }
    case ConvAlgo::Coop: recordConvCoop(call, options.scratch, plan.candidate ? &*plan.candidate : nullptr); break;
    case ConvAlgo::Direct: recordConvDirect(call, options.scratch, plan.candidate ? plan.candidate->splitK : 1); break;
    case ConvAlgo::CoopWinograd:
      recordConvCoopWinograd(call, *options.scratch, plan.candidate ? &*plan.candidate : nullptr,
                             options.winogradBandTiles);
      break;
    case ConvAlgo::CoopWinogradRows:
      recordConvCoopWinogradRows(call, *options.scratch,
                                 plan.candidate ? convCoopGemmTile(*plan.candidate) : coopWinogradRowsGemmTile(prob),
                                 options.winogradBandTiles);
      break;
    case ConvAlgo::Auto: throw Error(label + ": internal error: no algorithm planned");
  }
  return info;
}

}  // namespace sdgen::ops
