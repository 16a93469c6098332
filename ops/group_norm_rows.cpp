#include "ops/group_norm_rows.h"

#include <array>
#include <cstdlib>
#include <vector>

#include "engine/error.h"
#include "engine/param_block.h"
#include "graph/expr_codegen.h"
#include "ops/elementwise.h"
#include "ops/norm.h"

namespace sdgen::ops {

using namespace graph;

static constexpr int kHeaderWords = 6;   // shaders/group_norm_rows.slang kGroupNormRowsHeaderWords

int groupNormRowsHeld(int64_t p, int64_t cg, int vec, int threads) {
  int64_t maxPixels = kGroupNormRowsHeldPixels;
  if (const char* v = std::getenv("SDGEN_GROUP_NORM_HELD"); v && *v) maxPixels = std::atoll(v);  // 0: never
  const int64_t rows = threads / (cg / vec), held = (p + rows - 1) / rows;
  // fp32 values per invocation beside the kernel's ~20 other registers: 1024 invocations have 64 registers each.
  const int64_t budget = threads > 256 ? kGroupNormRowsHeldFloats1024 : kGroupNormRowsHeldFloats256;
  return held <= maxPixels && held * vec <= budget ? int(held) : 0;
}

void groupNormRows(Context& ctx, CommandSequence& seq, const Expr& x, const Expr& gamma, const Expr& beta, int groups,
                   float eps, bool silu, const TensorView& out, const std::string& label) {
  const Shape& s = x.shape();
  if (!groupNormRowsFit(s, groups))
    throw Error(label + ": the one-launch group norm needs NHWC [N, H, W, C] with C divisible by " +
                std::to_string(groups) + " groups of at most " + std::to_string(kGroupNormRowsMaxGroupChannels) +
                " channels, got " + shapeString(s));
  const int64_t n = s[0], p = s[1] * s[2], c = s[3], cg = c / groups;
  checkNormOperands(label, s, c, gamma, beta, out);
  if (n > 65535 || numel(s) >= (int64_t(1) << 31)) throw Error(label + ": too large (" + shapeString(s) + ")");
  const int vec = cg % 4 == 0 ? 4 : 1;
  // 1024 invocations keep more of a large group's loads in flight; small groups are done sooner by 256
  // (H200, session 21: 2560 elements per group 0.0052 ms with 256, 0.0060 with 1024; 40960: 0.034 / 0.025).
  const int threads = p * cg <= kGroupNormRowsSmallGroup ? 256 : 1024;
  const int held = groupNormRowsHeld(p, cg, vec, threads);
  ParamBlock params;
  params.u32(uint32_t(p)).u32(uint32_t(c)).u32(uint32_t(cg)).address(out.address).f32(eps);
  if (params.size() != kHeaderWords) throw Error("group norm rows: header layout mismatch");
  ExprCodegen gen(params, {vec == 4, false});
  const std::string xType = gen.emit(reshape(x, {n, p, 1, c}));
  const std::string gType = gen.emit(reshape(gamma, {1, 1, 1, c}));
  const std::string bType = gen.emit(reshape(beta, {1, 1, 1, c}));
  KernelSource src;
  src.generated = "import sdgen;\nimport expr;\nimport group_norm_rows;\ntypealias X = " + xType +
                  ";\ntypealias G = " + gType + ";\ntypealias Bt = " + bType + ";\n[shader(\"compute\")]\n"
                  "[numthreads(" + std::to_string(threads) + ", 1, 1)]\n"
                  "void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n"
                  "  groupNormRowsMain<X, G, Bt, " + (out.dtype == DType::F16 ? "F16Storage" : "F32Storage") + ", " +
                  std::to_string(vec) + ", " + (silu ? "1" : "0") + ", " + std::to_string(threads) + ", " +
                  std::to_string(held) + ">(group, local);\n}\n";
  src.label = label;
  const std::array<uint32_t, 3> grid{uint32_t(groups), uint32_t(n), 1};
  seq.dispatch(ctx.kernels().request(src), grid, params, rangesOf(tensorsRead({x, gamma, beta})),
               rangesOf({out}), label);
}

}  // namespace sdgen::ops
