#include "ops/reduce.h"

#include "engine/error.h"
#include "engine/param_block.h"
#include "graph/expr_codegen.h"
#include "ops/conv2d_plan.h"
#include "ops/elementwise.h"

#include <algorithm>

namespace sdgen::ops {

using namespace graph;

static constexpr int kHeaderWords = 9;  // shaders/reduce.slang kReduceHeaderWords

int chooseReduceParts(const DeviceInfo& device, int64_t outputs, int64_t rows, int64_t rowElements) {
  if (useCpuGemmKernels(device) || outputs <= 0 || rows <= 0) return 1;
  constexpr int64_t kTargetWorkgroups = 512;  // ~4 per SM of an H100 (132)
  // Below this a workgroup's fixed cost dominates; a quarter of it where D % 4 != 0 (one element per load
  // instead of four: a 320-channel group norm's groups of 10 took 27 us for 2.6 M elements on the H200).
  const int64_t minElementsPerPart = rowElements % 4 == 0 ? 16384 : 4096;
  int64_t parts = (kTargetWorkgroups + outputs - 1) / outputs;
  parts = std::min<int64_t>(parts, rows * rowElements / minElementsPerPart);
  return int(std::clamp<int64_t>(parts, 1, kMaxReduceParts));
}

bool wholeRowsReducible(int64_t c, int64_t d) {
  const int64_t words = c * d / 4;
  return d % 4 == 0 && c >= 2 && words >= 1 && words <= 256 && 256 % words == 0;
}

ReduceSplit chooseReducePlan(const DeviceInfo& device, int64_t a, int64_t b, int64_t c, int64_t d) {
  ReduceSplit plan;
  plan.parts = chooseReduceParts(device, a * c, b, d);
  if (plan.parts == 1 || !wholeRowsReducible(c, d)) return plan;
  constexpr int64_t kTargetWorkgroups = 1024, kMinElements = 32768;
  plan.parts = int(std::clamp<int64_t>(std::min(kTargetWorkgroups / std::max<int64_t>(a, 1), b * c * d / kMinElements), 2,
                                       kMaxRowReduceParts));
  plan.wholeRows = true;
  return plan;
}

ReduceInfo sumAndSumOfSquares(Context& ctx, CommandSequence& seq, const Expr& input, const TensorView& out,
                              const std::string& label, const ReduceSplit& split) {
  const Shape& s = input.shape();
  if (s.size() != 4) throw Error(label + ": input must have shape [A, B, C, D], got " + shapeString(s));
  if (out.isInt32 || out.dtype != DType::F32 || !out.dense() || numel(out.shape) != s[0] * s[2] * 2)
    throw Error(label + ": output must be a dense fp32 tensor of " + std::to_string(s[0] * s[2] * 2) +
                " elements (sum and sum of squares per [A, C]), got " + shapeString(out.shape));
  if (s[0] * s[2] > 65535 * 65535ll) throw Error(label + ": too many outputs");
  const int parts = std::max(1, split.parts);
  const bool split2 = parts > 1 || split.wholeRows;  // partials, then a combine launch
  if (split2 && (split.partials.isInt32 || split.partials.dtype != DType::F32 || !split.partials.dense() ||
                 numel(split.partials.shape) < s[0] * s[2] * parts * 2))
    throw Error(label + ": split into " + std::to_string(parts) + " parts needs dense fp32 partials of " +
                std::to_string(s[0] * s[2] * parts * 2) + " elements, got " + shapeString(split.partials.shape));
  if (split.wholeRows && !wholeRowsReducible(s[2], s[3]))
    throw Error(label + ": the whole-rows reduction needs D % 4 == 0 and C * D / 4 dividing 256 (C >= 2), got " +
                shapeString(s));
  ReduceInfo info;
  info.vector = s[3] % 4 == 0;
  ParamBlock params;
  params.u32(uint32_t(s[0])).u32(uint32_t(s[1])).u32(uint32_t(s[2])).u32(uint32_t(s[3])).address(out.address);
  params.u32(uint32_t(parts)).address(split2 ? split.partials.address : 0);
  if (params.size() != kHeaderWords) throw Error("reduce: header layout mismatch");
  ExprCodegen gen(params, {info.vector, false});
  info.exprType = gen.emit(input);

  KernelSource src;
  const std::string call = split.wholeRows ? "reduceRowsMain<E>"
                                           : std::string("reduceMain<E, ") + (info.vector ? "1" : "0") + ", " +
                                                 (parts > 1 ? "1" : "0") + ">";
  src.generated = "import sdgen;\nimport expr;\nimport reduce;\ntypealias E = " + info.exprType +
                  ";\n[shader(\"compute\")]\n[numthreads(256, 1, 1)]\n"
                  "void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n  " + call +
                  "(group, local);\n}\n";
  src.label = label;
  const uint32_t outputs = uint32_t(s[0] * s[2]);
  // Workgroups along x: one per output (reduceMain) or per image (reduceRowsMain); parts along y.
  const uint32_t groups = split.wholeRows ? uint32_t(s[0]) : outputs;
  if (groups > ctx.info().maxWorkgroupCount[0] || uint32_t(parts) > ctx.info().maxWorkgroupCount[1])
    throw Error(label + ": " + std::to_string(groups) + " x " + std::to_string(parts) + " workgroups exceed the grid");
  if (!split2) {
    seq.dispatch(ctx.kernels().request(src), {groups, 1, 1}, params, rangesOf(tensorsRead(input)),
                 rangesOf({out}), label);
    return info;
  }
  seq.dispatch(ctx.kernels().request(src), {groups, uint32_t(parts), 1}, params, rangesOf(tensorsRead(input)),
               rangesOf({split.partials}),
               label + " (" + std::to_string(parts) + (split.wholeRows ? " parts of whole rows)" : " parts)"));
  // The combine launch reads only the header (A, C, out, P, partials): the same words, no expression.
  ParamBlock header;
  header.u32(uint32_t(s[0])).u32(uint32_t(s[1])).u32(uint32_t(s[2])).u32(uint32_t(s[3])).address(out.address);
  header.u32(uint32_t(parts)).address(split.partials.address);
  KernelSource combine;
  if (split.wholeRows) {  // hundreds of parts: a workgroup per output
    combine.generated = "import sdgen;\nimport reduce;\n[shader(\"compute\")]\n[numthreads(64, 1, 1)]\n"
                        "void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n"
                        "  reduceCombineTreeMain(group, local);\n}\n";
    combine.label = "reduce combine tree";
    if (outputs > ctx.info().maxWorkgroupCount[0]) throw Error(label + ": too many outputs for the combine");
    seq.dispatch(ctx.kernels().request(combine), {outputs, 1, 1}, header, rangesOf({split.partials}), rangesOf({out}),
                 label + " combine");
    return info;
  }
  combine.generated = "import sdgen;\nimport reduce;\n[shader(\"compute\")]\n[numthreads(64, 1, 1)]\n"
                      "void main(uint3 id : SV_DispatchThreadID) { reduceCombineMain(id); }\n";
  combine.label = "reduce combine";
  seq.dispatch(ctx.kernels().request(combine), {(outputs + 63) / 64, 1, 1}, header, rangesOf({split.partials}),
               rangesOf({out}), label + " combine");
  return info;
}

}  // namespace sdgen::ops
