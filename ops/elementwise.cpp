#include "ops/elementwise.h"

#include <algorithm>

#include "engine/error.h"
#include "engine/param_block.h"
#include "graph/expr_codegen.h"
#include "graph/expr_nodes.h"

namespace sdgen::ops {

using namespace graph;

static constexpr int kThreads = 256;        // shaders/elementwise.slang kElementwiseThreads
static constexpr int kHeaderWords = 6;      // shaders/elementwise.slang kElementwiseHeaderWords
static constexpr int64_t kMaxGridX = 65535;

std::vector<MemRange> rangesOf(const std::vector<TensorView>& tensors) {
  std::vector<MemRange> out;
  for (auto& t : tensors) out.push_back({t.address, t.extentBytes()});
  return out;
}

static std::string wrapperSource(const std::string& e, const std::string& s, bool vec, bool linear, bool check) {
  return "import sdgen;\nimport expr;\nimport elementwise;\n"
         "typealias E = " + e + ";\ntypealias S = " + s + ";\n"
         "[shader(\"compute\")]\n[numthreads(256, 1, 1)]\n"
         "void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n"
         "  elementwiseMain<E, S, " + (vec ? "1" : "0") + ", " + (linear ? "1" : "0") + ", " + (check ? "1" : "0") +
         ">(group, local);\n}\n";
}

ElementwiseInfo elementwise(Context& ctx, CommandSequence& seq, const Expr& value, const Sink& out,
                            const ElementwiseOptions& options) {
  const Shape shape = out.shape();
  Expr e;
  try {
    e = broadcast(value, shape);
  } catch (const Error& err) {
    throw Error(options.label + ": value of shape " + shapeString(value.shape()) +
                " cannot be broadcast to the output shape " + shapeString(shape));
  }
  Shape s4 = pad4(shape);
  ElementwiseInfo info;
  info.vector = options.vector.value_or(s4[3] % 4 == 0);
  if (info.vector && s4[3] % 4 != 0)
    throw Error(options.label + ": vector path forced but the innermost dimension " + std::to_string(s4[3]) +
                " is not a multiple of 4");
  info.linear = options.linear && isLinear(e) && isLinear(out);
  const int64_t items = numel(shape) / (info.vector ? 4 : 1);
  if (numel(shape) >= (int64_t(1) << 31)) throw Error(options.label + ": tensors over 2^31 elements are not supported");

  ParamBlock params;
  for (int i = 0; i < kHeaderWords; ++i) params.u32(0);
  params.set(0, static_cast<uint32_t>(s4[1]));
  params.set(1, static_cast<uint32_t>(s4[2]));
  params.set(2, static_cast<uint32_t>(s4[3]));
  params.set(3, static_cast<uint32_t>(items));
  ExprCodegen gen(params, {info.vector, info.linear});
  info.exprType = gen.emit(e);
  info.sinkType = gen.emit(out);
  info.nativeVectorNodes = gen.nativeVectorNodes();
  info.scalarWrappedNodes = gen.scalarWrappedNodes();

  std::vector<TensorView> read = tensorsRead(e), sinkReads = tensorsRead(out);
  read.insert(read.end(), sinkReads.begin(), sinkReads.end());
  auto reads = rangesOf(read), writes = rangesOf(tensorsWritten(out));

  auto launch = [&](bool check, int64_t firstItem, int64_t groups) {
    KernelSource src;
    src.generated = wrapperSource(info.exprType, info.sinkType, info.vector, info.linear, check);
    src.label = options.label;
    int64_t gx = std::min(groups, kMaxGridX), gy = (groups + gx - 1) / gx;
    params.set(4, static_cast<uint32_t>(firstItem));
    params.set(5, static_cast<uint32_t>(gx));
    seq.dispatch(ctx.kernels().request(src), {uint32_t(gx), uint32_t(gy), 1}, params, reads, writes,
                 options.label + (check ? "" : " (interior)"));
    info.dispatches++;
  };

  int64_t whole = items / kThreads;
  int64_t interiorGroups = 0;
  if (options.splitInterior && whole > 0) {
    int64_t gx = std::min(whole, kMaxGridX);
    interiorGroups = gx * (whole / gx);  // a full rectangle of groups: no thread outside the range
    launch(false, 0, interiorGroups);
  }
  int64_t rest = items - interiorGroups * kThreads;
  if (rest > 0) launch(true, interiorGroups * kThreads, (rest + kThreads - 1) / kThreads);
  return info;
}

}  // namespace sdgen::ops
