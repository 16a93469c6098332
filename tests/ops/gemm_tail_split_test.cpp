// The tail split of the tensor-core GEMM (gemm_coop.slang SPLIT 3/4, gemm_split.slang TAIL; ops::chooseTailSplit):
// the rule on the shapes it was bounded on, the refusals, the kernels compiling to SPIR-V (any device), and on
// tensor-core devices plain and GEGLU projections against float64 (elsewhere the refusal).
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "engine/command_sequence.h"
#include "engine/slang_compiler.h"
#include "graph/expr.h"
#include "ops/conv2d_scratch.h"
#include "ops/linear.h"
#include "ops/linear_geglu.h"
#include "ops/linear_gemm.h"
#include "tests/graph/tensor_fixture.h"
#include "tests/ops/gemm_coop_test_support.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using namespace graph;

ops::GemmTile tailOf(ops::GemmTile t, int start, int parts) {
  t.tailStart = start;
  t.tailParts = parts;
  return t;
}

TEST(GemmTailSplit, RuleOnMeasuredShapes) {
  // The rule is on unless SDGEN_TAIL_SPLIT=0 (session 38: SDXL's step 69.96 -> 69.24 ms on the H200).
  test::ScopedEnv on("SDGEN_TAIL_SPLIT", nullptr);
  DeviceInfo d = test::h100LikeWithHalfAccumulators();
  const ops::GemmTile large = ops::largeHalfTile();  // chooseShortKHalfTile's tile (flush interval 2048)
  auto choose = [&](const ops::GemmTile& current, int64_t m, int64_t n, int64_t k) {
    std::optional<ops::GemmTile> t = ops::chooseTailSplit(current, m, n, k, d);
    return t ? t->describe() : std::string("keep");
  };
  // SDXL's 32^2 GEGLU projection (2048 x 10240, K 1280: 8 x 40 tiles for 132 SMs, 2.4 waves): session 36 timed
  // its first 264 tiles at 0.132 ms and all 320 at 0.196. The 33 column tiles of the first two waves whole-K, the
  // last 7 columns (56 tiles) in 2 parts of 640: 112 workgroups beside nothing else.
  EXPECT_EQ(choose(large, 2048, 10240, 1280), "coop 256x256x32 warp 128x64 f16acc tail 8448 split 2 opt");
  // A last wave of 24 tiles (2048 x 9216): 5 parts would fit the SMs, K 1280 keeps 4 of >= 320 each.
  EXPECT_EQ(choose(large, 2048, 9216, 1280), "coop 256x256x32 warp 128x64 f16acc tail 8448 split 4 opt");
  // Kept: last waves more than half full (SDXL's 64^2 GEGLU 8192 x 5120, 640 tiles: 112 of 132; 64^2 QKV 8192 x
  // 1920, 256 tiles: 124), one wave (32^2 QKV 2048 x 3840, 120 tiles), K too shallow for 2 parts of 320 (K 608),
  // a K past the flush interval (4096^3), a split, 128 x 128 or fp32-accumulator tile, no SM count, the switch off.
  EXPECT_EQ(choose(large, 8192, 5120, 640), "keep");
  EXPECT_EQ(choose(large, 8192, 1920, 640), "keep");
  EXPECT_EQ(choose(large, 2048, 3840, 1280), "keep");
  EXPECT_EQ(choose(large, 2048, 10240, 608), "keep");
  EXPECT_EQ(choose(large, 4096, 4096, 4096), "keep");
  ops::GemmTile split = large;
  split.flushK = 0;
  split.splitK = 3;
  EXPECT_EQ(choose(split, 2048, 10240, 1280), "keep");
  EXPECT_EQ(choose(ops::GemmTile::coopTile(128, 128, 32, 4, 2), 2048, 10240, 1280), "keep");
  ops::GemmTile fp32 = large;
  fp32.f16Accumulators = false;
  fp32.flushK = 0;
  EXPECT_EQ(choose(fp32, 2048, 10240, 1280), "keep");
  d.multiprocessors = 0;
  EXPECT_EQ(choose(large, 2048, 10240, 1280), "keep");
  d.multiprocessors = 132;
  {
    test::ScopedEnv one("SDGEN_TAIL_SPLIT", "1");
    EXPECT_EQ(choose(large, 2048, 10240, 1280), "coop 256x256x32 warp 128x64 f16acc tail 8448 split 2 opt");
  }
  {
    test::ScopedEnv zero("SDGEN_TAIL_SPLIT", "0");
    EXPECT_EQ(choose(large, 2048, 10240, 1280), "keep");
  }
}

