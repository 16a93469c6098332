#include "ops/layer_norm_rows.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/param_block.h"
#include "graph/expr_codegen.h"
#include "ops/elementwise.h"
#include "ops/norm.h"

namespace sdgen::ops {

using namespace graph;

static constexpr int kHeaderWords = 5;   // shaders/layer_norm_rows.slang kLayerNormRowsHeaderWords
static constexpr int kThreads = 64;      // kLayerNormRowsThreads
static constexpr int kSubgroupThreads = 256;  // kLayerNormSubgroupThreads

LayerNormRowsLayout layerNormRowsLayout(const DeviceInfo& info, int64_t d) {
  const char* env = std::getenv("SDGEN_LAYER_NORM_ROWS");
  if (env && std::string(env) == "workgroup") return {};
  const uint32_t smallest = info.minSubgroupSize ? info.minSubgroupSize : info.subgroupSize;
  const uint32_t largest = info.maxSubgroupSize ? info.maxSubgroupSize : info.subgroupSize;
  if (smallest == 0 || largest == 0 || largest > uint32_t(kSubgroupThreads)) return {};
  const int64_t quads = (d / 4 + smallest - 1) / smallest;
  if (quads > kLayerNormRowsMaxSubgroupQuads) return {};
  return {int(kSubgroupThreads / largest), int(quads)};
}

void layerNormRows(Context& ctx, CommandSequence& seq, const Expr& x, const Expr& gamma, const Expr& beta, float eps,
                   const TensorView& out, const std::string& label) {
  const Shape& s = x.shape();
  if (s.empty()) throw Error(label + ": layer norm needs at least one axis, got a scalar");
  const int64_t d = s.back(), rows = numel(s) / std::max<int64_t>(d, 1);
  if (!layerNormRowsFit(d))
    throw Error(label + ": the one-launch layer norm needs rows of a multiple of 4 elements up to " +
                std::to_string(kLayerNormRowsMaxWidth) + ", got " + shapeString(s));
  checkNormOperands(label, s, d, gamma, beta, out);
  if (rows >= int64_t(65535) * 65535 || rows * d >= (int64_t(1) << 31))
    throw Error(label + ": too many rows (" + std::to_string(rows) + ")");
  ParamBlock params;
  params.u32(uint32_t(rows)).u32(uint32_t(d)).address(out.address).f32(eps);
  if (params.size() != kHeaderWords) throw Error("layer norm rows: header layout mismatch");
  ExprCodegen gen(params, {true, false});
  const std::string xType = gen.emit(reshape(x, {rows, 1, 1, d}));
  const std::string gType = gen.emit(reshape(gamma, {1, 1, 1, d}));
  const std::string bType = gen.emit(reshape(beta, {1, 1, 1, d}));
  const LayerNormRowsLayout layout = layerNormRowsLayout(ctx.info(), d);
  const std::string storage = out.dtype == DType::F16 ? "F16Storage" : "F32Storage";
  KernelSource src;
  src.generated = "import sdgen;\nimport expr;\nimport layer_norm_rows;\ntypealias X = " + xType +
                  ";\ntypealias G = " + gType + ";\ntypealias Bt = " + bType + ";\n[shader(\"compute\")]\n"
                  "[numthreads(" + std::to_string(layout.rows ? kSubgroupThreads : kThreads) + ", 1, 1)]\n"
                  "void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n  " +
                  (layout.rows ? "layerNormSubgroupRowsMain<X, G, Bt, " + storage + ", " + std::to_string(layout.rows) +
                                     ", " + std::to_string(layout.quadsPerLane)
                               : "layerNormRowsMain<X, G, Bt, " + storage) +
                  ">(group, local);\n}\n";
  src.label = label;
  const int64_t workgroups = layout.rows ? (rows + layout.rows - 1) / layout.rows : rows;
  const std::array<uint32_t, 3> groups{uint32_t(std::min<int64_t>(workgroups, 65535)),
                                       uint32_t((workgroups + 65534) / 65535), 1};
  seq.dispatch(ctx.kernels().request(src), groups, params, rangesOf(tensorsRead({x, gamma, beta})),
               rangesOf({out}), label);
}

}  // namespace sdgen::ops
