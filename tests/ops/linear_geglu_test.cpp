// GEGLU in the tensor-core GEMM's epilogue (ops/linear_geglu.h, gemm_coop.slang GEGLU = 1): the weight
// interleave, the selection rule, the kernel compiling to SPIR-V (any device), and on tensor-core devices the
// gated output value * gelu(gate) against float64 (odd row counts, bias, a residual sink); elsewhere the refusal.
#include <cmath>
#include <filesystem>

#include "engine/command_sequence.h"
#include "engine/slang_compiler.h"
#include "graph/expr.h"
#include "ops/conv2d_scratch.h"
#include "ops/linear.h"
#include "ops/linear_geglu.h"
#include "ops/linear_gemm.h"
#include "tests/graph/tensor_fixture.h"
#include "tests/ops/gemm_coop_test_support.h"

namespace sdgen {
namespace {

using namespace graph;

TEST(LinearGeglu, InterleaveMovesEachGateBesideItsValue) {
  const int64_t inner = 8, k = 3;
  std::vector<float> w(2 * inner * k), b(2 * inner);
  for (int64_t r = 0; r < 2 * inner; ++r) {
    b[r] = float(r);
    for (int64_t c = 0; c < k; ++c) w[r * k + c] = float(100 * r + c);
  }
  ops::interleaveGegluRows(w, b, inner, k);
  // Rows: value 0-3, gate 0-3, value 4-7, gate 4-7 (gate row j is original row inner + j).
  const int64_t order[] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15};
  for (int64_t r = 0; r < 2 * inner; ++r) {
    EXPECT_EQ(b[r], float(order[r])) << r;
    for (int64_t c = 0; c < k; ++c) EXPECT_EQ(w[r * k + c], float(100 * order[r] + c)) << r;
  }
  std::vector<float> none;
  std::vector<float> w6(2 * 6 * k);
  EXPECT_THROW(ops::interleaveGegluRows(w6, none, 6, k), Error);  // inner % 4
  std::vector<float> short_(5);
  EXPECT_THROW(ops::interleaveGegluRows(short_, none, 8, k), Error);
}

TEST(LinearGeglu, ChosenOnlyForFp16OnTensorCores) {
  DeviceInfo d;
  d.coopMatrixKHR = true;
  d.subgroupSize = 32;
  d.sharedMemoryPerWorkgroup = 49152;
  d.maxWorkgroupInvocations = 1024;
  d.coopMatrixShapes = {{16, 16, 16, "f16", "f16", "f32", "f32", "subgroup"}};
  EXPECT_TRUE(ops::gegluEpilogueChosen(d, DType::F16));
  EXPECT_FALSE(ops::gegluEpilogueChosen(d, DType::F32));
  d.coopMatrixKHR = false;
  EXPECT_FALSE(ops::gegluEpilogueChosen(d, DType::F16));
}

TEST(LinearGeglu, KernelCompilesToSpirv) {
  const std::filesystem::path cache = std::filesystem::temp_directory_path() / "sdgen-gemm-geglu-compile-test";
  std::filesystem::remove_all(cache);
  SlangCompiler compiler(defaultSlangc(), defaultShaderDir(), cache.string());
  ops::GemmTile half = ops::largeHalfTile();  // ops::chooseShortKHalfTile's tile (spirv-opt is not run here)
  half.spirvOpt = false;
  for (const ops::GemmTile& tile : {ops::GemmTile::coopTile(64, 64, 32, 2, 2), ops::GemmTile::coopTile(128, 128, 32, 4, 4), half}) {
    KernelSource src;
    src.generated = ops::gemmWrapperSource(test::coopGemmInfo(1), tile, true, true);
    src.label = "gemm coop geglu " + tile.describe();
    test::expectCompiles(compiler, src);
  }
  std::filesystem::remove_all(cache);
}

class LinearGegluTest : public test::TensorTest {};

TEST_P(LinearGegluTest, GatedOutputWhereSupported) {
  const bool fused = ops::gegluEpilogueChosen(ctx().info(), dt());
  struct Case { int64_t m, k, inner; };
  // The last case also runs on the short-K fp16-accumulator tile (ops::chooseShortKHalfTile takes it for SDXL's
  // GEGLU projections, K 640 and 1280) where the device has it: 256 x 256, fp16 accumulators, spirv-opt.
  const ops::GemmTile half = ops::largeHalfTile();
  const bool halfRuns = fused && dt() == DType::F16 && ops::coopTileProblem(half, ctx().info()).empty() &&
                        ctx().compiler().optimizerAvailable();
  for (const Case& c : {Case{70, 40, 16}, Case{130, 64, 132}, Case{300, 320, 640}, Case{260, 1280, 264}})
  for (int forced = 0; forced < (c.k == 1280 && halfRuns ? 2 : 1); ++forced) {
    std::vector<float> w = test::randomFloats(2 * c.inner * c.k, 400 + uint32_t(c.m)),
                       b = test::randomFloats(2 * c.inner, 500 + uint32_t(c.m));
    for (auto& v : w) v = test::roundTo(dt(), v);
    std::vector<float> wi = w, bi = b;
    ops::interleaveGegluRows(wi, bi, c.inner, c.k);
    ops::LinearWeights gpu(ctx(), wi, 2 * c.inner, c.k, bi, dt(), "test geglu");
    Expr x = input({c.m, c.k}, 600 + uint32_t(c.m)), res = input({c.m, c.inner}, 700 + uint32_t(c.m));
    TensorView out = output({c.m, c.inner});
    CommandSequence seq(ctx());
    ops::Conv2dScratch scratch(ctx());
    ops::LinearOptions o{.scratch = &scratch, .gegluOutput = true, .label = "geglu"};
    if (forced) o.tile = half;
    if (!fused) {
      test::expectErrorContaining([&] { ops::linear(ctx(), seq, x, gpu, residualAdd(bufferSink(out), res), o); },
                                  "geglu: a GEGLU output needs the cooperative-matrix kernel");
      return;
    }
    ops::GemmInfo info = ops::linear(ctx(), seq, x, gpu, residualAdd(bufferSink(out), res), o);
    seq.run();
    EXPECT_TRUE(info.coopMatrix);
    EXPECT_EQ(info.splitK, 1);
    const std::vector<double> xv = test::evalReference(x, mem_), rv = test::evalReference(res, mem_);
    std::vector<double> ref(c.m * c.inner);
    for (int64_t m = 0; m < c.m; ++m)
      for (int64_t j = 0; j < c.inner; ++j) {
        double v = b[j], g = b[c.inner + j];
        for (int64_t q = 0; q < c.k; ++q) {
          v += xv[m * c.k + q] * double(w[j * c.k + q]);
          g += xv[m * c.k + q] * double(w[(c.inner + j) * c.k + q]);
        }
        ref[m * c.inner + j] = v * 0.5 * g * (1.0 + std::erf(g / std::sqrt(2.0))) + rv[m * c.inner + j];
      }
    // fp16 operands: relative to the output's scale, as the other tensor-core tests.
    const double rel = test::errorOfScale(read(out), ref);
    EXPECT_LE(rel, 5e-3) << "M " << c.m << " K " << c.k << " inner " << c.inner << " " << info.kernel;
    std::printf("GEGLU epilogue M %lld K %lld inner %lld %s: relative error %.3g\n", (long long)c.m,
                (long long)c.k, (long long)c.inner, info.kernel.c_str(), rel);
  }
}

INSTANTIATE_TEST_SUITE_P(Linear, LinearGegluTest, ::testing::Values(DType::F32, DType::F16),
                         [](const auto& info) { return std::string(dtypeName(info.param)); });

}  // namespace
}  // namespace sdgen
