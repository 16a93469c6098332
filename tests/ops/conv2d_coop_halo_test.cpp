// The halo form of the tensor-core convolution (GemmTile::haloConv, gemm_coop.slang A_MODE 6): a 3x3 stride-1
// convolution whose GEMM rows are blocks of BM / 16 output rows of 16 pixels, its input window staged once per 32
// channels for the 9 taps; and its Winograd F(2,3) form along y (GemmTile::haloWinograd, A_MODE 7, "halo-f23").
// On software cooperative matrices against float64 on every machine (fp32 and fp16 accumulators, fp16 chunks
// flushed at channel slices, two images, several block rows and columns, padding on every side, a residual loaded
// into the accumulators), the real tiles on tensor-core devices (raw, staged and group-norm inputs), the contract's
// refusals by name, and the candidates' names and flush intervals. Suite ConvTest (conv2d_test_fixture.h).
#include <cstring>
#include <filesystem>
#include <string>

#include "graph/expr_nodes.h"
#include "engine/slang_compiler.h"
#include "ops/conv2d_candidates.h"
#include "ops/linear_gemm.h"
#include "tests/ops/conv2d_test_fixture.h"
#include "tests/ops/gemm_coop_test_support.h"

namespace sdgen::conv_test {
namespace {

// One subgroup of 16 warpRows x 16 warpCols: BM / 16 = warpRows output rows per block.
ops::GemmTile emulatedHaloTile(int warpRows, bool f16, int flushK, int splitK = 1, int bk = 32, bool f23 = false) {
  ops::GemmTile t = ops::GemmTile::coopTile(16 * warpRows, 32, bk, warpRows, 2, false, splitK);
  t.coopEmulation = true;
  t.haloConv = true;
  t.haloWinograd = f23;
  t.f16Accumulators = f16;
  t.flushK = flushK;
  return t;
}

ops::GemmProblem haloProblem(const Expr& x, const Layer& l, int64_t h, int64_t w, int64_t cin, int64_t cout,
                             const Sink& out, ops::Conv2dScratch* scratch, const ops::GemmTile& tile) {
  ops::GemmProblem g;
  g.a = x;
  g.packed = ops::PackedB{l.gpu->gemm().address(), l.gpu->bias().address(), cout, l.gpu->storage(),
                          {range(l.gpu->gemm()), range(l.gpu->bias())}};
  g.conv = ops::GemmConv{x.node().tensor.address, h, w, cin, h, w, 3, 3, 1, 1, 1, 1, 1, 1};
  g.out = out;
  g.m = x.shape()[0] * h * w;
  g.n = cout;
  g.k = 9 * cin;
  g.d1 = h;
  g.d2 = w;
  g.tile = tile;
  g.scratch = scratch;
  g.label = "emulated halo conv";
  return g;
}

TEST_P(ConvTest, CoopHaloEmulated) {
  struct HaloCase { Case c; ops::GemmTile tile; };
  const HaloCase cases[] = {
      // two images, 2 block rows x 2 block columns each, fp32 accumulators: the residual loaded into them
      {{"halo 2 images", 2, 4, 32, 32, 32, k3}, emulatedHaloTile(2, false, 0)},
      // 4 output rows per block, 2 channel slices, 2 column tiles
      {{"halo 4 rows", 1, 8, 16, 64, 64, k3}, emulatedHaloTile(4, false, 0)},
      // fp16 accumulators over all of K (576)
      {{"halo fp16", 1, 6, 16, 64, 32, k3}, emulatedHaloTile(2, true, 0)},
      // fp16 chunks flushed every channel slice (K 864: 3 chunks of 288, 2 planes)
      {{"halo flushed", 1, 4, 16, 96, 32, k3}, emulatedHaloTile(2, true, 288)},
      // split over input channels (session 45): 3 slices in 2 parts (2 + 1), fp32 partials with the residual in
      // part 0's; and 3 parts of one slice each with fp16 accumulators, two images
      {{"halo split 2", 1, 4, 16, 96, 32, k3}, emulatedHaloTile(2, false, 0, 2)},
      {{"halo split 3", 2, 2, 16, 96, 32, k3}, emulatedHaloTile(2, true, 0, 3)},
      // 2 block columns (W 32): a tile's rows are not consecutive GEMM rows (the fused split sum's addressing)
      {{"halo split 2 wide", 1, 4, 32, 64, 32, k3}, emulatedHaloTile(2, true, 0, 2)},
      // 3 taps per step on 16-channel slices (halo3): fp32; fp16 flushed every slice (K 432: 3 chunks of 144,
      // 2 planes); split in 2 parts of 3 + 2 slices, two images
      {{"halo3", 1, 4, 16, 48, 32, k3}, emulatedHaloTile(2, false, 0, 1, 16)},
      {{"halo3 flushed", 1, 4, 16, 48, 32, k3}, emulatedHaloTile(2, true, 144, 1, 16)},
      {{"halo3 split 2", 2, 2, 16, 80, 32, k3}, emulatedHaloTile(2, false, 0, 2, 16)},
      // Winograd F(2,3) along y (halo-f23, session 46): one pair of rows per block (2 block rows, 2 block columns,
      // 3 slices); two pairs per block, two images, 2 column tiles, the residual added after the products
      {{"halo-f23", 1, 4, 32, 48, 32, k3}, emulatedHaloTile(2, false, 0, 1, 16, true)},
      {{"halo-f23 2 pairs", 2, 8, 16, 32, 64, k3}, emulatedHaloTile(4, false, 0, 1, 16, true)},
      {{"halo-f23 fp16", 1, 4, 16, 48, 32, k3}, emulatedHaloTile(2, true, 0, 1, 16, true)}};
  uint32_t seed = 1700;
  for (const HaloCase& e : cases) {
    const Case& c = e.c;
    Layer l = layer(c.cout, c.cin, c.p, seed++);
    Expr x = input({c.n, c.h, c.w, c.cin}, seed++);
    const Shape os = ops::conv2dOutputShape(x.shape(), *l.gpu);
    Expr residual = input(os, seed++);
    auto ref = referencePlusResidual(x, l, residual);
    TensorView out = output(os);
    ops::GemmProblem g = haloProblem(x, l, c.h, c.w, c.cin, c.cout, residualAdd(bufferSink(out), residual), &scratch_,
                                     e.tile);
    CommandSequence seq(ctx());
    if (dt() != DType::F16) {
      expectError([&] { ops::recordGemm(ctx(), seq, g); }, {"emulated halo conv", "packed fp16 weights"});
      continue;
    }
    const ops::GemmInfo info = ops::recordGemm(ctx(), seq, g);
    seq.run();
    EXPECT_EQ(info.aMode, e.tile.haloWinograd ? 7 : 6) << c.name;
    EXPECT_FALSE(info.edgeChecks) << c.name;
    EXPECT_EQ(info.residualPreloaded, !e.tile.f16Accumulators) << c.name;
    EXPECT_NE(info.kernel.find(" halo"), std::string::npos) << info.kernel;
    EXPECT_EQ(info.splitK, e.tile.splitK) << c.name;
    const std::string what = std::string("emulated ") + c.name + (e.tile.f16Accumulators ? ", fp16" : ", fp32") +
                             " accumulators" + (e.tile.flushK ? ", flushed" : "") +
                             (e.tile.splitK > 1 ? ", split " + std::to_string(e.tile.splitK) : std::string()) +
                             (e.tile.haloWinograd ? ", Winograd F(2,3) along y"
                              : e.tile.bk == 16   ? ", 3 taps per step"
                                                  : "");
    std::printf("%s: relative error %.3g\n", what.c_str(), compareRoundedInput(read(out), ref, what));
    if (info.splitK > 1 && info.halfPartials) {  // summed by each tile's last part (SPLIT 5): the same bits
      test::ScopedEnv fusedSum("SDGEN_SPLIT_FUSED_SUM", "1");
      TensorView again = output(os);
      ops::GemmProblem f = haloProblem(x, l, c.h, c.w, c.cin, c.cout, residualAdd(bufferSink(again), residual),
                                       &scratch_, e.tile);
      CommandSequence fused(ctx());
      EXPECT_TRUE(ops::recordGemm(ctx(), fused, f).fusedSplitSum) << what;
      EXPECT_EQ(fused.dispatchCount() + 1, seq.dispatchCount()) << what;
      fused.run();
      const std::vector<float> a = read(out), b = read(again);
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << what << ", the sum in the GEMM's launch";
    }
  }
}

// What the halo tile cannot take is refused by name before anything is recorded.
TEST_P(ConvTest, CoopHaloContract) {
  if (dt() != DType::F16) GTEST_SKIP() << "fp16 weights only (the fp32 case is refused for its weights first)";
  uint32_t seed = 1750;
  struct Bad { const char* name; int64_t h, w, cin; Conv2dParams p; ops::GemmTile tile; const char* why; };
  const Bad bad[] = {
      {"width 24", 4, 24, 32, k3, emulatedHaloTile(2, false, 0), "W % 16 == 0"},
      {"odd rows", 5, 16, 32, k3, emulatedHaloTile(2, false, 0), "H % 2 == 0"},
      {"Cin 40", 4, 16, 40, k3, emulatedHaloTile(2, false, 0), "Cin % 32 == 0"},
      {"stride 2", 8, 32, 32, Conv2dParams::square(3, 2), emulatedHaloTile(2, false, 0), "stride 1"},
      {"flush mid-slice", 4, 16, 64, k3, emulatedHaloTile(2, true, 96), "whole channel slices"},
      {"3 parts of 2 slices", 4, 16, 64, k3, emulatedHaloTile(2, false, 0, 3), "one split-K part per 32 input channels"},
      {"f23 fp16 over 2048", 4, 16, 688, k3, emulatedHaloTile(2, true, 0, 1, 16, true), "3 x Cin <= 2048"},
      {"f23 odd rows", 4, 16, 32, k3, emulatedHaloTile(1, false, 0, 1, 16, true), "even warp rows"}};
  for (const Bad& b : bad) {
    Layer l = layer(32, int(b.cin), b.p, seed++);
    Expr x = input({1, b.h, b.w, b.cin}, seed++);
    TensorView out = output(ops::conv2dOutputShape(x.shape(), *l.gpu));
    ops::GemmProblem g = haloProblem(x, l, b.h, b.w, b.cin, 32, bufferSink(out), &scratch_, b.tile);
    const Shape os = ops::conv2dOutputShape(x.shape(), *l.gpu);
    g.conv->ho = os[1];
    g.conv->wo = os[2];
    g.conv->strideH = g.conv->strideW = b.p.strideH;
    g.m = os[1] * os[2];
    CommandSequence seq(ctx());
    expectError([&] { ops::recordGemm(ctx(), seq, g); }, {"emulated halo conv", b.why});
  }
}

// The real halo tiles (128x128 and 256x128, fp32 and fp16 accumulators; 128x128 split over input channels in 2
// parts) on tensor-core devices, forced as candidates through ops::conv2d: two images of 16 x 32, 256 channels
// (K 2304: the fp16 tiles' two chunks of 1152, or 2 parts of 1152) and 64 -> 256 (one chunk, or 2 parts of one
// slice), raw, staged and group-norm inputs into a residual sink, against float64.
TEST_P(ConvTest, CoopHaloWhereSupported) {
  uint32_t seed = 1800;
  struct TileCase { int bm, bn; bool f16acc; int split = 1, taps = 1; bool f23 = false; };
  for (const TileCase& t : {TileCase{128, 128, false}, TileCase{128, 128, true}, TileCase{256, 128, false},
                            TileCase{256, 128, true}, TileCase{128, 128, false, 2}, TileCase{128, 128, true, 2},
                            TileCase{128, 128, false, 1, 3}, TileCase{128, 128, true, 1, 3}, TileCase{128, 128, false, 2, 3},
                            TileCase{128, 128, false, 1, 1, true}, TileCase{128, 64, false, 1, 1, true},
                            TileCase{128, 128, true, 1, 1, true}, TileCase{128, 64, true, 1, 1, true}})
    for (const Case& c : {Case{"halo deep", 2, 16, 32, 256, 256, k3}, Case{"halo shallow", 1, 16, 16, 64, 256, k3}}) {
      const ops::ConvCandidate cand{ConvAlgo::Coop, ops::ConvTile{t.bm, t.bn, 0, 0}, t.split, t.f16acc, true, t.taps,
                                    t.f23};
      const bool ran = tensorCoreCase(c, ConvAlgo::Coop, seed, 0, [&](const ops::Conv2dInfo& info, InputMode, const Shape&) {
        EXPECT_EQ(info.candidate, cand.name());
        // (a split's last launch is its sum)
        EXPECT_NE(info.kernels[info.kernels.size() - (t.split > 1 ? 2 : 1)].find(" halo"), std::string::npos)
            << ::testing::PrintToString(info.kernels);
      }, cand);
      if (!ran) return;
    }
}

class ConvHaloCandidatesTest : public test::VulkanTest {};

TEST_F(ConvHaloCandidatesTest, NamesFlushIntervalsAndRefusals) {
  using ops::ConvAlgo;
  using ops::ConvCandidate;
  using ops::ConvTile;
  for (const char* name : {"coop 128x128 halo", "coop 128x128 f16acc halo", "coop 256x128 halo", "coop 256x128 f16acc halo",
                           "coop 128x128 halo split 3", "coop 128x128 f16acc halo split 10", "coop 128x128 halo3",
                           "coop 128x128 f16acc halo3", "coop 128x128 halo-f23", "coop 128x128 f16acc halo-f23",
                           "coop 128x64 halo-f23", "coop 128x64 f16acc halo-f23"}) {
    std::optional<ConvCandidate> c = ops::parseConvCandidate(name);
    ASSERT_TRUE(c) << name;
    EXPECT_TRUE(c->halo) << name;
    EXPECT_EQ(c->name(), name);
    EXPECT_TRUE(ops::convCoopGemmTile(*c).haloConv) << name;
  }
  for (const char* bad : {"coop 64x64 halo", "coop 128x64 halo", "coop 256x160 halo", "coop 256x256 halo", "coop 128x128 halo f16acc",
                          "coop 128x128 halo halo", "coop-winograd 256x256 halo", "coop 128x128 halo w8x2",
                          "coop 256x128 halo-f23", "coop 128x128 halo-f23 f16acc", "coop 128x128 halo-f23 halo",
                          "coop 64x64 halo-f23"})
    EXPECT_TRUE(!ops::parseConvCandidate(bad) || ops::convCoopGemmTile(*ops::parseConvCandidate(bad)).bm == 0) << bad;
  const ops::GemmTile wide = ops::convCoopGemmTile({ConvAlgo::Coop, ConvTile{256, 128, 0, 0}, 1, true, true});
  EXPECT_EQ(wide.describe(), "coop 256x128x32 warp 64x32 f16acc halo opt");
  EXPECT_EQ(wide.subgroups(), 16);
  EXPECT_EQ(ops::convCoopGemmTile({ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, false, true}).describe(),
            "coop 128x128x32 warp 64x32 halo");
  const ConvCandidate f23{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, false, true, 1, true};
  const ConvCandidate f23Half{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, true, true, 1, true};
  EXPECT_EQ(ops::convCoopGemmTile(f23).describe(), "coop 128x128x16 warp 64x32 halo-f23");
  EXPECT_EQ(ops::convCoopGemmTile(f23Half).describe(), "coop 128x128x16 warp 64x32 f16acc halo-f23 opt");
  EXPECT_EQ(ops::haloFlushK(ops::convCoopGemmTile(f23Half), 512), 0);
  EXPECT_EQ(ops::haloFlushK(ops::convCoopGemmTile(f23), 512), 0);
  EXPECT_EQ(ops::haloFlushK(wide, 256), 1152);  // K 2304: 2 chunks of 4 channel slices
  EXPECT_EQ(ops::haloFlushK(wide, 512), 1728);  // K 4608: 3 chunks, 6 + 6 + 4 slices
  EXPECT_EQ(ops::haloFlushK(wide, 128), 0);     // K 1152: one fp16 sum
  EXPECT_EQ(ops::haloFlushK(ops::convCoopGemmTile({ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, false, true}), 512), 0);
  EXPECT_EQ(ops::haloFlushK(ops::convCoopGemmTile({ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 4, true, true}), 512), 0);

  const DeviceInfo d = test::h100LikeWithHalfAccumulators();
  ops::Conv2dWeightsOptions o;
  o.storage = DType::F16;
  auto w = ops::Conv2dWeights::allocate(ctx(), 128, 256, ops::Conv2dParams::square(3), o);
  const ops::ConvContext cc{d, w, true, {}, true};
  ops::ConvProblem p;
  p.n = 1, p.h = p.ho = p.w = p.wo = 512, p.cin = 256, p.cout = 128;
  p.p = ops::Conv2dParams::square(3);
  const ConvCandidate halo128{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, false, true};
  EXPECT_EQ(ops::candidateViolation(halo128, p, cc), "");
  ops::ConvProblem odd = p;  // Cout 200: not whole 128-wide tiles
  odd.cout = 200;
  EXPECT_NE(ops::candidateViolation(halo128, odd, cc).find("Cout % 128"), std::string::npos);
  EXPECT_NE(ops::candidateViolation({ConvAlgo::Coop, ConvTile{256, 256, 0, 0}, 1, false, true}, p, cc).find("no coop tile"),
            std::string::npos);
  // Split over input channels: whole 32-channel slices, none empty (256 channels: 8 slices), fp16 parts <= 2048
  EXPECT_EQ(ops::candidateViolation({ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 2, false, true}, p, cc), "");
  EXPECT_EQ(ops::candidateViolation({ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 2, true, true}, p, cc), "");
  EXPECT_NE(ops::candidateViolation({ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 7, false, true}, p, cc).find("leave one empty"),
            std::string::npos);  // 7 parts of 2 slices
  ops::ConvProblem deep = p;  // 512 channels: 16 slices, 2 fp16 parts of 8 x 9 x 32 = 2304
  deep.cin = 512;
  EXPECT_NE(ops::candidateViolation({ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 2, true, true}, deep, cc).find("at most 2048"),
            std::string::npos);
  EXPECT_EQ(ops::candidateViolation({ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 3, true, true}, deep, cc), "");
  // halo-f23: fp16 product sums over 3 Cin <= 2048 (512 channels: 1536; 1024: 3072), fp32 ones any; never split
  EXPECT_EQ(ops::candidateViolation(f23Half, deep, cc), "");
  ops::ConvProblem deeper = p;
  deeper.cin = 1024;
  EXPECT_NE(ops::candidateViolation(f23Half, deeper, cc).find("3 x Cin <= 2048"), std::string::npos);
  EXPECT_EQ(ops::candidateViolation(f23, deeper, cc), "");
  EXPECT_NE(ops::candidateViolation({ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 2, false, true, 1, true}, p, cc)
                .find("no split-K"),
            std::string::npos);
  ops::ConvProblem narrow = p;
  narrow.w = narrow.wo = 500;
  EXPECT_NE(ops::candidateViolation(halo128, narrow, cc).find("W % 16"), std::string::npos);
  ops::ConvProblem strided = p;
  strided.p = ops::Conv2dParams::square(3, 2);
  strided.ho = strided.wo = 256;
  EXPECT_NE(ops::candidateViolation(halo128, strided, cc).find("stride 1"), std::string::npos);
  // From 16384 rows: the 128x128 tiles by default (SDGEN_CONV_HALO=0 leaves them out), the 256x128 ones too with
  // SDGEN_CONV_HALO=all (the exploratory set); below, the 128x128 tiles split for about 2 and 4 workgroups per SM
  // (SDGEN_CONV_HALO_SPLIT=0 leaves them out); fp16 accumulators only with the f16 -> f16 shape.
  auto haloNames = [&](const ops::ConvProblem& prob, const ops::ConvContext& c) {
    std::vector<std::string> names;
    for (const ConvCandidate& cand : ops::convCandidates(prob, c))  // (coop-winograd-rows' halo tiles: its own test)
      if (cand.halo && cand.algo == ConvAlgo::Coop) names.push_back(cand.name());
    return names;
  };
  {
    test::ScopedEnv off("SDGEN_CONV_HALO", "0");
    EXPECT_TRUE(haloNames(p, cc).empty());
  }
  DeviceInfo noHalf = d;
  noHalf.coopMatrixShapes.pop_back();
  EXPECT_NE(ops::candidateViolation(f23Half, p, {noHalf, w, true, {}, true}).find("fp16 accumulation"),
            std::string::npos);
  EXPECT_EQ(ops::candidateViolation(f23, p, {noHalf, w, true, {}, true}), "");
  ops::ConvProblem small = p;  // 64^2 (4096 rows): 32 tiles, 8 channel slices -> 8 parts for both 264 and 528
  small.h = small.ho = small.w = small.wo = 64;
  ops::ConvProblem unet32 = small;  // 2 x 32^2 x 640 -> 640: 80 tiles, 20 slices -> 3 parts (264 / 80) and 7 (528 / 80)
  unet32.n = 2;
  unet32.h = unet32.ho = unet32.w = unet32.wo = 32;
  unet32.cin = unet32.cout = 640;
  ops::ConvProblem tiny = small;  // one 16^2 image: under 512 rows, not a candidate
  tiny.h = tiny.ho = tiny.w = tiny.wo = 16;
  tiny.n = 1;
  ops::ConvProblem tall = p;  // 136 rows: whole 8-row blocks, not 16-row ones
  tall.h = tall.ho = 136;
  {
    test::ScopedEnv on("SDGEN_CONV_HALO", nullptr);
    EXPECT_EQ(haloNames(p, cc), (std::vector<std::string>{"coop 128x128 f16acc halo", "coop 128x128 halo",
                                                           "coop 128x128 halo3", "coop 128x128 f16acc halo3"}));
    EXPECT_EQ(haloNames(p, {noHalf, w, true, {}, true}),
              (std::vector<std::string>{"coop 128x128 halo", "coop 128x128 halo3"}));
    EXPECT_EQ(haloNames(small, cc),
              (std::vector<std::string>{"coop 128x128 f16acc halo split 8", "coop 128x128 halo split 8"}));
    EXPECT_EQ(haloNames(unet32, cc),
              (std::vector<std::string>{"coop 128x128 f16acc halo split 3", "coop 128x128 halo split 3",
                                        "coop 128x128 f16acc halo split 7", "coop 128x128 halo split 7"}));
    EXPECT_TRUE(haloNames(tiny, cc).empty());
    test::ScopedEnv noSplit("SDGEN_CONV_HALO_SPLIT", "0");
    EXPECT_TRUE(haloNames(small, cc).empty());
  }
  test::ScopedEnv all("SDGEN_CONV_HALO", "all");
  EXPECT_EQ(haloNames(p, cc), (std::vector<std::string>{"coop 128x128 f16acc halo", "coop 128x128 halo",
                                                         "coop 128x128 halo3", "coop 128x128 f16acc halo3",
                                                         "coop 256x128 halo", "coop 256x128 f16acc halo",
                                                         "coop 128x128 halo-f23", "coop 128x128 f16acc halo-f23",
                                                         "coop 128x64 halo-f23", "coop 128x64 f16acc halo-f23"}));
  EXPECT_EQ(haloNames(p, {noHalf, w, true, {}, true}),
            (std::vector<std::string>{"coop 128x128 halo", "coop 128x128 halo3", "coop 256x128 halo",
                                      "coop 128x128 halo-f23", "coop 128x64 halo-f23"}));
  EXPECT_EQ(haloNames(tall, cc), (std::vector<std::string>{"coop 128x128 f16acc halo", "coop 128x128 halo",
                                                            "coop 128x128 halo3", "coop 128x128 f16acc halo3",
                                                            "coop 128x128 halo-f23", "coop 128x128 f16acc halo-f23",
                                                            "coop 128x64 halo-f23", "coop 128x64 f16acc halo-f23"}));
  {  // SDGEN_CONV_HALO_F23=1 adds it to the default set
    test::ScopedEnv on("SDGEN_CONV_HALO", nullptr), f23On("SDGEN_CONV_HALO_F23", "1");
    EXPECT_EQ(haloNames(p, cc), (std::vector<std::string>{"coop 128x128 f16acc halo", "coop 128x128 halo",
                                                           "coop 128x128 halo3", "coop 128x128 f16acc halo3",
                                                           "coop 128x128 halo-f23", "coop 128x128 f16acc halo-f23",
                                                           "coop 128x64 halo-f23", "coop 128x64 f16acc halo-f23"}));
  }
}

// Host-only: the real halo tiles (cooperative matrices, not their emulation) compile to SPIR-V, at -O0 and through
// spirv-opt where the tile asks for it, with fp32 accumulators, fp16 ones and the flushed chunks.
TEST(ConvHaloCompile, TilesCompileToSpirv) {
  const std::filesystem::path cache = std::filesystem::temp_directory_path() / "sdgen-gemm-halo-compile-test";
  std::filesystem::remove_all(cache);
  SlangCompiler compiler(defaultSlangc(), defaultShaderDir(), cache.string());
  using ops::ConvAlgo;
  using ops::ConvTile;
  for (const ops::ConvCandidate& c : {ops::ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, false, true},
                                      ops::ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, true, true},
                                      ops::ConvCandidate{ConvAlgo::Coop, ConvTile{256, 128, 0, 0}, 1, false, true},
                                      ops::ConvCandidate{ConvAlgo::Coop, ConvTile{256, 128, 0, 0}, 1, true, true},
                                      ops::ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 3, false, true},
                                      ops::ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 3, true, true},
                                      ops::ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, false, true, 3},
                                      ops::ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, true, true, 3},
                                      ops::ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, false, true, 1, true},
                                      ops::ConvCandidate{ConvAlgo::Coop, ConvTile{128, 64, 0, 0}, 1, false, true, 1, true},
                                      ops::ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, true, true, 1, true}}) {
    ops::GemmTile tile = ops::convCoopGemmTile(c);
    ASSERT_TRUE(tile.haloConv) << c.name();
    if (tile.f16Accumulators) tile.flushK = ops::haloFlushK(tile, 256);
    KernelSource src;
    src.generated = ops::gemmWrapperSource(test::coopGemmInfo(tile.haloWinograd ? 7 : 6), tile, true);
    src.label = "gemm coop halo " + tile.describe();
    src.optimize = tile.spirvOpt;
    test::expectCompiles(compiler, src);
  }
  std::filesystem::remove_all(cache);
}

}  // namespace
}  // namespace sdgen::conv_test