TEST(GemmTailSplit, RefusedWhereItCannotRun) {
  DeviceInfo d = test::h100LikeWithHalfAccumulators();
  ops::GemmTile t = ops::largeHalfTile();
  t.flushK = 0;
  EXPECT_EQ(ops::coopTileProblem(tailOf(t, 512, 2), d), "");
  EXPECT_EQ(tailOf(t, 512, 2).describe(), "coop 256x256x32 warp 128x64 f16acc tail 512 split 2 opt");
  for (const ops::GemmTile& bad : {tailOf(t, 300, 2), tailOf(t, 0, 2), tailOf(t, 512, 65), tailOf(ops::largeHalfTile(), 512, 2)})
    EXPECT_NE(ops::coopTileProblem(bad, d).find("a tail split needs"), std::string::npos) << bad.describe();
  ops::GemmTile both = tailOf(t, 512, 2);
  both.splitK = 2;
  EXPECT_NE(ops::coopTileProblem(both, d).find("a tail split needs"), std::string::npos);
}

// The tail kernels (SPLIT 3: fp16 partials, 4: fp32) for a raw and a computed A, with and without the GEGLU
// epilogue, and the sum launch for the tail's columns (with and without GEGLU) and for a whole split GEMM.
TEST(GemmTailSplit, KernelsCompileToSpirv) {
  const std::filesystem::path cache = std::filesystem::temp_directory_path() / "sdgen-gemm-tail-compile-test";
  std::filesystem::remove_all(cache);
  SlangCompiler compiler(defaultSlangc(), defaultShaderDir(), cache.string());
  ops::GemmTile large = ops::largeHalfTile();
  large.flushK = 0;
  large.spirvOpt = false;  // spirv-opt is not run here
  for (const ops::GemmTile& base : {ops::GemmTile::coopTile(128, 128, 32, 4, 2), large})
    for (int aMode : {0, 1})
      for (bool geglu : {false, true})
        for (bool halfPartials : {false, true}) {
          ops::GemmInfo info = test::coopGemmInfo(aMode);
          info.halfPartials = halfPartials;
          const ops::GemmTile tile = tailOf(base, base.bn, 2);
          KernelSource src;
          src.generated = ops::gemmWrapperSource(info, tile, true, geglu);
          EXPECT_NE(src.generated.find(halfPartials ? ", 3, " : ", 4, "), std::string::npos);
          src.label = "gemm coop " + tile.describe() + " A mode " + std::to_string(aMode) + (geglu ? " geglu" : "") +
                      (halfPartials ? " fp16 partials" : " fp32 partials");
          test::expectCompiles(compiler, src);
        }
  for (bool geglu : {false, true})
    for (bool tail : {false, true}) {
      ops::GemmInfo info;
      info.sinkType = "BufSink<39,F16Storage>";
      info.vectorOut = true;
      info.halfPartials = true;
      KernelSource src;
      src.generated = ops::gemmSplitSumSource(info, true, geglu, tail);
      src.label = std::string("gemm split-K sum") + (geglu ? " geglu" : "") + (tail ? " tail" : "");
      test::expectCompiles(compiler, src, false);
    }
  std::filesystem::remove_all(cache);
}

class TailSplitTest : public test::TensorTest {};

