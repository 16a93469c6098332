// The tensor-core GEMM's own code (shaders/linear/gemm_coop.slang) on software cooperative matrices
// (GemmTile::coopEmulation, shaders/coop_emulation.slang), so that a machine without tensor cores (CI's lavapipe)
// checks its indexing, accumulation modes, split-K parts, epilogues and A modes against float64 — not only that it
// compiles. One subgroup of 32 invocations per workgroup (tiles of 16 x warp rows by 16 x warp columns); slow, so
// the shapes are small. The tensor-core devices run the real tiles in LinearTest.CoopMatrixKernelWhereSupported.
#include <cstdio>
#include <string>
#include <vector>

#include "engine/command_sequence.h"
#include "graph/expr.h"
#include "ops/conv2d_scratch.h"
#include "ops/linear.h"
#include "ops/linear_geglu.h"
#include "ops/linear_gemm.h"
#include "ops/norm.h"
#include "tests/graph/tensor_fixture.h"
#include "tests/ops/gemm_coop_test_support.h"

namespace sdgen {
namespace {

using namespace graph;

ops::GemmTile emulated(int bm, int bn, int bk) {
  ops::GemmTile t = ops::GemmTile::coopTile(bm, bn, bk, bm / 16, bn / 16);
  t.coopEmulation = true;
  return t;
}

TEST(GemmCoopEmulation, OneSubgroupOnlyAndDescribed) {
  DeviceInfo d = test::h100Like();
  EXPECT_EQ(emulated(32, 32, 32).describe(), "coop 32x32x32 warp 32x32 emulated");
  EXPECT_EQ(ops::coopTileProblem(emulated(32, 64, 32), d), "");
  ops::GemmTile two = ops::GemmTile::coopTile(64, 64, 32, 2, 2);  // four subgroups
  two.coopEmulation = true;
  EXPECT_EQ(ops::coopTileProblem(two, d), "the emulation takes one subgroup per workgroup");
  // fp16 accumulators need no f16 -> f16 subgroup shape in software.
  ops::GemmTile half = emulated(32, 32, 32);
  half.f16Accumulators = true;
  EXPECT_EQ(ops::coopTileProblem(half, d), "");
}

class CoopEmulationTest : public test::TensorTest {};

// Every accumulation mode (fp32, fp16 within a slice, fp16 throughout, fp16 flushed every 64 of K), double-buffered
// slices, split-K with fp16 and fp32 partials, deeper slices and wider warp tiles, the shape words compiled in, on whole tiles (no bounds
// checks, the residual loaded into fp32 accumulators) and partial ones (M, N, K off the tiles' multiples), with a computed
// A read in the GEMM (A mode 0), a staged or raw fp16 A (1) and a fused layer norm (3), against float64.
TEST_P(CoopEmulationTest, EveryModeAgainstFloat64) {
  struct Variant {
    std::string name;
    ops::GemmTile tile;
  };
  std::vector<Variant> variants;
  auto add = [&](const std::string& name, ops::GemmTile t) { variants.push_back({name, t}); };
  add("fp32 accumulators", emulated(32, 32, 32));
  ops::GemmTile t = emulated(32, 32, 32);
  t.halfAccumulate = true;
  add("fp16 within a slice", t);
  t = emulated(32, 32, 32);
  t.f16Accumulators = true;
  add("fp16 accumulators", t);
  add("fp16 flushed every 64", test::flushed(emulated(32, 32, 32), 64));
  add("double-buffered", test::doubleBuffered(emulated(32, 32, 32)));
  t = emulated(32, 32, 32);
  t.splitK = 3;
  add("split-K 3", t);
  add("32x64, BK 64", emulated(32, 64, 64));
  add("64x32", emulated(64, 32, 32));
  // fp16 accumulators on 16-deep double-buffered slices (the 256 x 256 tile's form that session 40 measures).
  t = test::doubleBuffered(emulated(32, 32, 16));
  t.f16Accumulators = true;
  add("fp16 accumulators, BK 16 double-buffered", t);
  // A 64 x 80 warp tile (4 x 5 fragments: the 256 x 160 tile's subgroup) with fp16 accumulators: B words that do
  // not divide among the invocations, a 5-wide epilogue row.
  t = ops::GemmTile::coopTile(64, 80, 32, 4, 5);
  t.coopEmulation = true;
  t.f16Accumulators = true;
  add("64x80 fp16 accumulators", t);
  // The shape words compiled in (GemmTile::fixedShape; ConvTest.CoopIm2colEmulated checks it bit for bit).
  t = emulated(32, 32, 32);
  t.fixedShape = true;
  add("fixed shape", t);
  t.splitK = 3;
  add("fixed shape split-K 3", t);
  t = test::flushed(emulated(32, 32, 32), 64);
  t.fixedShape = true;
  add("fixed shape flushed every 64", t);
  struct Case { int64_t m, n, k; };
  ops::Conv2dScratch scratch(ctx());
  uint32_t seed = 3100;
  for (const Case& c : {Case{64, 64, 128}, Case{70, 72, 104}})
    for (const Variant& v : variants)
      for (int a = 0; a < 3; ++a) {  // 0: computed A (x * g), 1: raw fp16 A, 2: a layer norm read by the GEMM
        // The other A modes on the partial shape, with three of the variants (compiling is most of the time).
        if (a != 1 && (c.m != 70 || (v.name != "fp32 accumulators" && v.name != "split-K 3" &&
                                     v.name != "fp16 flushed every 64" && v.name != "fixed shape")))
          continue;
        std::vector<float> w = test::randomFloats(c.n * c.k, seed++), b = test::randomFloats(c.n, seed++);
        ops::LinearWeights gpu(ctx(), w, c.n, c.k, b, dt(), "test emulated");
        for (auto& x : w) x = test::roundTo(dt(), x);
        Expr x = input({c.m, c.k}, seed++), r = input({c.m, c.n}, seed++), g = input({c.k}, seed++);
        Expr in = a == 0 ? x * g : x;
        std::vector<float> st;
        if (a == 2) {  // statistics of x's fp16 values, as ops::layerNormStats leaves them
          const std::vector<double> xv = test::evalReference(x, mem_);
          for (int64_t row = 0; row < c.m; ++row) {
            double s = 0, q = 0;
            for (int64_t j = 0; j < c.k; ++j) s += xv[row * c.k + j], q += xv[row * c.k + j] * xv[row * c.k + j];
            st.push_back(float(s));
            st.push_back(float(q));
          }
          keep_.push_back(mem_.upload(ctx(), st, DType::F32));
          const TensorView stats = view(keep_.back(), DType::F32, {c.m, 2});
          Expr gamma = input({c.k}, seed++, DType::F32), beta = input({c.k}, seed++, DType::F32);
          in = ops::layerNormFromStats(x, stats, 1e-5f, gamma, beta);
        }
        TensorView out = output({c.m, c.n});
        CommandSequence seq(ctx());
        // Split-K and the flushes keep their partials in scratch; the others get none, so a computed A stays in
        // the GEMM (A mode 0).
        const bool needsScratch = v.tile.splitK > 1 || v.tile.flushK > 0;
        ops::LinearOptions o{.tile = v.tile, .scratch = needsScratch ? &scratch : nullptr, .label = "emulated"};
        const ops::GemmInfo info = ops::linear(ctx(), seq, in, gpu, residualAdd(bufferSink(out), r), o);
        seq.run();
        const std::string what = "M " + std::to_string(c.m) + " N " + std::to_string(c.n) + " K " +
                                 std::to_string(c.k) + " " + v.name + " A mode " + std::to_string(info.aMode);
        EXPECT_EQ(info.kernel, v.tile.describe()) << what;
        EXPECT_EQ(info.aMode, a == 2 ? 3 : a == 1 || needsScratch ? 1 : 0) << what;
        const bool whole = c.m % v.tile.bm == 0 && c.n % v.tile.bn == 0 && c.k % v.tile.bk == 0;
        EXPECT_EQ(info.residualPreloaded, whole && !v.tile.f16Accumulators) << what;
        const std::vector<double> av = test::evalReference(in, mem_), rv = test::evalReference(r, mem_);
        std::vector<double> ref(c.m * c.n);
        for (int64_t row = 0; row < c.m; ++row)
          for (int64_t j = 0; j < c.n; ++j) {
            double acc = b[j] + rv[row * c.n + j];
            for (int64_t q = 0; q < c.k; ++q) acc += av[row * c.k + q] * double(w[j * c.k + q]);
            ref[row * c.n + j] = acc;
          }
        const double rel = test::errorOfScale(read(out), ref);
        EXPECT_LE(rel, 5e-3) << what;
        std::printf("emulated tensor cores %s: relative error %.3g\n", what.c_str(), rel);
      }
}

// The GEGLU epilogue (value * gelu(gate) from the interleaved columns), unsplit, on partial tiles.
TEST_P(CoopEmulationTest, GegluEpilogueAgainstFloat64) {
  const int64_t m = 70, k = 96, inner = 40;
  std::vector<float> w = test::randomFloats(2 * inner * k, 3300), b = test::randomFloats(2 * inner, 3301);
  for (auto& v : w) v = test::roundTo(dt(), v);
  std::vector<float> wi = w, bi = b;
  ops::interleaveGegluRows(wi, bi, inner, k);
  ops::LinearWeights gpu(ctx(), wi, 2 * inner, k, bi, dt(), "test emulated geglu");
  Expr x = input({m, k}, 3302);
  TensorView out = output({m, inner});
  CommandSequence seq(ctx());
  ops::LinearOptions o{.tile = emulated(32, 32, 32), .gegluOutput = true, .label = "emulated geglu"};
  ops::linear(ctx(), seq, x, gpu, bufferSink(out), o);
  seq.run();
  const std::vector<double> xv = test::evalReference(x, mem_);
  std::vector<double> ref(m * inner);
  for (int64_t row = 0; row < m; ++row)
    for (int64_t j = 0; j < inner; ++j) {
      double v = b[j], g = b[inner + j];
      for (int64_t q = 0; q < k; ++q) {
        v += xv[row * k + q] * double(w[j * k + q]);
        g += xv[row * k + q] * double(w[(inner + j) * k + q]);
      }
      ref[row * inner + j] = v * 0.5 * g * (1.0 + std::erf(g / std::sqrt(2.0)));
    }
  const double rel = test::errorOfScale(read(out), ref);
  EXPECT_LE(rel, 5e-3);
  std::printf("emulated GEGLU epilogue: relative error %.3g\n", rel);
}

// fp16 only: the tensor-core GEMM takes fp16 weights (LinearTest checks the fp32 refusal).
INSTANTIATE_TEST_SUITE_P(Linear, CoopEmulationTest, ::testing::Values(DType::F16),
                         [](const auto& info) { return std::string(dtypeName(info.param)); });

}  // namespace
}  // namespace sdgen
