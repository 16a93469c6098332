#include "ops/reduce.h"

#include "engine/error.h"
#include "engine/param_block.h"
#include "graph/expr_codegen.h"
#include "ops/elementwise.h"

namespace sdgen::ops {

using namespace graph;

static constexpr int kHeaderWords = 6;  // shaders/reduce.slang kReduceHeaderWords

ReduceInfo sumAndSumOfSquares(Context& ctx, CommandSequence& seq, const Expr& input, const TensorView& out,
                              const std::string& label) {
  const Shape& s = input.shape();
  if (s.size() != 4) throw Error(label + ": input must have shape [A, B, C, D], got " + shapeString(s));
  if (out.isInt32 || out.dtype != DType::F32 || !out.dense() || numel(out.shape) != s[0] * s[2] * 2)
    throw Error(label + ": output must be a dense fp32 tensor of " + std::to_string(s[0] * s[2] * 2) +
                " elements (sum and sum of squares per [A, C]), got " + shapeString(out.shape));
  if (s[0] * s[2] > 65535 * 65535ll) throw Error(label + ": too many outputs");
  ReduceInfo info;
  info.vector = s[3] % 4 == 0;
  ParamBlock params;
  params.u32(uint32_t(s[0])).u32(uint32_t(s[1])).u32(uint32_t(s[2])).u32(uint32_t(s[3])).address(out.address);
  if (params.size() != kHeaderWords) throw Error("reduce: header layout mismatch");
  ExprCodegen gen(params, {info.vector, false});
  info.exprType = gen.emit(input);

  KernelSource src;
  src.generated = "import sdgen;\nimport expr;\nimport reduce;\ntypealias E = " + info.exprType +
                  ";\n[shader(\"compute\")]\n[numthreads(256, 1, 1)]\n"
                  "void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n"
                  "  reduceMain<E, " + (info.vector ? "1" : "0") + ">(group, local);\n}\n";
  src.label = label;
  uint32_t groups = uint32_t(s[0] * s[2]);
  if (groups > ctx.info().maxWorkgroupCount[0]) throw Error(label + ": " + std::to_string(groups) + " outputs exceed the grid");
  seq.dispatch(ctx.kernels().request(src), {groups, 1, 1}, params, rangesOf(tensorsRead(input)),
               rangesOf({out}), label);
  return info;
}

}  // namespace sdgen::ops
