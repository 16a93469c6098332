// Linear layers and batched matmul against float64 CPU references, in fp32 and fp16 storage: odd shapes
// (M, N, K not multiples of 4, K = 1, K = 1000), batched inputs, bias on/off, both row tiles, fused GEGLU
// prologue, residual-add epilogue and a fused QKV projection writing through a partition sink; the tensor-core
// kernel's tiles where the device has it (its device rule and compile tests: gemm_coop_rule_test.cpp).
// Error measure: max |gpu - ref| / max(1, |ref|), with ref rounded to fp16 when the output is stored in fp16.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "engine/command_sequence.h"
#include "graph/expr.h"
#include "graph/expr_nodes.h"
#include "ops/linear.h"
#include "ops/conv2d_plan.h"
#include "ops/conv2d_scratch.h"
#include "ops/linear_gemm.h"
#include "tests/graph/tensor_fixture.h"
#include "tests/ops/gemm_coop_test_support.h"

namespace sdgen {
namespace {

using namespace graph;
using test::doubleBuffered;
using test::flushed;
using test::fixedShape;

class LinearTest : public test::TensorTest {
 protected:

  // Host weights [N, K] and bias [N]; the reference sees the weights as stored (rounded to fp16 if so).
  struct HostLinear {
    int64_t n, k;
    std::vector<float> w, b;
    std::unique_ptr<ops::LinearWeights> gpu;
  };
  HostLinear weights(int64_t n, int64_t k, bool bias, uint32_t seed) {
    HostLinear h{n, k, test::randomFloats(n * k, seed), {}, {}};
    if (bias) h.b = test::randomFloats(n, seed + 1);
    h.gpu = std::make_unique<ops::LinearWeights>(ctx(), h.w, n, k, h.b, dt(), "test linear");
    for (auto& v : h.w) v = test::roundTo(dt(), v);
    return h;
  }
  // x W^T + b over the rows of x's reference values.
  std::vector<double> reference(const Expr& x, const HostLinear& l) {
    std::vector<double> xv = test::evalReference(x, mem_);
    int64_t rows = static_cast<int64_t>(xv.size()) / l.k;
    std::vector<double> y(rows * l.n);
    for (int64_t m = 0; m < rows; ++m)
      for (int64_t n = 0; n < l.n; ++n) {
        double acc = l.b.empty() ? 0.0 : l.b[n];
        for (int64_t k = 0; k < l.k; ++k) acc += xv[m * l.k + k] * double(l.w[n * l.k + k]);
        y[m * l.n + n] = acc;
      }
    return y;
  }
  // Compares and returns the error measure (also recorded as a test property).
};

std::string name(int64_t m, int64_t n, int64_t k) {
  return "M " + std::to_string(m) + " N " + std::to_string(n) + " K " + std::to_string(k);
}

TEST_P(LinearTest, OddShapesWithAndWithoutBias) {
  struct Case { int64_t m, n, k; };
  // Rows <= 16 take the 16-row tile, more the 64-row tile; N, K off multiples of 4 take the scalar paths.
  const Case cases[] = {{1, 1, 1}, {7, 5, 3}, {13, 9, 1}, {70, 67, 45}, {33, 70, 1000}, {5, 8, 12}, {66, 130, 20}};
  uint32_t seed = 100;
  for (const Case& c : cases)
    for (bool bias : {true, false}) {
      Expr x = input({c.m, c.k}, seed++);
      auto l = weights(c.n, c.k, bias, seed++);
      TensorView out = output({c.m, c.n});
      CommandSequence seq(ctx());
      auto info = ops::linear(ctx(), seq, x, *l.gpu, bufferSink(out));
      seq.run();
      EXPECT_EQ(info.vectorA, c.k % 4 == 0);
      EXPECT_EQ(info.vectorOut, c.n % 4 == 0);
      // GPUs with fp16 weights take the few-row kernel for M <= 8 rows (its tile: the rows it holds).
      const auto few = ops::chooseGemvTile(c.m, c.n, c.k, ctx().info(), dt() == DType::F16);
      EXPECT_EQ(info.tileM, few ? few->bm : ops::chooseGemmTile(c.m, c.n, c.k, ctx().info(), dt() == DType::F16).bm);
      compare(read(out), reference(x, l), name(c.m, c.n, c.k) + (bias ? " bias" : " no bias"));
    }
}

TEST_P(LinearTest, CoopMatrixKernelWhereSupported) {
  const bool coop = ops::gemmCoopSupported(ctx().info());
  struct Case { int64_t m, n, k; };
  const Case cases[] = {{70, 67, 45}, {130, 96, 320}, {33, 70, 1000}, {256, 640, 64}, {300, 264, 136}, {90, 132, 1000}};
  const ops::GemmTile tiles[] = {ops::GemmTile::coopTile(64, 64, 32, 2, 2), ops::GemmTile::coopTile(64, 128, 32, 2, 4),
                                 ops::GemmTile::coopTile(128, 128, 32, 4, 4), ops::GemmTile::coopTile(128, 128, 32, 2, 4),
                                 ops::GemmTile::coopTile(128, 128, 32, 4, 2),  // the large-problem default
                                 ops::GemmTile::coopTile(64, 160, 32, 2, 5),   // the one-wave tile
                                 ops::GemmTile::coopTile(128, 256, 32, 4, 4), ops::GemmTile::coopTile(128, 128, 64, 4, 4),
                                 ops::GemmTile::coopTile(128, 128, 32, 4, 4, true),
                                 ops::GemmTile::coopTile(64, 64, 32, 2, 2, false, 3),    // split-K (scratch given)
                                 ops::GemmTile::coopTile(128, 128, 32, 4, 4, false, 5),  // parts past K: zero
                                 doubleBuffered(ops::GemmTile::coopTile(64, 64, 32, 2, 2)),
                                 doubleBuffered(ops::GemmTile::coopTile(128, 128, 32, 4, 4, false, 2)),
                                 flushed(ops::GemmTile::coopTile(64, 64, 32, 2, 2), 64),
                                 flushed(ops::GemmTile::coopTile(128, 128, 32, 4, 2), 96, true),
                                 flushed(ops::GemmTile::coopTile(256, 256, 32, 8, 4), 1024, true),
                                 // the split fp16-accumulator tile (ops::chooseSplitHalfTile)
                                 flushed(ops::GemmTile::coopTile(256, 256, 32, 8, 4, false, 3), 0, true),
                                 // session 40's candidates: the shape words compiled in (plain, flushed, split), the
                                 // 256 x 256 fp16-accumulator tile on 16-deep double-buffered slices, 256 x 128 and 256 x 160
                                 fixedShape(ops::GemmTile::coopTile(64, 64, 32, 2, 2)),
                                 fixedShape(flushed(ops::GemmTile::coopTile(256, 256, 32, 8, 4), 1024, true)),
                                 fixedShape(ops::GemmTile::coopTile(128, 128, 32, 4, 4, false, 5)),
                                 doubleBuffered(flushed(ops::GemmTile::coopTile(256, 256, 16, 8, 4), 0, true)),
                                 flushed(ops::GemmTile::coopTile(256, 128, 32, 4, 4), 1024, true),
                                 flushed(ops::GemmTile::coopTile(256, 160, 32, 4, 5), 1024, true)};
  ops::Conv2dScratch splitScratch(ctx());
  uint32_t seed = 1300;
  for (const Case& c : cases)
    for (const ops::GemmTile& tile : tiles) {
      Expr x = input({c.m, c.k}, seed++), r = input({c.m, c.n}, seed++), g = input({c.k}, seed++);
      Expr scaled = x * g;
      auto l = weights(c.n, c.k, true, seed++);
      TensorView out = output({c.m, c.n});
      CommandSequence seq(ctx());
      // Split-K keeps its partials in scratch; the other tiles get none, so the prologue stays in the GEMM.
      ops::LinearOptions o{.tile = tile, .scratch = tile.splitK > 1 || tile.flushK > 0 ? &splitScratch : nullptr,
                           .label = "coop linear"};
      const std::string what = name(c.m, c.n, c.k) + " " + tile.describe();
      if (!coop) {
        test::expectErrorContaining([&] { ops::linear(ctx(), seq, scaled, *l.gpu, bufferSink(out), o); },
                                    "coop linear: the cooperative-matrix GEMM needs a device");
        break;
      }
      if (dt() != DType::F16) {
        test::expectErrorContaining([&] { ops::linear(ctx(), seq, scaled, *l.gpu, bufferSink(out), o); },
                                    "coop linear: the cooperative-matrix GEMM needs packed fp16 weights");
        break;
      }
      if (!ops::coopTileProblem(tile, ctx().info()).empty()) {
        test::expectErrorContaining([&] { ops::linear(ctx(), seq, scaled, *l.gpu, bufferSink(out), o); },
                                    "coop linear: cooperative-matrix tile");
        continue;
      }
      if (tile.splitK > 1 && c.n % 4) {
        test::expectErrorContaining([&] { ops::linear(ctx(), seq, scaled, *l.gpu, bufferSink(out), o); },
                                    "coop linear: split-K needs N % 4 == 0");
        continue;
      }
      if (tile.splitK > 1) {
        ops::LinearOptions none = o;
        none.scratch = nullptr;
        test::expectErrorContaining([&] { ops::linear(ctx(), seq, scaled, *l.gpu, bufferSink(out), none); },
                                    "coop linear: split-K needs scratch memory");
      }
      if (tile.flushK > 0 && c.k > tile.flushK) {
        ops::LinearOptions none = o;
        none.scratch = nullptr;
        test::expectErrorContaining([&] { ops::linear(ctx(), seq, scaled, *l.gpu, bufferSink(out), none); },
                                    "coop linear: fp16 accumulation in chunks needs scratch memory");
      }
      auto info = ops::linear(ctx(), seq, scaled, *l.gpu, residualAdd(bufferSink(out), r), o);
      seq.run();
      EXPECT_TRUE(info.coopMatrix);
      EXPECT_EQ(info.splitK, tile.splitK);
      EXPECT_EQ(info.halfPartials, tile.splitK > 1) << what;  // an fp16 output: fp16 partials
      // Whole tiles on fp32 accumulators load the residual into them (the 256 x 640 x 64 case, split-K too).
      const bool whole = c.m % tile.bm == 0 && c.n % tile.bn == 0 && c.k % tile.bk == 0;
      EXPECT_EQ(info.residualPreloaded, whole && !tile.f16Accumulators) << what;
      auto ref = reference(scaled, l);
      auto rv = test::evalReference(r, mem_);
      double err = 0, scale = 0;
      auto got = read(out);
      for (size_t i = 0; i < ref.size(); ++i) {
        ref[i] += rv[i];
        err = std::max(err, std::isfinite(got[i]) ? std::abs(got[i] - ref[i]) : INFINITY);
        scale = std::max(scale, std::abs(ref[i]));
      }
      EXPECT_LE(err / scale, 5e-3) << what;
      std::printf("tensor cores %s: relative error %.3g\n", what.c_str(), err / scale);
    }
  // Split-K partials are fp16 only where every output is: an fp32 output, or SDGEN_SPLIT_PARTIALS=f32, keeps them
  // fp32; each way within the bar against float64.
  if (coop && dt() == DType::F16) {
    const ops::GemmTile split = ops::GemmTile::coopTile(64, 64, 32, 2, 2, false, 4);
    Expr x = input({90, 1000}, 1390);
    auto l = weights(132, 1000, true, 1391);
    for (const char* knob : {"", "f32"})
      for (DType outType : {DType::F16, DType::F32}) {
        const std::string what = std::string("split-K partials, ") + dtypeName(outType) + " output" +
                                 (*knob ? ", SDGEN_SPLIT_PARTIALS=f32" : "");
        if (*knob) setenv("SDGEN_SPLIT_PARTIALS", knob, 1);
        TensorView out = output({90, 132}, outType);
        CommandSequence seq(ctx());
        auto info = ops::linear(ctx(), seq, x, *l.gpu, bufferSink(out),
                                {.tile = split, .scratch = &splitScratch, .label = "split linear"});
        unsetenv("SDGEN_SPLIT_PARTIALS");
        seq.run();
        EXPECT_EQ(info.splitK, 4) << what;
        EXPECT_EQ(info.halfPartials, outType == DType::F16 && !*knob) << what;
        EXPECT_LE(test::errorOfScale(read(out), reference(x, l)), 5e-3) << what;
      }
  }
  // The engine's own choice for fp16 weights is the tensor-core kernel where the device has it: a plain fp16
  // input read raw, a computed one staged into fp16 scratch first (the UNet's layer norms, GEGLU gates), a
  // [B, S, K] input with padded rows read raw through its row stride.
  if (coop && dt() == DType::F16) {
    ops::Conv2dScratch scratch(ctx());
    for (int kind = 0; kind < 3; ++kind) {
      const int64_t m = 96 + 37 * kind, k = 64 + 8 * kind, n = 48 + 40 * kind;
      Expr x = input({m, k}, 77 + kind), g = input({k}, 80 + kind);
      Expr a = kind == 1 ? x * g : x;
      if (kind == 2) a = sliceLastDim(input({3, m / 3, 2 * k}, 90), 0, k);  // [B, S, K] rows of 2K elements
      auto l = weights(n, k, true, 78 + kind);
      TensorView out = output(kind == 2 ? Shape{3, m / 3, n} : Shape{m, n});
      CommandSequence seq(ctx());
      auto info = ops::linear(ctx(), seq, a, *l.gpu, bufferSink(out), {.scratch = &scratch});
      seq.run();
      EXPECT_TRUE(info.coopMatrix) << info.kernel;
      EXPECT_TRUE(info.rawA) << kind;
      EXPECT_EQ(info.stagedInput, kind == 1);
      compare(read(out), reference(a, l), "auto tensor cores, input kind " + std::to_string(kind));
    }
  }
}

// Which inputs the tensor-core kernel reads as a raw fp16 matrix (host rule, any device).
TEST_P(LinearTest, RawHalfInputRule) {
  Expr x = input({12, 16}, 5);
  EXPECT_EQ(ops::rawHalfRowStride(x, 16), dt() == DType::F16 ? 16 : 0);
  if (dt() != DType::F16) return;
  Expr wide = input({12, 40}, 6);
  EXPECT_EQ(ops::rawHalfRowStride(sliceLastDim(wide, 0, 16), 16), 40);                  // rows 80 bytes apart
  EXPECT_EQ(ops::rawHalfRowStride(sliceLastDim(input({3, 4, 48}, 7), 0, 16), 16), 48);  // [B, S, K] rows
  EXPECT_EQ(ops::rawHalfRowStride(sliceLastDim(input({12, 48}, 8), 8, 16), 16), 48);   // offset 16 bytes: aligned
  EXPECT_EQ(ops::rawHalfRowStride(sliceLastDim(input({12, 48}, 9), 4, 16), 16), 0);    // offset 8 bytes
  EXPECT_EQ(ops::rawHalfRowStride(input({12, 12}, 10), 12), 0);                         // K % 8 != 0
  EXPECT_EQ(ops::rawHalfRowStride(transpose(input({16, 12}, 11), 0, 1), 16), 0);        // K not contiguous
  EXPECT_EQ(ops::rawHalfRowStride(x * x, 16), 0);                                       // computed
}

std::vector<double> matmulReference(const std::vector<double>& a, const std::vector<double>& b, int64_t batches,
                                    int64_t m, int64_t k, int64_t n, bool bBatched);

// Every kernel variant forced on odd shapes (partial tiles in M, N and K, scalar paths): the shared-memory tiles
// and, where the subgroup size is 8 (lavapipe), the CPU lanes kernel with every rows-per-lane and column-group
// count; and a batched matmul through the lanes kernel (ExprB operand).
TEST_P(LinearTest, EveryKernelVariant) {
  std::vector<ops::GemmTile> tiles = {ops::GemmTile{64, 64, 16}, ops::GemmTile{16, 64, 16}};
  if (ctx().info().subgroupSize == 8)
    for (int r : {1, 2, 4, 8})
      for (int c : {1, 2}) tiles.push_back(ops::GemmTile::lanesTile(8, r, c));
  struct Case { int64_t m, n, k; };
  const Case cases[] = {{7, 8, 4}, {70, 68, 44}, {66, 132, 20}};  // the lanes kernel's rule needs K, N % 4 == 0
  uint32_t seed = 400;
  for (const Case& c : cases) {
    Expr x = input({c.m, c.k}, seed++);
    auto l = weights(c.n, c.k, true, seed++);
    for (const ops::GemmTile& t : tiles) {
      TensorView out = output({c.m, c.n});
      CommandSequence seq(ctx());
      auto info = ops::linear(ctx(), seq, x, *l.gpu, bufferSink(out), {.tile = t});
      seq.run();
      EXPECT_EQ(info.lanes, t.lanes);
      compare(read(out), reference(x, l),
              name(c.m, c.n, c.k) + " tile " + std::to_string(t.bm) + "x" + std::to_string(t.bn) +
                  (t.isLanes() ? " lanes" : ""));
    }
  }
  Expr a = input({2, 19, 12}, 500), b4 = input({2, 12, 12}, 502);
  for (const ops::GemmTile& t : tiles)
    for (const Expr& bb : {b4}) {
      const int64_t n = bb.shape()[2];
      TensorView out = output({2, 19, n});
      CommandSequence seq(ctx());
      ops::matmul(ctx(), seq, a, bb, bufferSink(out), {.tile = t});
      seq.run();
      compare(read(out),
              matmulReference(test::evalReference(a, mem_), test::evalReference(bb, mem_), 2, 19, 12, n, true),
              "matmul N " + std::to_string(n) + " tile " + std::to_string(t.bm) + "x" + std::to_string(t.bn) +
                  (t.isLanes() ? " lanes" : ""));
    }
}

// The few-row kernel (gemv.slang), forced on this device with every K split and word width: few rows (2 clamped rows of
// padding up to 7), K not a multiple of the subgroup or of 4, N off multiples of 8 and 4 (packed rows padded), an
// expression input (silu of a sum) and a fused sink (silu of a residual add), with and without bias, against
// float64. Then the rule: on GPUs M <= 8 rows of fp16 weights take it (SDGEN_GEMV=0: not), CPU devices keep the
// lanes kernel, and it refuses what it cannot run by name.
TEST_P(LinearTest, FewRowKernel) {
  const int sg = int(ctx().info().subgroupSize);
  struct Case { int64_t m, n, k; bool bias; };
  const Case cases[] = {{2, 40, 320, true}, {1, 12, 20, false}, {3, 100, 75, true}, {5, 64, 8, true},
                        {8, 36, 130, false}, {2, 520, 64, true}};
  uint32_t seed = 700;
  for (const Case& c : cases) {
    Expr a = input({c.m, c.k}, seed++), b = input({c.k}, seed++);
    Expr x = silu(a + b);
    auto l = weights(c.n, c.k, c.bias, seed++);
    Expr r = input({c.m, c.n}, seed++);
    const std::vector<double> rv = test::evalReference(r, mem_);
    std::vector<double> ref = reference(x, l);
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = (ref[i] + rv[i]) / (1 + std::exp(-(ref[i] + rv[i])));
    // Every K split with each word width over the cases, two per case (each compiles a kernel: lavapipe's time).
    const int ci = int(&c - cases);
    for (int variant : {ci % 4, 4 + (3 - ci % 4)}) {
      const int parts = 1 << (variant % 4), wordLanes = variant < 4 ? 1 : std::min(8, sg);
      const int rows = c.m <= 2 ? 2 : c.m <= 4 ? 4 : 8;
      const ops::GemmTile t = ops::GemmTile::gemvTile(rows, sg, parts, wordLanes);
      if (dt() != DType::F16) {  // packed fp32 weights are refused by name
        CommandSequence seq(ctx());
        TensorView out = output({c.m, c.n});
        test::expectErrorContaining([&] { ops::linear(ctx(), seq, x, *l.gpu, bufferSink(out), {.tile = t}); },
                                    "few-row kernel takes packed fp16 weights");
        break;
      }
      TensorView out = output({c.m, c.n});
      CommandSequence seq(ctx());
      auto info = ops::linear(ctx(), seq, x, *l.gpu, map(silu(kernelOutput({c.m, c.n}) + r), bufferSink(out)),
                              {.tile = t});
      seq.run();
      EXPECT_EQ(info.kernel, t.describe());
      compare(read(out), ref, name(c.m, c.n, c.k) + " " + t.describe());
    }
  }
  // The rule.
  DeviceInfo gpu = ctx().info();
  gpu.type = "discrete";
  gpu.subgroupSize = 32;
  gpu.maxWorkgroupInvocations = 1024;
  gpu.sharedMemoryPerWorkgroup = 49152;
  std::optional<ops::GemmTile> time = ops::chooseGemvTile(2, 20160, 1280, gpu, true);  // SD 1.5's time projections
  if (!ops::useCpuGemmKernels(gpu)) {
    ASSERT_TRUE(time);
    EXPECT_EQ(time->bm, 2);
    EXPECT_EQ(time->gemvWordLanes, 8);  // 2520 words, 315 subgroups of 8
    EXPECT_EQ(time->gemvParts, 8);
    std::optional<ops::GemmTile> mlp = ops::chooseGemvTile(2, 1280, 320, gpu, true);  // time linear_1
    ASSERT_TRUE(mlp);
    EXPECT_EQ(mlp->gemvWordLanes, 1);
    EXPECT_EQ(mlp->gemvParts, 8);  // 160 words: 8 parts of 40 of K (each at least a subgroup's width)
    EXPECT_EQ(ops::chooseGemvTile(2, 1280, 200, gpu, true)->gemvParts, 4);  // 8 parts would be 25 wide
    EXPECT_EQ(ops::chooseGemvTile(5, 1280, 320, gpu, true)->bm, 8);
    EXPECT_FALSE(ops::chooseGemvTile(9, 1280, 320, gpu, true));
    EXPECT_FALSE(ops::chooseGemvTile(2, 1280, 320, gpu, false));  // fp32 weights
    setenv("SDGEN_GEMV", "0", 1);
    EXPECT_FALSE(ops::chooseGemvTile(2, 1280, 320, gpu, true));
    unsetenv("SDGEN_GEMV");
  }
  EXPECT_FALSE(ops::chooseGemvTile(2, 1280, 320, ctx().info(), true).has_value() && ops::useCpuGemmKernels(ctx().info()));
  if (dt() == DType::F16) {  // more rows than the tile holds
    Expr x = input({5, 16}, 790);
    auto l = weights(8, 16, true, 791);
    TensorView out = output({5, 8});
    CommandSequence seq(ctx());
    test::expectErrorContaining(
        [&] { ops::linear(ctx(), seq, x, *l.gpu, bufferSink(out), {.tile = ops::GemmTile::gemvTile(4, sg, 1, 1)}); },
        "cannot take 5 rows");
  }
}

TEST_P(LinearTest, BatchedLeadingAxes) {
  // [2, 3, 5, 12] rank 4 and [2, 37, 24] rank 3: all leading axes are rows of one GEMM.
  Expr x4 = input({2, 3, 5, 12}, 1), x3 = input({2, 37, 24}, 2);
  auto l4 = weights(10, 12, true, 3), l3 = weights(20, 24, true, 4);
  TensorView o4 = output({2, 3, 5, 10}), o3 = output({2, 37, 20});
  CommandSequence seq(ctx());
  auto i4 = ops::linear(ctx(), seq, x4, *l4.gpu, bufferSink(o4));
  auto i3 = ops::linear(ctx(), seq, x3, *l3.gpu, bufferSink(o3));
  seq.run();
  EXPECT_EQ(i4.groups, (std::array<uint32_t, 3>{1, 1, 1})) << "30 rows: one 64-row tile";
  const uint32_t bm3 = uint32_t(ops::chooseGemmTile(74, 20, 24, ctx().info()).bm);  // 64 (tiled) or 32 (CPU lanes)
  EXPECT_EQ(i3.groups, (std::array<uint32_t, 3>{1, (74 + bm3 - 1) / bm3, 1})) << "74 rows in tiles of " << bm3;
  EXPECT_TRUE(i3.vectorA && i3.vectorOut);
  EXPECT_EQ(i3.scalarWrappedNodes, 0) << i3.aType << " / " << i3.sinkType;
  compare(read(o4), reference(x4, l4), "rank 4");
  compare(read(o3), reference(x3, l3), "rank 3");
}

TEST_P(LinearTest, StridedAndMisalignedInputs) {
  // x read through a permute (strided view) and computed on the fly: the prologue is evaluated per tile.
  Expr raw = input({2, 9, 7}, 5);  // [B, K, S] -> x = silu(permute) : [B, S, K]
  Expr x = silu(permute(raw, {0, 2, 1})) * constant(1.5f);
  auto l = weights(6, 9, true, 6);
  TensorView out = output({2, 7, 6});
  // K = 8 but the input starts one element into its allocation: vector mode, that leaf read by scalars.
  keep_.push_back(mem_.upload(ctx(), test::randomFloats(3 * 8 + 1, 7), dt()));
  Expr shifted = buffer(view(keep_.back(), dt(), {3, 8}, dtypeSize(dt())));
  auto l8 = weights(4, 8, false, 8);
  TensorView out8 = output({3, 4});
  CommandSequence seq(ctx());
  ops::linear(ctx(), seq, x, *l.gpu, bufferSink(out));
  auto info = ops::linear(ctx(), seq, shifted, *l8.gpu, bufferSink(out8));
  seq.run();
  EXPECT_TRUE(info.vectorA);
  EXPECT_EQ(info.scalarWrappedNodes, 1) << info.aType;
  compare(read(out), reference(x, l), "silu(permute(x))");
  compare(read(out8), reference(shifted, l8), "misaligned x");
}

TEST_P(LinearTest, GegluPrologue) {
  // The second feed-forward projection reads GEGLU(h) = h[..., :F] * gelu(h[..., F:]) directly.
  for (int64_t f : {16, 13}) {
    Expr h = input({2, 9, 2 * f}, 10 + uint32_t(f), -2.f, 2.f);
    Expr geglu = sliceLastDim(h, 0, f) * gelu(sliceLastDim(h, f, f));
    auto l = weights(12, f, true, 20 + uint32_t(f));
    TensorView out = output({2, 9, 12});
    CommandSequence seq(ctx());
    auto info = ops::linear(ctx(), seq, geglu, *l.gpu, bufferSink(out));
    seq.run();
    EXPECT_EQ(info.vectorA, f % 4 == 0);
    if (f % 4 == 0) {
      EXPECT_EQ(info.scalarWrappedNodes, 0) << info.aType;
    }
    compare(read(out), reference(geglu, l), "GEGLU F " + std::to_string(f));
  }
}

TEST_P(LinearTest, ComputedInputStagedThroughScratch) {
  // A layer-norm-like prologue (four tensors read) feeding 4 column tiles: on CPU devices it is computed
  // once into scratch memory before the GEMM; the result must not change.
  Expr x = input({2, 10, 16}, 61), mean = input({2, 10, 1}, 62), gamma = input({16}, 63), beta = input({16}, 64);
  Expr normed = (x - mean) * gamma + beta;
  auto l = weights(128, 16, true, 65);
  ops::Conv2dScratch scratch(ctx());
  for (bool withScratch : {false, true}) {
    TensorView out = output({2, 10, 128});
    CommandSequence seq(ctx());
    auto info = ops::linear(ctx(), seq, normed, *l.gpu, bufferSink(out), {.scratch = withScratch ? &scratch : nullptr});
    seq.run();
    // CPU devices stage by the rule below; the tensor-core kernel stages every computed input (fp16).
    EXPECT_EQ(info.stagedInput, withScratch && (ops::stageLinearInput(normed, 128, ctx().info()) || info.coopMatrix));
    if (withScratch && ctx().info().type == "cpu") {
      EXPECT_TRUE(info.stagedInput);
      EXPECT_GT(scratch.bytesHeld(), 0u);
    }
    compare(read(out), reference(normed, l), withScratch ? "staged" : "fused");
  }
  // The CPU rule: never on GPUs, never for a plain read or few column tiles.
  DeviceInfo gpu = ctx().info();
  gpu.type = "discrete";
  EXPECT_FALSE(ops::stageLinearInput(normed, 128, gpu));
  DeviceInfo cpu = ctx().info();
  cpu.type = "cpu";
  cpu.subgroupSize = 8;
  EXPECT_TRUE(ops::stageLinearInput(normed, 128, cpu));
  EXPECT_FALSE(ops::stageLinearInput(normed, 32, cpu));
  EXPECT_FALSE(ops::stageLinearInput(x, 512, cpu));
}

TEST_P(LinearTest, ResidualAddEpilogue) {
  for (int64_t n : {24, 15}) {
    Expr h = input({3, 11, 20}, 30 + uint32_t(n)), x = input({3, 11, n}, 40 + uint32_t(n));
    auto l = weights(n, 20, true, 50 + uint32_t(n));
    TensorView out = output({3, 11, n});
    CommandSequence seq(ctx());
    ops::linear(ctx(), seq, h, *l.gpu, residualAdd(bufferSink(out), x));
    seq.run();
    auto ref = reference(h, l);
    auto xv = test::evalReference(x, mem_);
    for (size_t i = 0; i < ref.size(); ++i) ref[i] += xv[i];
    compare(read(out), ref, "residual N " + std::to_string(n));
  }
}

TEST_P(LinearTest, FusedQkvPartitionSink) {
  for (int64_t c : {8, 5}) {  // parts of 8 columns store 4 at a time; parts of 5 fall back to scalar stores
    Expr x = input({2, 11, 16}, 60 + uint32_t(c));
    auto l = weights(3 * c, 16, true, 70 + uint32_t(c));
    TensorView q = output({2, 11, c}), k = output({2, 11, c}), v = output({2, 11, c});
    CommandSequence seq(ctx());
    auto info = ops::linear(ctx(), seq, x, *l.gpu, partition({bufferSink(q), bufferSink(k), bufferSink(v)}, -1));
    seq.run();
    if (c % 4 == 0) {
      EXPECT_EQ(info.scalarWrappedNodes, 0) << info.sinkType;
    }
    auto ref = reference(x, l);  // [2, 11, 3c]
    std::vector<double> parts[3];
    for (size_t i = 0; i < ref.size(); ++i) parts[(i % (3 * c)) / c].push_back(ref[i]);
    compare(read(q), parts[0], "Q");
    compare(read(k), parts[1], "K");
    compare(read(v), parts[2], "V");
  }
}

// out[b] = a[b] x b[b] in float64.
std::vector<double> matmulReference(const std::vector<double>& a, const std::vector<double>& b, int64_t batches,
                                    int64_t m, int64_t k, int64_t n, bool bBatched) {
  std::vector<double> out(batches * m * n);
  for (int64_t t = 0; t < batches; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += a[(t * m + i) * k + p] * b[((bBatched ? t : 0) * k + p) * n + j];
        out[(t * m + i) * n + j] = acc;
      }
  return out;
}

TEST_P(LinearTest, BatchedMatmul) {
  // Plain, transposed B (keys-like [B, N, K]), B shared by all batches, rank 2, vector-friendly sizes.
  Expr a = input({3, 17, 13}, 80), b = input({3, 13, 10}, 81), bt = input({3, 10, 13}, 82);
  Expr shared = input({13, 10}, 83), a2 = input({20, 8}, 84), b2 = input({8, 12}, 85);
  Expr av = input({2, 70, 16}, 86), bv = input({2, 16, 8}, 87);
  TensorView o1 = output({3, 17, 10}), o2 = output({3, 17, 10}), o3 = output({3, 17, 10}), o4 = output({20, 12}),
             o5 = output({2, 70, 8});
  CommandSequence seq(ctx());
  ops::matmul(ctx(), seq, a, b, bufferSink(o1));
  ops::matmul(ctx(), seq, a, bt, bufferSink(o2), {.transposeB = true});
  ops::matmul(ctx(), seq, a, shared, bufferSink(o3));
  ops::matmul(ctx(), seq, a2, b2, bufferSink(o4));
  auto info = ops::matmul(ctx(), seq, av, bv, bufferSink(o5));
  seq.run();
  EXPECT_TRUE(info.vectorA && info.vectorB && info.vectorOut);
  const uint32_t bm = uint32_t(ops::chooseGemmTile(70, 8, 16, ctx().info()).bm);
  EXPECT_EQ(info.groups, (std::array<uint32_t, 3>{1, (70 + bm - 1) / bm, 2}));
  auto ra = test::evalReference(a, mem_);
  compare(read(o1), matmulReference(ra, test::evalReference(b, mem_), 3, 17, 13, 10, true), "matmul");
  compare(read(o2), matmulReference(ra, test::evalReference(permute(bt, {0, 2, 1}), mem_), 3, 17, 13, 10, true),
          "matmul transposed B");
  compare(read(o3), matmulReference(ra, test::evalReference(shared, mem_), 3, 17, 13, 10, false), "shared B");
  compare(read(o4), matmulReference(test::evalReference(a2, mem_), test::evalReference(b2, mem_), 1, 20, 8, 12, false),
          "rank 2");
  compare(read(o5), matmulReference(test::evalReference(av, mem_), test::evalReference(bv, mem_), 2, 70, 16, 8, true),
          "vector");
}

// matmulHalfB: B a dense fp16 tensor read as packed weights by the tensor-core kernel where the device has one
// (per-batch B through the kernel's B batch stride, a shared B, split-K with scratch), as an expression
// elsewhere (lavapipe; N % 8 != 0 everywhere), against float64.
TEST_P(LinearTest, MatmulWithHalfB) {
  const bool coop = ops::gemmCoopSupported(ctx().info());
  struct Case { int64_t batches, m, k, n; bool batchedB; };
  const Case cases[] = {{3, 70, 40, 24, true}, {2, 33, 64, 16, false}, {1, 64, 2048, 64, true},
                        {2, 20, 24, 12, true}, {1, 130, 96, 136, false}};
  ops::Conv2dScratch scratch(ctx());
  uint32_t seed = 1700;
  for (const Case& c : cases) {
    Expr a = input({c.batches, c.m, c.k}, seed++);
    const Shape bShape = c.batchedB ? Shape{c.batches, c.k, c.n} : Shape{c.k, c.n};
    Expr b = input(bShape, seed++, DType::F16);
    TensorView out = output({c.batches, c.m, c.n});
    CommandSequence seq(ctx());
    auto info = ops::matmulHalfB(ctx(), seq, a, b.node().tensor, bufferSink(out), {.scratch = &scratch});
    seq.run();
    const std::string what = "matmulHalfB " + std::to_string(c.batches) + " x " + name(c.m, c.n, c.k) +
                             (c.batchedB ? " per-batch B" : " shared B");
    const bool tensorCores = coop && c.n % 8 == 0;
    EXPECT_EQ(info.coopMatrix, tensorCores) << what;
    if (tensorCores && c.k == 2048) {
      EXPECT_GT(info.splitK, 1) << what;  // one 64x64 tile: split-K fills the GPU
    }
    auto ref = matmulReference(test::evalReference(a, mem_), test::evalReference(b, mem_), c.batches, c.m, c.k, c.n,
                               c.batchedB);
    if (tensorCores) {
      EXPECT_LE(test::errorOfScale(read(out), ref), 5e-3) << what;
    } else {
      compare(read(out), ref, what);
    }
  }
  CommandSequence seq(ctx());
  TensorView o = output({1, 4, 8});
  test::expectErrorContaining([&] {
    ops::matmulHalfB(ctx(), seq, input({1, 4, 6}, 1790), input({1, 5, 8}, 1791, DType::F16).node().tensor, bufferSink(o));
  }, "inner dimensions differ");
}

TEST_P(LinearTest, InvalidShapesThrowNamingShapes) {
  Expr x = input({2, 5, 12}, 90);
  auto l = weights(8, 12, false, 91);
  auto wrongK = weights(8, 10, false, 92);
  TensorView good = output({2, 5, 8}), badN = output({2, 5, 7}), badRows = output({2, 4, 8});
  CommandSequence seq(ctx());
  test::expectErrorContaining([&] { ops::linear(ctx(), seq, x, *wrongK.gpu, bufferSink(good)); }, "[2,5,12]");
  test::expectErrorContaining([&] { ops::linear(ctx(), seq, x, *l.gpu, bufferSink(badN)); }, "[2,5,7]");
  test::expectErrorContaining([&] { ops::linear(ctx(), seq, x, *l.gpu, bufferSink(badRows)); }, "[2,4,8]");
  Expr a = input({3, 4, 5}, 93), b = input({3, 6, 7}, 94);
  TensorView mo = output({3, 4, 7});
  test::expectErrorContaining([&] { ops::matmul(ctx(), seq, a, b, bufferSink(mo)); }, "[3,6,7]");
  test::expectErrorContaining([&] { ops::LinearWeights(ctx(), std::vector<float>(5), 2, 3, {}, dt()); }, "[2,3]");
}

INSTANTIATE_TEST_SUITE_P(Linear, LinearTest, ::testing::Values(DType::F32, DType::F16),
                         [](const auto& info) { return std::string(dtypeName(info.param)); });

}  // namespace
}  // namespace sdgen
