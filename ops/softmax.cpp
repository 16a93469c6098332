#include "ops/softmax.h"

#include "engine/error.h"
#include "engine/param_block.h"
#include "graph/expr_codegen.h"
#include "graph/expr_nodes.h"
#include "ops/elementwise.h"

namespace sdgen::ops {

using namespace graph;

static constexpr int kHeaderWords = 4;  // shaders/softmax.slang kSoftmaxHeaderWords

void softmax(Context& ctx, CommandSequence& seq, const Expr& input, const Sink& out, const std::string& label) {
  if (input.shape() != out.shape())
    throw Error(label + ": input shape " + shapeString(input.shape()) + " differs from output shape " +
                shapeString(out.shape()));
  Shape s = pad4(input.shape());
  int64_t rows = s[0] * s[1] * s[2];
  if (rows > ctx.info().maxWorkgroupCount[0]) throw Error(label + ": " + std::to_string(rows) + " rows exceed the grid");
  ParamBlock params;
  params.u32(uint32_t(s[0])).u32(uint32_t(s[1])).u32(uint32_t(s[2])).u32(uint32_t(s[3]));
  if (params.size() != kHeaderWords) throw Error("softmax: header layout mismatch");
  ExprCodegen gen(params, {false, false});
  std::string e = gen.emit(input), k = gen.emit(out);
  KernelSource src;
  src.generated = "import sdgen;\nimport expr;\nimport softmax;\ntypealias E = " + e + ";\ntypealias S = " + k +
                  ";\n[shader(\"compute\")]\n[numthreads(256, 1, 1)]\n"
                  "void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n"
                  "  softmaxMain<E, S>(group, local);\n}\n";
  src.label = label;
  auto reads = rangesOf(tensorsRead(input)), sinkReads = rangesOf(tensorsRead(out));
  reads.insert(reads.end(), sinkReads.begin(), sinkReads.end());
  seq.dispatch(ctx.kernels().request(src), {uint32_t(rows), 1, 1}, params, reads, rangesOf(tensorsWritten(out)), label);
}

}  // namespace sdgen::ops