// Forced tail splits through ops::linear: whole and partial tiles, K off multiples of the slice, a residual sink and
// a bias, fp16 and fp32 outputs (fp16 / fp32 partials), plain and GEGLU outputs, fp32 and fp16 accumulators. On a
// device without tensor cores the same cases run on software cooperative matrices (GemmTile::coopEmulation, one
// subgroup of 32 x 32), smaller; the real tiles are refused there.
TEST_P(TailSplitTest, PlainAndGegluAgainstFloat64WhereSupported) {
  const bool coop = ops::gemmCoopSupported(ctx().info()) && dt() == DType::F16;
  ops::GemmTile large = ops::largeHalfTile();
  large.flushK = 0;
  large.spirvOpt = ctx().compiler().optimizerAvailable();
  const bool largeRuns = coop && ops::coopTileProblem(large, ctx().info()).empty();
  struct Case {
    int64_t m, n, k;  // n: the GEMM's columns (GEGLU: value and gate interleaved, the output n / 2 wide)
    bool geglu, fp32Out;
    ops::GemmTile tile;
  };
  const ops::GemmTile mid = ops::GemmTile::coopTile(128, 128, 32, 4, 2);
  std::vector<Case> cases = {{300, 776, 1000, false, false, tailOf(mid, 512, 3)},
                             {256, 512, 640, false, true, tailOf(mid, 256, 2)},
                             {260, 528, 1280, true, false, tailOf(mid, 384, 2)}};
  if (largeRuns || !coop) {
    cases.push_back({512, 768, 640, false, false, tailOf(large, 256, 2)});
    cases.push_back({260, 528, 1280, true, false, tailOf(large, 256, 3)});
    cases.push_back({512, 1024, 1024, true, false, tailOf(large, 512, 2)});
  }
  if (!coop && dt() == DType::F16) {  // software matrices: K parts past K (part 2 of K 100), fp16 accumulators
    ops::GemmTile e = ops::GemmTile::coopTile(32, 32, 32, 2, 2);
    e.coopEmulation = true;
    ops::GemmTile eh = e;
    eh.f16Accumulators = true;
    cases.push_back({70, 200, 100, false, false, tailOf(e, 128, 3)});
    cases.push_back({64, 128, 96, false, true, tailOf(e, 64, 2)});
    cases.push_back({70, 144, 96, true, false, tailOf(eh, 64, 2)});
    cases.push_back({64, 192, 128, true, false, tailOf(e, 96, 4)});
  }
  ops::Conv2dScratch scratch(ctx());
  uint32_t seed = 2600;
  for (const Case& c : cases) {
    const int64_t width = c.geglu ? c.n / 2 : c.n;
    std::vector<float> w = test::randomFloats(c.n * c.k, seed++), b = test::randomFloats(c.n, seed++);
    for (auto& v : w) v = test::roundTo(dt(), v);
    std::vector<float> wi = w, bi = b;
    if (c.geglu) ops::interleaveGegluRows(wi, bi, c.n / 2, c.k);
    ops::LinearWeights gpu(ctx(), wi, c.n, c.k, bi, dt(), "test tail");
    Expr x = input({c.m, c.k}, seed++), res = input({c.m, width}, seed++);
    TensorView out = output({c.m, width}, c.fp32Out ? DType::F32 : dt());
    CommandSequence seq(ctx());
    ops::LinearOptions o{.tile = c.tile, .scratch = &scratch, .gegluOutput = c.geglu, .label = "tail"};
    const std::string what = "M " + std::to_string(c.m) + " N " + std::to_string(c.n) + " K " + std::to_string(c.k) +
                             (c.geglu ? " geglu " : " ") + c.tile.describe();
    const Sink sink = residualAdd(bufferSink(out), res);
    if (!coop && !c.tile.coopEmulation) {
      test::expectErrorContaining([&] { ops::linear(ctx(), seq, x, gpu, sink, o); },
                                  ops::gemmCoopSupported(ctx().info())
                                      ? "tail: the cooperative-matrix GEMM needs packed fp16 weights"
                                      : "tail: the cooperative-matrix GEMM needs a device");
      continue;
    }
    ops::LinearOptions none = o;
    none.scratch = nullptr;
    test::expectErrorContaining([&] { ops::linear(ctx(), seq, x, gpu, sink, none); },
                                "tail: a tail split needs scratch memory");
    const ops::GemmInfo info = ops::linear(ctx(), seq, x, gpu, sink, o);
    seq.run();
    EXPECT_TRUE(info.coopMatrix);
    EXPECT_EQ(info.halfPartials, !c.fp32Out) << what;
    EXPECT_EQ(info.kernel, c.tile.describe());
    const std::vector<double> xv = test::evalReference(x, mem_), rv = test::evalReference(res, mem_);
    std::vector<double> ref(c.m * width);
    for (int64_t m = 0; m < c.m; ++m)
      for (int64_t j = 0; j < width; ++j) {
        auto dot = [&](int64_t row) {
          double acc = b[row];
          for (int64_t q = 0; q < c.k; ++q) acc += xv[m * c.k + q] * double(w[row * c.k + q]);
          return acc;
        };
        double v = dot(j);
        if (c.geglu) {
          const double g = dot(width + j);
          v *= 0.5 * g * (1.0 + std::erf(g / std::sqrt(2.0)));
        }
        ref[m * width + j] = v + rv[m * width + j];
      }
    const double rel = test::errorOfScale(read(out), ref);
    EXPECT_LE(rel, 5e-3) << what;
    std::printf("tail split %s: relative error %.3g\n", what.c_str(), rel);
  }
}

INSTANTIATE_TEST_SUITE_P(Linear, TailSplitTest, ::testing::Values(DType::F32, DType::F16),
                         [](const auto& info) { return std::string(dtypeName(info.param)); });

}  // namespace
}  // namespace sdgen
