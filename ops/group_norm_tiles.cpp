#include "ops/group_norm_tiles.h"

#include <algorithm>
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

static constexpr int kHeaderWords = 13;  // shaders/group_norm_tiles.slang kGroupNormTilesHeaderWords

// 4 channels per column where whole columns exist and a column spans at most two groups (cg >= 4).
static int vecOf(int64_t c, int64_t cg) { return c % 4 == 0 && cg >= 4 ? 4 : 1; }

bool groupNormTilesFit(const Shape& s, int groups) {
  if (s.size() != 4 || groups < 1 || groups > kGroupNormTilesThreads || s[3] % groups != 0) return false;
  const int64_t columns = s[3] / vecOf(s[3], s[3] / groups);
  return columns <= int64_t(kGroupNormTilesThreads) * kGroupNormTilesMaxColumnsPerThread && s[0] >= 1 &&
         s[0] <= 65535 && numel(s) >= 1 && numel(s) < (int64_t(1) << 31);
}

GroupNormTilesPlan groupNormTilesPlan(const Shape& s, int groups) {
  GroupNormTilesPlan plan;
  const int64_t n = s[0], p = s[1] * s[2], c = s[3];
  plan.vec = vecOf(c, c / groups);
  const int64_t columns = c / plan.vec;
  plan.columnsPerRow = int(std::min<int64_t>(columns, kGroupNormTilesThreads));
  plan.rows = kGroupNormTilesThreads / plan.columnsPerRow;
  plan.columnsPerThread = int((columns + plan.columnsPerRow - 1) / plan.columnsPerRow);
  // Blocks of whole rows of pixels: as many per image as fill the target, at least one pixel row each.
  int64_t target = kGroupNormTilesTargetWorkgroups;
  if (const char* env = std::getenv("SDGEN_GROUP_NORM_WORKGROUPS"); env && *env)
    target = std::clamp<int64_t>(std::atoll(env), 1, 65535);  // the grid's x limit
  const int64_t wanted = std::clamp<int64_t>((target + n - 1) / n, 1, (p + plan.rows - 1) / plan.rows);
  const int64_t perBlock = (p + wanted - 1) / wanted;
  plan.pixelsPerBlock = (perBlock + plan.rows - 1) / plan.rows * plan.rows;
  plan.blocks = (p + plan.pixelsPerBlock - 1) / plan.pixelsPerBlock;
  return plan;
}

Shape groupNormTilesPartials(const Shape& s, int groups) {
  return {s[0], groupNormTilesPlan(s, groups).blocks, groups, 2};
}

void groupNormTiles(Context& ctx, CommandSequence& seq, const Expr& x, const Expr& gamma, const Expr& beta, int groups,
                    float eps, bool silu, const TensorView& partials, const TensorView& out, const std::string& label,
                    const TensorView* copy) {
  const Shape& s = x.shape();
  if (!groupNormTilesFit(s, groups))
    throw Error(label + ": the tiled group norm needs NHWC [N, H, W, C] (N <= 65535, under 2^31 elements) with C "
                "divisible by 1 to " + std::to_string(kGroupNormTilesThreads) + " groups and at most " +
                std::to_string(kGroupNormTilesThreads * kGroupNormTilesMaxColumnsPerThread) +
                " columns, got " + shapeString(s) + " in " + std::to_string(groups) + " groups");
  const int64_t n = s[0], p = s[1] * s[2], c = s[3], cg = c / groups;
  checkNormOperands(label, s, c, gamma, beta, out);
  if (copy && (copy->isInt32 || !copy->dense() || copy->shape != s || copy->dtype != out.dtype))
    throw Error(label + ": the copy of the input must be a dense tensor of the output's dtype and shape " +
                shapeString(s) + ", got " + shapeString(copy->shape));
  const GroupNormTilesPlan plan = groupNormTilesPlan(s, groups);
  const int64_t partialFloats = n * plan.blocks * groups * 2;  // groupNormTilesPartials' elements
  if (partials.isInt32 || partials.dtype != DType::F32 || !partials.dense() || numel(partials.shape) < partialFloats)
    throw Error(label + ": the partial sums need a dense fp32 tensor of at least " + std::to_string(partialFloats) +
                " elements, got " + shapeString(partials.shape));
  const TensorView used{partials.address, DType::F32, {partialFloats}, {1}};
  ParamBlock header;
  header.u32(uint32_t(p)).u32(uint32_t(c)).u32(uint32_t(cg)).u32(uint32_t(groups));
  header.u32(uint32_t(plan.pixelsPerBlock)).u32(uint32_t(plan.blocks)).address(partials.address);
  header.address(out.address).f32(eps).address(copy ? copy->address : 0);
  if (header.size() != kHeaderWords) throw Error("group norm tiles: header layout mismatch");
  // The generics every entry ends with: VEC, then (SILU for the normalization) TQ, R, K.
  const std::string vec = std::to_string(plan.vec) + ", ";
  const std::string layout = std::to_string(plan.columnsPerRow) + ", " + std::to_string(plan.rows) + ", " +
                             std::to_string(plan.columnsPerThread);
  const std::string entry = "[shader(\"compute\")]\n[numthreads(" + std::to_string(kGroupNormTilesThreads) +
                            ", 1, 1)]\nvoid main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n  ";
  const std::array<uint32_t, 3> grid{uint32_t(plan.blocks), uint32_t(n), 1};
  const Expr xs = reshape(x, {n, p, 1, c});
  {
    ParamBlock params = header;
    ExprCodegen gen(params, {plan.vec == 4, false});
    const std::string xType = gen.emit(xs);
    KernelSource src;
    src.generated = "import sdgen;\nimport expr;\nimport group_norm_tiles;\ntypealias X = " + xType + ";\n" + entry +
                    "groupNormTileStatsMain<X, " + vec + layout + ">(group, local);\n}\n";
    src.label = label + " stats";
    seq.dispatch(ctx.kernels().request(src), grid, params, rangesOf(tensorsRead(x)), rangesOf({used}),
                 label + " stats");
  }
  ParamBlock params = header;
  ExprCodegen gen(params, {plan.vec == 4, false});
  const std::string xType = gen.emit(xs);
  const std::string gType = gen.emit(reshape(gamma, {1, 1, 1, c}));
  const std::string bType = gen.emit(reshape(beta, {1, 1, 1, c}));
  KernelSource src;
  src.generated = "import sdgen;\nimport expr;\nimport group_norm_tiles;\ntypealias X = " + xType +
                  ";\ntypealias Gm = " + gType + ";\ntypealias Bt = " + bType + ";\n" + entry +
                  "groupNormTileApplyMain<X, Gm, Bt, " + (out.dtype == DType::F16 ? "F16Storage" : "F32Storage") +
                  ", " + vec + (silu ? "1, " : "0, ") + (copy ? "1, " : "0, ") + layout + ">(group, local);\n}\n";
  src.label = label;
  std::vector<TensorView> reads = tensorsRead({x, gamma, beta});
  reads.push_back(used);
  std::vector<TensorView> writes{out};
  if (copy) writes.push_back(*copy);
  seq.dispatch(ctx.kernels().request(src), grid, params, rangesOf(reads), rangesOf(writes), label);
}

}  // namespace sdgen::ops
