// Convolution: every algorithm against a float64 CPU reference, in fp32 and fp16 storage (activations, weights
// and output in the same dtype; accumulation is fp32 on the GPU), on small shapes covering borders, odd sizes,
// strides, 1x1, dilation, no padding, batches, several tiles and every GEMM tile variant; fused input
// expressions and sinks; the algorithms agreeing with each other; contracts and shape errors. The direct
// kernel's tests: conv2d_direct_test.cpp (the same suite, instantiated here).
//
// Error measure: max over elements of |gpu - ref| / max(1, |ref|); at most 1e-4 in fp32 and 5e-3 with fp16
// storage. Outputs are poisoned with NaN first, so an element no kernel wrote fails. The largest error per
// algorithm and dtype is printed after the run (per tile and test with CONV_DETAIL=1).
#include "tests/ops/conv2d_test_fixture.h"

namespace sdgen::conv_test {
namespace {

class ConvErrorReport : public ::testing::Environment {
 public:
  void TearDown() override {
    for (auto& [k, v] : maxErrors()) std::printf("[conv2d] max relative error %-18s %.3g\n", k.c_str(), v);
  }
};
[[maybe_unused]] auto* const gReport = ::testing::AddGlobalTestEnvironment(new ConvErrorReport);

TEST_P(ConvTest, GeneralAnyShape) {
  checkCases({
                 {"3x3, odd channels", 1, 5, 7, 3, 5, k3},
                 {"stride 2, batch 2", 2, 7, 6, 5, 6, Conv2dParams::square(3, 2)},
                 {"1x1", 1, 4, 5, 7, 3, Conv2dParams::square(1)},
                 {"dilation 2", 1, 7, 8, 3, 4, Conv2dParams::square(3, 1, 2)},
                 {"padding 0", 1, 6, 5, 2, 3, geometry(3, 3, 1, 1, 0, 0)},
                 {"5x5", 1, 6, 6, 3, 4, Conv2dParams::square(5)},
                 {"1x3 mixed stride/pad/dilation", 1, 6, 9, 3, 5, geometry(1, 3, 2, 1, 0, 1, 1, 2)},
                 {"several tiles in M, N and K", 2, 9, 9, 20, 70, k3},
                 {"narrow tile (Cout <= 16), several tiles in M", 2, 12, 13, 3, 5, k3},
                 {"single channel in and out", 1, 3, 4, 1, 1, k3},
             },
             ConvAlgo::General);
}

TEST_P(ConvTest, GemmV2) {
  checkCases({
                 {"3x3", 1, 5, 7, 8, 12, k3},
                 {"stride 2, batch 2", 2, 7, 6, 4, 8, Conv2dParams::square(3, 2)},
                 {"1x1", 1, 5, 5, 12, 8, Conv2dParams::square(1)},
                 {"dilation 2", 1, 7, 8, 4, 4, Conv2dParams::square(3, 1, 2)},
                 {"padding 0", 1, 6, 5, 8, 4, geometry(3, 3, 1, 1, 0, 0)},
                 {"1x3 mixed stride/pad/dilation", 1, 6, 9, 4, 8, geometry(1, 3, 2, 1, 0, 1, 1, 2)},
             },
             ConvAlgo::GemmV2);
}

TEST_P(ConvTest, GemmV2EveryTile) {
  // M = 162 rows, Cout = 136 and K = 180 (11.25 steps of 16): partial tiles on every axis for every variant.
  Layer l = layer(136, 20, k3, 7);
  Expr x = input({2, 9, 9, 20}, 8);
  for (const ops::ConvTile& t : ops::convTiles()) {
    SCOPED_TRACE(t.str());
    EXPECT_EQ(check(x, l, ConvAlgo::GemmV2, t.bm, t.bn).tile, t.str());
  }
}

// The CPU lanes kernel (gemmLanesMain) with every rows-per-lane and column-group count, on partial tiles in
// M, N and K, for GEMM v2 and Winograd (lavapipe has subgroup size 8; elsewhere the test has nothing to run).
TEST_P(ConvTest, LanesKernelEveryTile) {
  if (ctx().info().subgroupSize != 8) GTEST_SKIP() << "lanes kernels need subgroup size 8";
  Layer l = layer(76, 20, k3, 11);
  Expr x = input({2, 9, 9, 20}, 12);
  for (int tm : {8, 16, 32, 64})
    for (int tn : {32, 64}) {
      SCOPED_TRACE(std::to_string(tm) + "x" + std::to_string(tn));
      EXPECT_EQ(check(x, l, ConvAlgo::GemmV2, tm, tn, true).tile, ops::ConvTile::lanesTile(tm / 8, tn / 32).str());
      EXPECT_EQ(check(x, l, ConvAlgo::Winograd, tm, tn, true).tile, ops::ConvTile::lanesTile(tm / 8, tn / 32).str());
    }
}

TEST_P(ConvTest, Winograd) {
  checkCases({
                 {"one 4x4 tile", 1, 4, 4, 4, 4, k3},
                 {"image smaller than a tile", 1, 2, 3, 4, 8, k3},
                 {"partial tiles, batch 2", 2, 7, 9, 8, 12, k3},
                 {"several tiles in M, N and K", 1, 13, 6, 20, 68, k3},
             },
             ConvAlgo::Winograd);
  Layer l = layer(8, 8, k3, 9);
  check(input({1, 10, 11, 8}, 10), l, ConvAlgo::Winograd, 128, 128);  // a large tile over a partial GEMM
}

// Winograd F(4,3) in bands of tiles (ConvProblem::winogradBandTiles; forced small here, as the VAE's 512^2 and
// 1024^2 layers get by size): a fused input and a residual sink, band sizes that split a tile row, leave a
// partial last band, cross the batch boundary, or hold every tile; three launches per band, one scratch.
TEST_P(ConvTest, WinogradBands) {
  Layer l = layer(12, 8, k3, 50);
  Expr x = input({2, 9, 13, 8}, 51), shift = input({8}, 52);  // 2 x 3 x 4 = 24 tiles
  Expr in = silu(x) + shift;
  const Shape os{2, 9, 13, 12};
  Expr residual = input(os, 53);
  std::vector<double> ref = referencePlusResidual(in, l, residual);
  for (int64_t band : {1, 5, 7, 12, 24, 100}) {
    SCOPED_TRACE("band " + std::to_string(band));
    TensorView out = output(os);
    CommandSequence seq(ctx());
    auto o = options(ConvAlgo::Winograd);
    o.winogradBandTiles = band;
    ops::Conv2dInfo info = ops::conv2d(ctx(), seq, in, *l.gpu, residualAdd(bufferSink(out), residual), o);
    seq.run();
    const int64_t bands = (24 + std::min<int64_t>(band, 24) - 1) / std::min<int64_t>(band, 24);
    EXPECT_EQ(info.kernels.size(), size_t(3 * bands));
    const ops::ConvProblem prob{2, 9, 13, 8, 9, 13, 12, k3};
    EXPECT_EQ(info.scratchBytes, prob.winogradScratchBytes(std::min<int64_t>(band, 24)));
    compare(read(out), ref, "winograd bands");
  }
}

// The band of the default rule: every tile where V and M fit kWinogradBandBytes, else whole multiples of 256 tiles
// within it (the VAE's 256-channel layer at 1024^2, fp32: 65,536 tiles, 4.8 GB unbanded).
TEST(ConvWinogradBands, DefaultBandFitsTheBudget) {
  const Conv2dParams p3 = Conv2dParams::square(3);
  const ops::ConvProblem small{2, 64, 64, 320, 64, 64, 320, p3}, vae{1, 1024, 1024, 256, 1024, 1024, 256, p3};
  EXPECT_EQ(small.winogradBandTiles(), small.tiles());
  const int64_t band = vae.winogradBandTiles();
  EXPECT_EQ(band % 256, 0);
  EXPECT_LT(band, vae.tiles());
  EXPECT_LE(vae.winogradScratchBytes(band), ops::kWinogradBandBytes);
  EXPECT_GT(vae.winogradScratchBytes(band + 256), ops::kWinogradBandBytes);
  const ops::ConvProblem huge{1, 64, 64, 8192, 64, 64, 8192, p3};  // one tile over the budget: 256 tiles
  EXPECT_EQ(huge.winogradBandTiles(), 256);
  EXPECT_EQ(vae.winogradBandTiles(10), 10);
}

TEST_P(ConvTest, AlgorithmsAgree) {
  Layer l = layer(8, 12, k3, 11);
  Expr x = input({2, 6, 10, 12}, 12);
  std::vector<std::vector<float>> results;
  for (ConvAlgo a : {ConvAlgo::General, ConvAlgo::GemmV2, ConvAlgo::Winograd}) {
    TensorView out = output({2, 6, 10, 8});
    CommandSequence seq(ctx());
    ops::conv2d(ctx(), seq, x, *l.gpu, bufferSink(out), options(a));
    seq.run();
    results.push_back(read(out));
  }
  for (size_t a = 1; a < results.size(); ++a)
    compare(results[a], std::vector<double>(results[0].begin(), results[0].end()),
            std::string("agreement-with-general ") + std::to_string(a));
}


TEST_P(ConvTest, FusedInputAndResidualSink) {
  // in = silu(x) + per-channel shift; out = conv(in) + residual.
  Expr x = input({1, 6, 7, 8}, 20), shift = input({8}, 21), residual = input({1, 6, 7, 12}, 22);
  Expr in = silu(x) + shift;
  Layer l = layer(12, 8, k3, 23);
  std::vector<double> ref = referencePlusResidual(in, l, residual);
  for (ConvAlgo a : {ConvAlgo::General, ConvAlgo::GemmV2, ConvAlgo::Winograd}) {
    SCOPED_TRACE(ops::convAlgoName(a));
    TensorView out = output({1, 6, 7, 12});
    CommandSequence seq(ctx());
    auto info = ops::conv2d(ctx(), seq, in, *l.gpu, residualAdd(bufferSink(out), residual), options(a));
    seq.run();
    if (a != ConvAlgo::General) {
      EXPECT_GT(info.nativeVectorNodes, 0);
      EXPECT_EQ(info.scalarWrappedNodes, 0);
    }
    compare(read(out), ref, std::string(ops::convAlgoName(a)) + " fused");
  }
}

TEST_P(ConvTest, FusedConcatUpsampleInputAndNchwSink) {
  // in = concat(upsample2x(a), b) along channels (2 + 6: the split is not a multiple of 4, so the vector
  // kernels read it with scalar accesses); the sink permutes to NCHW.
  Expr a = input({2, 3, 4, 2}, 30), b = input({2, 6, 8, 6}, 31);
  Expr in = concat(upsample2x(a), b, 3);
  Layer l = layer(4, 8, k3, 32);
  auto ref = reference(in, l);
  for (ConvAlgo algo : {ConvAlgo::General, ConvAlgo::GemmV2, ConvAlgo::Winograd}) {
    SCOPED_TRACE(ops::convAlgoName(algo));
    TensorView out = output({2, 4, 6, 8});  // NCHW
    CommandSequence seq(ctx());
    auto info = ops::conv2d(ctx(), seq, in, *l.gpu, permute(bufferSink(out), {0, 3, 1, 2}), options(algo));
    seq.run();
    if (algo != ConvAlgo::General) {
      EXPECT_GT(info.scalarWrappedNodes, 0);
    }
    std::vector<float> nchw = read(out), nhwc(nchw.size());
    for (int n = 0; n < 2; ++n)
      for (int c = 0; c < 4; ++c)
        for (int y = 0; y < 6; ++y)
          for (int x = 0; x < 8; ++x) nhwc[((n * 6 + y) * 8 + x) * 4 + c] = nchw[((n * 4 + c) * 6 + y) * 8 + x];
    compare(nhwc, ref, std::string(ops::convAlgoName(algo)) + " fused");
  }
}

TEST_P(ConvTest, MixedActivationAndWeightStorage) {
  // Weights in the parameter's dtype, activations in the other one, output in fp32.
  const DType other = dt() == DType::F16 ? DType::F32 : DType::F16;
  Layer l = layer(8, 4, k3, 80);
  Expr x = input({1, 5, 6, 4}, 81, other);
  auto ref = reference(x, l);
  for (ConvAlgo a : {ConvAlgo::General, ConvAlgo::GemmV2, ConvAlgo::Winograd}) {
    SCOPED_TRACE(ops::convAlgoName(a));
    TensorView out = output({1, 5, 6, 8}, DType::F32);
    CommandSequence seq(ctx());
    ops::conv2d(ctx(), seq, x, *l.gpu, bufferSink(out), options(a));
    seq.run();
    compare(read(out), ref, std::string(ops::convAlgoName(a)) + " mixed");
  }
}

TEST_P(ConvTest, ChainedWinogradConvsShareScratch) {
  // Two Winograd convs in one sequence reuse the same scratch memory; the second reads the first's output.
  Layer l1 = layer(8, 4, k3, 40), l2 = layer(4, 8, k3, 41);
  Expr x = input({1, 5, 6, 4}, 42);
  TensorView mid = output({1, 5, 6, 8}), out = output({1, 5, 6, 4});
  CommandSequence seq(ctx());
  ops::conv2d(ctx(), seq, x, *l1.gpu, bufferSink(mid), options(ConvAlgo::Winograd));
  ops::conv2d(ctx(), seq, buffer(mid), *l2.gpu, bufferSink(out), options(ConvAlgo::Winograd));
  seq.run();
  auto r1 = reference(x, l1);
  for (auto& v : r1) v = test::roundTo(dt(), float(v));  // mid is stored in the storage dtype
  auto r2 = test::conv2dReference(r1, {1, 5, 6, 8}, l2.w, l2.b, 4, k3);
  compare(read(out), r2, "winograd chained");
}

// Tensor cores (algorithm coop, fp16 weights): 3x3 stride 1 and 2, 1x1, partial tiles, a computed input
// (staged into fp16 scratch), a group norm + SiLU (staged from its per-channel table) and a plain one (read
// raw), a residual sink, against float64 (tensorCoreCase).
TEST_P(ConvTest, CoopWhereSupported) {
  const Case cases[] = {{"3x3", 2, 9, 11, 16, 24, k3},
                        {"3x3 stride 2", 1, 13, 10, 8, 40, Conv2dParams::square(3, 2)},
                        {"1x1", 1, 7, 5, 32, 16, Conv2dParams::square(1)},
                        {"3x3 wide", 1, 12, 12, 64, 136, k3},
                        {"3x3 deep", 1, 5, 4, 256, 72, k3},  // few rows, K 2304: split-K (chooseSplitK)
                        // whole 64 x 64 tiles (M 128, K 288): the residual sink loaded into the accumulators
                        {"3x3 whole tiles", 1, 8, 16, 32, 64, k3},
                        // Cin 40: a 32-deep K slice crosses a tap boundary at a different k per invocation (the
                        // im2col tap walk); 3x5 taps, dilation 2 x 1 and stride 1 x 2 (the walk's row and column steps).
                        {"3x5 d2x1 s1x2 Cin 40", 1, 11, 13, 40, 24, geometry(3, 5, 1, 2, 2, 2, 2, 1)}};
  uint32_t seed = 700;
  for (const Case& c : cases) {
    const bool ran = tensorCoreCase(c, ConvAlgo::Coop, seed, 0, [&](const ops::Conv2dInfo& info, InputMode mode, const Shape&) {
      const bool split = info.kernels.back().find("coop split-K sum") != std::string::npos;
      EXPECT_EQ(info.kernels.size(), 1u + stagingLaunches(mode) + (split ? 1u : 0u));
      // A group norm is staged from its per-channel table (one small launch first), any other expression directly.
      if (mode != kRaw) {
        EXPECT_NE(info.kernels[0].find(mode == kGroupNorm ? "coop affine" : "coop input"), std::string::npos)
            << info.kernels[0];
      }
      if (std::string(c.name) == "3x3 deep") {
        EXPECT_TRUE(split);
      }
    });
    if (!ran) return;
  }
}

// The 128x128 tile with K split in parts (autotune candidates where such tiles are few and K is deep: the VAE's
// 64^2 level, the UNet's up blocks), forced on a few-row, deep-K convolution with partial tiles.
TEST_P(ConvTest, CoopBigTileSplitKWhereSupported) {
  const Case c{"3x3 deep", 1, 5, 4, 256, 136, k3};  // 20 rows, Cout 136: partial 128x128 tiles; K 2304
  uint32_t seed = 800;
  for (int parts : {2, 4, 9}) {  // 9: 8 slices each
    const ops::ConvCandidate cand{ConvAlgo::Coop, ops::ConvTile{128, 128, 0, 0}, parts};
    const bool ran = tensorCoreCase(c, ConvAlgo::Coop, seed, 0, [&](const ops::Conv2dInfo& info, InputMode, const Shape&) {
      EXPECT_EQ(info.candidate, cand.name());
      EXPECT_NE(info.kernels.back().find("coop split-K sum"), std::string::npos) << info.kernels.back();
    }, cand);
    if (!ran) return;
  }
}

// The 256x256 fp16-accumulator tile in K parts (an autotune candidate since session 37, SDGEN_CONV_HALF_SPLIT; the
// 128x128 one and session 40's 256x128 one below):
// 64 rows of one 256-wide column of tiles (a partial row tile), K 2304 in 2 parts of 1152 and 3 of 768, a stride-2
// K 2304 (the shape whose 2048-deep fp16 chunk read 5.07e-3 in session 15) in 2; forcing more than 2048 of K per
// part is refused.
TEST_P(ConvTest, CoopHalfTileSplitWhereSupported) {
  uint32_t seed = 840;
  struct HalfCase { Case c; int parts; int tile = 256; int bn = 0; };  // bn 0: tile x tile
  for (const HalfCase& h : {HalfCase{{"3x3 deep", 1, 8, 8, 256, 256, k3}, 2}, HalfCase{{"3x3 deep", 1, 8, 8, 256, 256, k3}, 3},
                            HalfCase{{"3x3 deep stride 2", 1, 15, 17, 256, 256, Conv2dParams::square(3, 2)}, 2},
                            HalfCase{{"3x3 unsplit", 1, 9, 8, 128, 256, k3}, 1},  // K 1152: one fp16 chunk
                            // K 4608 unsplit: 3 even chunks of 1536, two flushed to fp16 planes, the last in registers
                            HalfCase{{"3x3 flushed", 1, 9, 8, 512, 264, k3}, 1},
                            // the 128x128 tile with fp16 accumulators (SDGEN_CONV_HALF_128), unsplit and in 2 parts
                            HalfCase{{"3x3 unsplit", 1, 9, 8, 128, 136, k3}, 1, 128},
                            HalfCase{{"3x3 deep stride 2", 1, 15, 17, 256, 256, Conv2dParams::square(3, 2)}, 2, 128},
                            // the 256x128 tile (SDGEN_CONV_HALF_256x128): partial columns (Cout 136), 2 parts
                            HalfCase{{"3x3 unsplit", 1, 9, 8, 128, 136, k3}, 1, 256, 128},
                            HalfCase{{"3x3 deep stride 2", 1, 15, 17, 256, 256, Conv2dParams::square(3, 2)}, 2, 256, 128},
                            // the 256x160 tile (SDGEN_CONV_HALF_256x160): a partial column, and two whole ones in 2 parts
                            HalfCase{{"3x3 unsplit", 1, 9, 8, 128, 136, k3}, 1, 256, 160},
                            HalfCase{{"3x3 deep stride 2", 1, 15, 17, 256, 320, Conv2dParams::square(3, 2)}, 2, 256, 160}}) {
    const ops::ConvCandidate cand{ConvAlgo::Coop, ops::ConvTile{h.tile, h.bn ? h.bn : h.tile, 0, 0}, h.parts,
                                  h.tile == 128};
    const bool ran = tensorCoreCase(h.c, ConvAlgo::Coop, seed, 0, [&](const ops::Conv2dInfo& info, InputMode, const Shape&) {
      EXPECT_EQ(info.candidate, cand.name());
      EXPECT_EQ(info.kernels.back().find("coop split-K sum") != std::string::npos, h.parts > 1) << info.kernels.back();
    }, cand);
    if (!ran) break;
  }
  EXPECT_EQ(ops::parseConvCandidate("coop 256x256 split 4"), (ops::ConvCandidate{ConvAlgo::Coop, ops::ConvTile{256, 256, 0, 0}, 4}));
  EXPECT_EQ(ops::parseConvCandidate("coop-winograd 256x256"),
            (ops::ConvCandidate{ConvAlgo::CoopWinograd, ops::ConvTile{256, 256, 0, 0}, 1}));
  EXPECT_FALSE(ops::parseConvCandidate("coop-winograd 256x160"));
  EXPECT_EQ(ops::convCoopGemmTile({ConvAlgo::CoopWinograd, ops::ConvTile{256, 128, 0, 0}, 1}).describe(),
            "coop 256x128x32 warp 64x64 f16acc opt");
  const ops::GemmTile t = ops::convCoopGemmTile({ConvAlgo::Coop, ops::ConvTile{256, 256, 0, 0}, 2});
  EXPECT_EQ(t.describe(), "coop 256x256x32 warp 128x64 f16acc split 2 opt");
  EXPECT_EQ(ops::parseConvCandidate("coop 256x128 split 3"), (ops::ConvCandidate{ConvAlgo::Coop, ops::ConvTile{256, 128, 0, 0}, 3}));
  EXPECT_EQ(ops::convCoopGemmTile({ConvAlgo::Coop, ops::ConvTile{256, 128, 0, 0}, 1}).describe(),
            "coop 256x128x32 warp 64x64 f16acc opt");
  EXPECT_EQ(ops::convCoopGemmTile({ConvAlgo::Coop, ops::ConvTile{256, 160, 0, 0}, 2}).describe(),
            "coop 256x160x32 warp 64x80 f16acc split 2 opt");
  EXPECT_EQ(ops::convCoopGemmTile({ConvAlgo::Coop, ops::ConvTile{256, 192, 0, 0}, 1}).bm, 0);
}

// The 128x64 tile (an autotune candidate where Cout is a multiple of 64 but not of 128, session 33), forced on
// partial tiles (Cout 136: a third, partial column of tiles; 20 rows) and whole ones, unsplit and in 2 parts.
TEST_P(ConvTest, CoopMidTileWhereSupported) {
  uint32_t seed = 820;
  for (const Case& c : {Case{"3x3 deep", 1, 5, 4, 256, 136, k3}, Case{"3x3 whole", 2, 16, 16, 64, 64, k3}})
    for (int parts : {1, 2}) {
      const ops::ConvCandidate cand{ConvAlgo::Coop, ops::ConvTile{128, 64, 0, 0}, parts};
      const bool ran = tensorCoreCase(c, ConvAlgo::Coop, seed, 0, [&](const ops::Conv2dInfo& info, InputMode, const Shape&) {
        EXPECT_EQ(info.candidate, cand.name());
      }, cand);
      if (!ran) return;
    }
}

// Winograd F(2,3) on tensor cores (coop-winograd, fp16 weights): odd output sizes (partial 2x2 tiles and GEMM
// tiles), two images, Cout not a multiple of the 128-wide tile, a deep K, several bands of tiles, raw and staged
// inputs, a residual sink, against float64 with the coop bar (tensorCoreCase).
TEST_P(ConvTest, CoopWinogradWhereSupported) {
  struct WinoCase {
    Case c;
    int64_t bandTiles;
  };
  const WinoCase cases[] = {{{"odd", 2, 9, 11, 16, 24, k3}, 0},
                            {{"wide", 1, 12, 12, 64, 136, k3}, 0},
                            {{"deep", 1, 6, 5, 256, 72, k3}, 0},
                            {{"banded", 1, 30, 34, 32, 128, k3}, 64}};  // 255 tiles in bands of 64
  uint32_t seed = 900;
  for (const WinoCase& wc : cases) {
    const Case& c = wc.c;
    const bool ran = tensorCoreCase(c, ConvAlgo::CoopWinograd, seed, wc.bandTiles,
                                    [&](const ops::Conv2dInfo& info, InputMode mode, const Shape& os) {
      const int64_t tiles = int64_t(c.n) * ((os[1] + 1) / 2) * ((os[2] + 1) / 2);
      const int64_t bands = wc.bandTiles ? (tiles + wc.bandTiles - 1) / wc.bandTiles : 1;
      // [staged input,] filter transform, then a GEMM and an output transform per band.
      EXPECT_EQ(info.kernels.size(), size_t(1 + stagingLaunches(mode) + 2 * bands)) << c.name;
    });
    if (!ran) return;
  }
  // The fp16-accumulator tiles (session 42's candidates for the VAE's large convs): K = Cin in one fp16 sum, V made
  // by its own launch (the input transform) and read by a plain batched GEMM; partial GEMM tiles in both directions
  // (Cout 136 and 264; 36 and 255 tiles), one band and bands of 256 tiles.
  for (const ops::ConvCandidate& cand : {ops::ConvCandidate{ConvAlgo::CoopWinograd, ops::ConvTile{256, 256, 0, 0}, 1},
                                         ops::ConvCandidate{ConvAlgo::CoopWinograd, ops::ConvTile{256, 128, 0, 0}, 1}})
    for (const WinoCase& wc : {WinoCase{{"wide", 1, 12, 12, 64, 136, k3}, 0},
                               WinoCase{{"deep", 2, 30, 34, 256, 264, k3}, 256}}) {  // 510 tiles in 2 bands
      const bool ran = tensorCoreCase(wc.c, ConvAlgo::CoopWinograd, seed, wc.bandTiles,
                                      [&](const ops::Conv2dInfo& info, InputMode, const Shape& os) {
        EXPECT_EQ(info.candidate, cand.name());
        const int64_t tiles = int64_t(wc.c.n) * ((os[1] + 1) / 2) * ((os[2] + 1) / 2);
        const int64_t bands = wc.bandTiles ? (tiles + wc.bandTiles - 1) / wc.bandTiles : 1;
        int64_t transforms = 0;
        for (const std::string& k : info.kernels)
          transforms += k.find("coop-winograd input transform") != std::string::npos;
        EXPECT_EQ(transforms, bands) << wc.c.name << " " << cand.name();
      }, cand);
      if (!ran) return;
    }
}

TEST_P(ConvTest, AutoSelection) {
  Layer l3 = layer(8, 8, k3, 50), l1x1 = layer(8, 8, Conv2dParams::square(1), 51), odd = layer(4, 3, k3, 52);
  Expr x = input({1, 4, 4, 8}, 53), x3 = input({1, 4, 4, 3}, 54);
  TensorView out8 = output({1, 4, 4, 8}), out4 = output({1, 4, 4, 4});
  CommandSequence seq(ctx());
  auto o = options(ConvAlgo::Auto);
  if (ops::gemmCoopSupported(ctx().info()) && dt() == DType::F16) {
    // Tensor cores (fp16 weights): coop wherever Cin and Cout are multiples of 8, listed first when skipped.
    EXPECT_EQ(ops::conv2d(ctx(), seq, x, *l3.gpu, bufferSink(out8), o).algo, ConvAlgo::Coop);
    EXPECT_EQ(ops::conv2d(ctx(), seq, x, *l1x1.gpu, bufferSink(out8), o).algo, ConvAlgo::Coop);
    auto info = ops::conv2d(ctx(), seq, x3, *odd.gpu, bufferSink(out4), o);
    EXPECT_EQ(info.algo, ConvAlgo::General);
    ASSERT_EQ(info.skipped.size(), 3u);
    EXPECT_NE(info.skipped[0].find("coop: Cin = 3 is not a multiple of 8"), std::string::npos) << info.skipped[0];
    return;
  }
  EXPECT_EQ(ops::conv2d(ctx(), seq, x, *l3.gpu, bufferSink(out8), o).algo, ConvAlgo::Winograd);
  auto info = ops::conv2d(ctx(), seq, x, *l1x1.gpu, bufferSink(out8), o);
  EXPECT_EQ(info.algo, ConvAlgo::GemmV2);
  ASSERT_EQ(info.skipped.size(), 1u);
  EXPECT_NE(info.skipped[0].find("not 3x3 s1 p1 d1"), std::string::npos) << info.skipped[0];
  info = ops::conv2d(ctx(), seq, x3, *odd.gpu, bufferSink(out4), o);
  EXPECT_EQ(info.algo, ConvAlgo::General);
  EXPECT_EQ(info.skipped.size(), 2u);
  // Cout not a multiple of 4 (a VAE's conv_out): direct on CPU devices (lavapipe: 9x the general kernel's
  // speed there), the general kernel on GPUs where direct's 16 x 16 blocks would not fill the device.
  Layer three = layer(3, 8, k3, 56);
  TensorView out3 = output({1, 4, 4, 3});
  info = ops::conv2d(ctx(), seq, x, *three.gpu, bufferSink(out3), o);
  EXPECT_EQ(info.algo, ops::useCpuGemmKernels(ctx().info()) ? ConvAlgo::Direct : ConvAlgo::General);
  o.scratch = nullptr;
  info = ops::conv2d(ctx(), seq, x, *l3.gpu, bufferSink(out8), o);
  EXPECT_EQ(info.algo, ConvAlgo::GemmV2);
  EXPECT_NE(info.skipped.at(0).find("no scratch"), std::string::npos);
  EXPECT_EQ(info.kernels.size(), 1u);

  // Weights packed for Winograd only: Auto still runs (Winograd), the gemm algorithms refuse.
  ops::Conv2dWeightsOptions winogradOnly;
  winogradOnly.storage = dt();
  winogradOnly.packGemm = false;
  ops::Conv2dWeights w(ctx(), 8, 8, k3, l3.w, l3.b, winogradOnly);
  EXPECT_FALSE(w.hasGemm());
  o = options(ConvAlgo::Auto);
  info = ops::conv2d(ctx(), seq, x, w, bufferSink(out8), o);
  EXPECT_EQ(info.algo, ConvAlgo::Winograd);
  EXPECT_EQ(info.kernels.size(), 3u);
  EXPECT_GT(info.scratchBytes, 0u);
  expectError([&] { ops::conv2d(ctx(), seq, x, w, bufferSink(out8), options(ConvAlgo::General)); },
              {"packed without the gemm layout"});
}

TEST_P(ConvTest, ForcedAlgorithmWithViolatedContractThrows) {
  Layer odd = layer(4, 3, k3, 60), s2 = layer(4, 4, Conv2dParams::square(3, 2), 61), ok = layer(4, 4, k3, 62);
  Expr x3 = input({1, 4, 4, 3}, 63), x4 = input({1, 4, 4, 4}, 64);
  TensorView o44 = output({1, 4, 4, 4}), o22 = output({1, 2, 2, 4});
  CommandSequence seq(ctx());
  expectError([&] { ops::conv2d(ctx(), seq, x3, *odd.gpu, bufferSink(o44), options(ConvAlgo::GemmV2)); },
              {"gemm-v2", "Cin = 3 is not a multiple of 4"});
  expectError([&] { ops::conv2d(ctx(), seq, x3, *odd.gpu, bufferSink(o44), options(ConvAlgo::Winograd)); },
              {"winograd", "Cin = 3"});
  expectError([&] { ops::conv2d(ctx(), seq, x4, *s2.gpu, bufferSink(o22), options(ConvAlgo::Winograd)); },
              {"3x3 s2 p1 d1 is not 3x3 s1 p1 d1"});
  auto noScratch = options(ConvAlgo::Winograd);
  noScratch.scratch = nullptr;
  expectError([&] { ops::conv2d(ctx(), seq, x4, *ok.gpu, bufferSink(o44), noScratch); }, {"no scratch"});
  auto badTile = options(ConvAlgo::GemmV2);
  badTile.tileM = 32, badTile.tileN = 32;
  expectError([&] { ops::conv2d(ctx(), seq, x4, *ok.gpu, bufferSink(o44), badTile); }, {"no GEMM tile 32x32"});
  EXPECT_EQ(seq.dispatchCount(), 0u);
}

TEST_P(ConvTest, MisshapedWeightsAndSinksThrow) {
  std::vector<float> w(4 * 4 * 9), b(4);
  ops::Conv2dWeightsOptions o;
  o.storage = dt();
  o.name = "unet.conv_in";
  expectError([&] { ops::Conv2dWeights(ctx(), 4, 4, k3, std::span(w).first(30), b, o); },
              {"unet.conv_in", "expected 144 weights", "[4,4,3,3]", "got 30"});
  expectError([&] { ops::Conv2dWeights(ctx(), 4, 4, k3, w, std::span(b).first(3), o); }, {"bias", "got 3"});
  ops::Conv2dWeights good(ctx(), 4, 4, k3, w, b, o);
  Expr x = input({1, 5, 6, 4}, 70), x8 = input({1, 5, 6, 8}, 71);
  TensorView wrong = output({1, 5, 5, 4}), right = output({1, 5, 6, 4});
  CommandSequence seq(ctx());
  expectError([&] { ops::conv2d(ctx(), seq, x, good, bufferSink(wrong)); },
              {"output sink has shape [1,5,5,4], expected [1,5,6,4]", "input [1,5,6,4]"});
  expectError([&] { ops::conv2d(ctx(), seq, x8, good, bufferSink(right)); },
              {"input [1,5,6,8] has 8 channels", "Cin = 4"});
  expectError([&] { ops::conv2d(ctx(), seq, reshape(x, {30, 4}), good, bufferSink(right)); }, {"NHWC", "[30,4]"});
  expectError([&] { ops::conv2d(ctx(), seq, buffer(right), good, bufferSink(right)); }, {"in-place"});
  expectError([&] { ops::conv2dOutputShape({1, 1, 1, 4}, ops::Conv2dWeights(ctx(), 4, 4, geometry(3, 3, 1, 1, 0, 0), w, b, o)); },
              {"smaller than the (dilated) kernel"});
  EXPECT_EQ(seq.dispatchCount(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Conv, ConvTest, ::testing::Values(DType::F32, DType::F16),
                         [](const auto& info) { return std::string(dtypeName(info.param)); });

}  // namespace
}  // namespace sdgen::conv_test
