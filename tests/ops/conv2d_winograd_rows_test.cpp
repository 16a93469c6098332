// Winograd F(6,3) along the rows on tensor cores (the conv algorithm "coop-winograd-rows",
// ops/conv2d_coop_winograd_rows.cpp, shaders/conv/winograd_rows.slang): the whole pipeline (filter transform, per
// band the input transform, the eight 1x3 GEMMs in one launch and the output transform through the sink) on software
// cooperative matrices against float64 on every machine, with the im2col tile (gemm_coop.slang A_MODE 2) and the 1x3
// halo tiles (A_MODE 8: halo, halo3); output heights that leave the last tile row partial, several bands, two images,
// raw and staged inputs, a residual sink. The real tiles on tensor-core devices; the candidates' names, tiles and
// refusals; the real halo tiles' SPIR-V. Suite ConvTest (conv2d_test_fixture.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "engine/slang_compiler.h"
#include "graph/expr_nodes.h"
#include "ops/conv2d.h"
#include "ops/conv2d_candidates.h"
#include "ops/conv2d_kernels.h"
#include "ops/linear_gemm.h"
#include "tests/ops/conv2d_test_fixture.h"
#include "tests/ops/gemm_coop_test_support.h"

namespace sdgen::conv_test {
namespace {

// One subgroup of 16 warpRows x 32: the im2col tile, or the halo tile of warpRows block rows.
ops::GemmTile emulatedRowsTile(int warpRows, bool halo, int bk = 32) {
  ops::GemmTile t = ops::GemmTile::coopTile(16 * warpRows, 32, bk, warpRows, 2);
  t.coopEmulation = true;
  t.haloConv = halo;
  return t;
}

TEST_P(ConvTest, CoopWinogradRowsEmulated) {
  struct RowsCase {
    Case c;
    ops::GemmTile tile;
    int64_t bandRows;
    bool staged;
  };
  const RowsCase cases[] = {
      // H 13: tile rows 0-5, 6-11 and a partial 12 (its rows 13-17 computed and dropped); one tile row per band
      // (3 bands); odd W, partial GEMM tiles (M 11 per band row and image, Cout 24)
      {{"rows im2col", 2, 13, 11, 16, 24, k3}, emulatedRowsTile(2, false), 1, false},
      // one band, a computed input staged into fp16 first
      {{"rows im2col staged", 1, 8, 9, 32, 32, k3}, emulatedRowsTile(2, false), 0, true},
      // the halo tile: 2 block rows (tile rows 0-3 of H 20, the 4th partial), W 32 (2 column blocks), 2 channel
      // slices, 2 column tiles; bands of 2 tile rows
      {{"rows halo", 1, 20, 32, 64, 64, k3}, emulatedRowsTile(2, true), 2, false},
      // two images, 4 block rows (tile rows 0-3: H 19), one band
      {{"rows halo 2 images", 2, 19, 16, 32, 32, k3}, emulatedRowsTile(4, true), 0, true},
      // halo3: 16-channel slices, a step the 3 taps (3 slices), 2 bands
      {{"rows halo3", 1, 20, 16, 48, 32, k3}, emulatedRowsTile(2, true, 16), 2, false}};
  uint32_t seed = 2600;
  for (const RowsCase& e : cases) {
    const Case& c = e.c;
    Layer l = layer(c.cout, c.cin, c.p, seed++);
    Expr x = input({c.n, c.h, c.w, c.cin}, seed++), shift = input({c.cin}, seed++);
    Expr in = e.staged ? silu(x) + shift : x;
    const Shape os = ops::conv2dOutputShape(in.shape(), *l.gpu);
    Expr residual = input(os, seed++);
    TensorView out = output(os);
    if (dt() != DType::F16) {  // fp32 weights: no fp16 gemm layout for the transforms; forcing it is an error
      CommandSequence seq(ctx());
      auto o = options(ConvAlgo::CoopWinogradRows);
      expectError([&] { ops::conv2d(ctx(), seq, in, *l.gpu, bufferSink(out), o); },
                  {"coop-winograd-rows was forced but its contract does not hold"});
      continue;
    }
    auto ref = referencePlusResidual(in, l, residual);
    ops::ConvProblem prob;
    prob.n = c.n, prob.h = c.h, prob.w = c.w, prob.cin = c.cin, prob.ho = os[1], prob.wo = os[2], prob.cout = c.cout;
    prob.p = c.p;
    // The halo tiles twice: the output transform as its own launch (A_MODE 8), then in the products GEMM (A_MODE 9:
    // the last of a block's eight workgroups applies it; two runs, so the counters must come back to zero).
    for (int fused = 0; fused <= (e.tile.haloConv ? 1 : 0); ++fused) {
      ops::Conv2dInfo info;
      const std::string label = "emulated rows";
      const Sink sink = residualAdd(bufferSink(out), residual);
      CommandSequence seq(ctx());
      ops::ConvCall call{ctx(), seq, prob, in, *l.gpu, sink, label, info};
      ops::recordConvCoopWinogradRows(call, scratch_, e.tile, e.bandRows, fused == 1);
      const int64_t rows = ops::winogradRowsTileRows(prob, e.tile);
      const int64_t band = ops::winogradRowsBandRows(prob, e.tile, e.bandRows), bands = (rows + band - 1) / band;
      // [staging,] the filter transform, then per band the input transform, one GEMM (8 batches) and the output
      // transform (fused: in the GEMM)
      EXPECT_EQ(info.kernels.size(), size_t(1 + (e.staged ? 1 : 0) + bands * (fused ? 2 : 3))) << c.name;
      size_t gemms = 0, fusedGemms = 0;
      for (const std::string& k : info.kernels) {
        gemms += k.find("coop-winograd-rows gemm") != std::string::npos;
        fusedGemms += k.find("fused-output") != std::string::npos;
      }
      EXPECT_EQ(gemms, size_t(bands)) << c.name;
      EXPECT_EQ(fusedGemms, size_t(fused ? bands : 0)) << c.name;
      for (int run = 0; run < 1 + fused; ++run) {
        repoison(out);  // nothing of an earlier run or form left to pass for this one's
        seq.run();
        const std::string what = std::string("emulated ") + c.name + ", " + std::to_string(bands) + " bands" +
                                 (fused ? ", fused output, run " + std::to_string(run + 1) : "");
        std::printf("%s: relative error %.3g\n", what.c_str(), compareRoundedInput(read(out), ref, what));
      }
    }
  }
}

// coop-winograd-rows' filters made once (Conv2dWeightsOptions::packWinogradRows, as nn::ParameterStore packs them
// where the autotune chose the algorithm): the host's packing and the kernel's (packWinogradRowsFilters) agree bit
// for bit and hold float64's G g within one fp16 rounding; a conv on them records no filter launch and matches
// float64 (the halo3 tile, output transform in the GEMM); layouts that cannot hold them are refused by name.
TEST_P(ConvTest, CoopWinogradRowsFiltersMadeOnce) {
  const int cin = 32, cout = 64;  // two column tiles of the emulated halo tile
  Layer l = layer(cout, cin, k3, 2700);
  ops::Conv2dWeightsOptions o;
  o.storage = DType::F16;
  o.packWinogradRows = true;
  o.name = "rows conv";
  if (dt() != DType::F16) {
    o.storage = DType::F32;
    expectError([&] { ops::Conv2dWeights::allocate(ctx(), cout, cin, k3, o); }, {"rows conv", "fp16 storage"});
    o.storage = DType::F16;
    expectError([&] { ops::Conv2dWeights::allocate(ctx(), 36, cin, k3, o); }, {"rows conv", "multiples of 8"});
    expectError([&] { ops::Conv2dWeights::allocate(ctx(), cout, cin, Conv2dParams::square(3, 2), o); },
                {"rows conv", "3x3 s1 p1 d1"});
    ops::Conv2dWeights plain = ops::Conv2dWeights::allocate(ctx(), cout, cin, k3, {.storage = DType::F16});
    EXPECT_FALSE(plain.hasWinogradRows());
    expectError([&] { (void)plain.winogradRows(); }, {"packWinogradRows"});
    return;
  }
  ops::Conv2dWeights w(ctx(), cout, cin, k3, l.w, l.b, o);
  ASSERT_TRUE(w.hasWinogradRows());
  const int64_t count = int64_t(24) * cin * cout;
  const std::vector<float> host = test::downloadFloats(ctx(), w.winogradRows(), count, DType::F16);
  {
    CommandSequence seq(ctx());
    ops::packWinogradRowsFilters(ctx(), seq, w);
    seq.run();
  }
  const std::vector<float> device = test::downloadFloats(ctx(), w.winogradRows(), count, DType::F16);
  ASSERT_EQ(host.size(), device.size());
  size_t differ = 0;
  for (size_t i = 0; i < host.size(); ++i) differ += host[i] != device[i];
  EXPECT_EQ(differ, 0u) << "of " << host.size() << " filter values";
  // float64: U_e(kx)[ci][co] = sum_ky G[e][ky] g(ky, kx) with G's rows scaled to a largest entry of 1
  // (winograd_rows_matrices.slang)
  static const double G[8][3] = {{-1, 0, 0},       {-1, -1, -1},     {-1, 1, -1}, {0.25, 0.5, 1},
                                 {0.25, -0.5, 1}, {1, 0.5, 0.25}, {1, -0.5, 0.25}, {0, 0, 1}};
  double worst = 0;
  for (int e = 0; e < 8; ++e)
    for (int kx = 0; kx < 3; ++kx)
      for (int ci = 0; ci < cin; ++ci)
        for (int co = 0; co < cout; ++co) {
          double ref = 0;
          for (int ky = 0; ky < 3; ++ky) ref += G[e][ky] * l.w[((size_t(co) * cin + ci) * 3 + ky) * 3 + kx];
          const double got = device[((size_t(e) * 3 + kx) * cin + ci) * cout + co];
          worst = std::max(worst, std::abs(got - ref) / std::max(1.0, std::abs(ref)));
        }
  EXPECT_LE(worst, 1e-3);  // one fp16 rounding of a sum of three fp16 taps
  // A conv on the packed filters: no filter launch; H 14 (tile rows 0-2, the last partial), one band, halo3.
  const Case c{"rows packed filters", 1, 14, 16, cin, cout, k3};
  Expr x = input({c.n, c.h, c.w, c.cin}, 2701);
  const Shape os = ops::conv2dOutputShape(x.shape(), w);
  TensorView out = output(os);
  ops::ConvProblem prob;
  prob.n = c.n, prob.h = c.h, prob.w = c.w, prob.cin = c.cin, prob.ho = os[1], prob.wo = os[2], prob.cout = c.cout;
  prob.p = c.p;
  ops::Conv2dInfo info;
  CommandSequence seq(ctx());
  ops::ConvCall call{ctx(), seq, prob, x, w, bufferSink(out), "packed rows", info};
  ops::recordConvCoopWinogradRows(call, scratch_, emulatedRowsTile(2, true, 16), 0, true);
  seq.run();
  for (const std::string& k : info.kernels) EXPECT_EQ(k.find("filter"), std::string::npos) << k;
  EXPECT_EQ(info.kernels.size(), 2u);  // the input transform and the GEMM with the output transform
  std::printf("packed filters: relative error %.3g\n", compareRoundedInput(read(out), reference(x, l), c.name));
}

// The real tiles: the im2col tile (the forced algorithm's default: 64x64 for Cout 24; three bands of one tile row),
// then the 128x128 im2col, halo and halo3 tiles by candidate on 16 tile rows (H 94, the last partial) in one band
// and in two; raw, staged and group-norm inputs (tensorCoreCase).
// The filters made by the first recording that runs the algorithm (Conv2dWeightsOptions::winogradRowsOnUse, what
// nn::ParameterStore asks for): none before it, the same bits as filters packed at allocation after it, on their
// own submission (no filter launch in the recorded conv, whose output matches float64), made once (a second
// recording keeps the allocation); a pack that throws leaves none; layouts that cannot hold them are refused.
TEST_P(ConvTest, CoopWinogradRowsFiltersMadeOnFirstUse) {
  const int cin = 32, cout = 64;
  Layer l = layer(cout, cin, k3, 2710);
  ops::Conv2dWeightsOptions o;
  o.storage = DType::F16;
  o.winogradRowsOnUse = true;
  o.name = "rows-on-use conv";
  if (dt() != DType::F16) {
    o.storage = DType::F32;
    expectError([&] { ops::Conv2dWeights::allocate(ctx(), cout, cin, k3, o); }, {"rows-on-use conv", "fp16 storage"});
    o.storage = DType::F16;
    expectError([&] { ops::Conv2dWeights::allocate(ctx(), cout, cin, Conv2dParams::square(3, 2), o); },
                {"rows-on-use conv", "3x3 s1 p1 d1"});
    ops::Conv2dWeights w = ops::Conv2dWeights::allocate(ctx(), cout, cin, k3, o);
    expectError([&] { w.makeWinogradRows(ctx(), [](const Allocation&) { throw Error("pack failed"); }); },
                {"pack failed"});
    EXPECT_FALSE(w.hasWinogradRows());
    EXPECT_EQ(w.winogradRowsBytes(), 0u);
    return;
  }
  ops::Conv2dWeights w(ctx(), cout, cin, k3, l.w, l.b, o);
  EXPECT_TRUE(w.winogradRowsOnUse());
  EXPECT_FALSE(w.hasWinogradRows());
  EXPECT_EQ(w.winogradRowsBytes(), 0u);
  const Case c{"rows filters on first use", 1, 14, 16, cin, cout, k3};
  Expr x = input({c.n, c.h, c.w, c.cin}, 2711);
  const Shape os = ops::conv2dOutputShape(x.shape(), w);
  ops::ConvProblem prob;
  prob.n = c.n, prob.h = c.h, prob.w = c.w, prob.cin = c.cin, prob.ho = os[1], prob.wo = os[2], prob.cout = c.cout;
  prob.p = c.p;
  VkDeviceAddress first = 0;
  for (int recording = 0; recording < 2; ++recording) {
    TensorView out = output(os);
    ops::Conv2dInfo info;
    CommandSequence seq(ctx());
    ops::ConvCall call{ctx(), seq, prob, x, w, bufferSink(out), "rows on use", info};
    ops::recordConvCoopWinogradRows(call, scratch_, emulatedRowsTile(2, true, 16), 0, true);
    ASSERT_TRUE(w.hasWinogradRows());
    if (recording == 0) first = w.winogradRows().address();
    EXPECT_EQ(w.winogradRows().address(), first) << "recording " << recording << " made the filters again";
    EXPECT_EQ(w.winogradRowsBytes(), uint64_t(24) * cin * cout * 2);
    seq.run();
    for (const std::string& k : info.kernels) EXPECT_EQ(k.find("filter"), std::string::npos) << k;
    std::printf("recording %d: relative error %.3g\n", recording,
                compareRoundedInput(read(out), reference(x, l), c.name));
  }
  ops::Conv2dWeightsOptions packed = o;
  packed.winogradRowsOnUse = false;
  packed.packWinogradRows = true;
  ops::Conv2dWeights atAllocation(ctx(), cout, cin, k3, l.w, l.b, packed);
  EXPECT_FALSE(atAllocation.winogradRowsOnUse());
  const int64_t count = int64_t(24) * cin * cout;
  const std::vector<float> want = test::downloadFloats(ctx(), atAllocation.winogradRows(), count, DType::F16);
  const std::vector<float> got = test::downloadFloats(ctx(), w.winogradRows(), count, DType::F16);
  ASSERT_EQ(want.size(), got.size());
  size_t differ = 0;
  for (size_t i = 0; i < want.size(); ++i) differ += want[i] != got[i];
  EXPECT_EQ(differ, 0u) << "of " << want.size() << " filter values";
}

TEST_P(ConvTest, CoopWinogradRowsWhereSupported) {
  uint32_t seed = 2700;
  const bool ran = tensorCoreCase({"rows odd", 2, 13, 11, 16, 24, k3}, ConvAlgo::CoopWinogradRows, seed, 1,
                                  [&](const ops::Conv2dInfo& info, InputMode, const Shape&) {
                                    EXPECT_NE(info.kernels.back().find("coop-winograd-rows output"), std::string::npos);
                                  });
  if (!ran) return;
  for (int tile : {0, 1, 2}) {  // im2col, halo, halo3 (128x128)
    ops::ConvCandidate cand{ConvAlgo::CoopWinogradRows, ops::ConvTile{128, 128, 0, 0}, 1};
    cand.halo = tile > 0;
    cand.haloTaps = tile == 2 ? 3 : 1;
    for (int64_t bandRows : {0, 8}) {
      const Case c{"rows wide", 1, 94, 32, 64, 256, k3};  // 16 tile rows: one band of 16 or two of 8
      tensorCoreCase(c, ConvAlgo::CoopWinogradRows, seed, bandRows,
                     [&](const ops::Conv2dInfo& info, InputMode, const Shape&) {
                       EXPECT_EQ(info.candidate, cand.name());
                       size_t outputs = 0, fused = 0;  // the halo tiles transform in the GEMM (A_MODE 9)
                       for (const std::string& k : info.kernels) {
                         outputs += k.find("coop-winograd-rows output") != std::string::npos;
                         fused += k.find("fused-output") != std::string::npos;
                       }
                       EXPECT_EQ(outputs + fused, size_t(bandRows ? 2 : 1)) << cand.name();
                       EXPECT_EQ(fused, cand.halo ? outputs + fused : 0) << cand.name();
                     }, cand);
    }
  }
}

TEST_P(ConvTest, CoopWinogradRowsCandidates) {
  ops::ConvCandidate halo{ConvAlgo::CoopWinogradRows, ops::ConvTile{128, 128, 0, 0}, 1};
  halo.halo = true;
  EXPECT_EQ(halo.name(), "coop-winograd-rows 128x128 halo");
  EXPECT_EQ(ops::parseConvCandidate("coop-winograd-rows 128x128 halo"), halo);
  EXPECT_EQ(ops::parseConvCandidate("coop-winograd-rows 64x64"),
            (ops::ConvCandidate{ConvAlgo::CoopWinogradRows, ops::ConvTile{64, 64, 0, 0}, 1}));
  ops::ConvCandidate halo3 = halo;
  halo3.haloTaps = 3;
  EXPECT_EQ(halo3.name(), "coop-winograd-rows 128x128 halo3");
  EXPECT_EQ(ops::parseConvCandidate("coop-winograd-rows 128x128 halo3"), halo3);
  EXPECT_EQ(ops::convCoopGemmTile(halo3).bk, 16);
  for (const char* bad : {"coop-winograd-rows 64x64 halo", "coop-winograd-rows 256x256",
                          "coop-winograd-rows 128x128 f16acc", "coop-winograd-rows 128x128 split 2",
                          "coop-winograd-rows 128x128 halo-f23", "coop-winograd-rows 128x256 halo",
                          "coop-winograd-rows 64x64 halo3"})
    EXPECT_FALSE(ops::parseConvCandidate(bad)) << bad;
  const ops::GemmTile t = ops::convCoopGemmTile(halo);
  EXPECT_TRUE(t.haloConv);
  EXPECT_FALSE(t.f16Accumulators);
  EXPECT_EQ(t.bk, 32);
  // Tile rows of 6 outputs, rounded up to the halo tile's 8 block rows; bands within the byte bound.
  ops::ConvProblem p;
  p.n = 1, p.h = p.ho = 512, p.w = p.wo = 512, p.cin = p.cout = 256, p.p = k3;
  EXPECT_EQ(ops::winogradRowsTileRows(p, t), 88);                                    // 86 -> 88
  EXPECT_EQ(ops::winogradRowsBandRows(p, t), 48);  // 2 MiB of V per tile row: 48 fit, 2 even bands of 44 -> 48
  ops::ConvProblem big = p;  // 1024^2: 176 tile rows; 4 MiB per row (24 fit) -> 8 even bands of 22 -> 24
  big.h = big.ho = big.w = big.wo = 1024;
  EXPECT_EQ(ops::winogradRowsBandRows(big, t), 24);
  big.cin = big.cout = 128;  // 2 MiB per row: 4 bands of 44 -> 48
  EXPECT_EQ(ops::winogradRowsBandRows(big, t), 48);
  EXPECT_EQ(ops::winogradRowsTileRows(p, ops::coopWinogradRowsGemmTile(p)), 86);     // the im2col tile: 1 row blocks
  EXPECT_EQ(ops::winogradRowsBandRows(p, t, 5), 8);
  // The 1x3 halo tile's contract on an H100-like device (every machine): refused by name where the image or the
  // channels do not fit it.
  if (dt() != DType::F16) return;
  ops::Conv2dWeightsOptions o;
  o.storage = DType::F16;
  auto w = ops::Conv2dWeights::allocate(ctx(), 256, 256, k3, o);
  const DeviceInfo d = test::h100LikeWithHalfAccumulators();
  const ops::ConvContext cc{d, w, true, {}, true};
  EXPECT_EQ(ops::candidateViolation(halo, p, cc), "");
  EXPECT_EQ(ops::candidateViolation(halo3, p, cc), "");
  ops::ConvProblem narrow = p;
  narrow.w = narrow.wo = 40;
  EXPECT_NE(ops::candidateViolation(halo3, narrow, cc).find("W % 16 == 0"), std::string::npos);
  ops::ConvProblem odd = p;
  odd.cin = 200;
  EXPECT_NE(ops::candidateViolation(halo3, odd, cc).find("Cin % 16 == 0"), std::string::npos);
  // The halo tile's band of whole 8-row blocks past 2^31 elements of V where the input is not (6 rows of 2^17
  // pixels x 256 channels: one tile row, padded to 8, x 8 products = 2^31) is refused by name.
  ops::ConvProblem wide = p;
  wide.h = wide.ho = 6;
  wide.w = wide.wo = int64_t(1) << 17;
  EXPECT_EQ(ops::contractViolation(ConvAlgo::CoopWinogradRows, wide, cc), "");
  EXPECT_NE(ops::candidateViolation(halo3, wide, cc).find("of tile"), std::string::npos);
  // The default candidate: halo3, else im2col; none with SDGEN_CONV_WINOGRAD_ROWS=0.
  auto rows = [&](const ops::ConvProblem& prob) {
    std::vector<std::string> names;
    for (const ops::ConvCandidate& c : ops::convCandidates(prob, cc))
      if (c.algo == ConvAlgo::CoopWinogradRows) names.push_back(c.name());
    return names;
  };
  EXPECT_EQ(rows(p), (std::vector<std::string>{"coop-winograd-rows 128x128 halo3"}));
  EXPECT_EQ(rows(narrow), (std::vector<std::string>{"coop-winograd-rows 128x128"}));
  test::ScopedEnv off("SDGEN_CONV_WINOGRAD_ROWS", "0");
  EXPECT_TRUE(rows(p).empty());
}

// Host-only: the real 1x3 halo tiles (A_MODE 8, and 9 with the output transform, cooperative matrices, not their
// emulation) compile to SPIR-V, on precompiled modules (engine/slang_modules.h) the same words as from the sources,
// also with the output items' defines (SDGEN_ROWS_OUT, which a part gemm_coop.slang includes mentions).
TEST(ConvWinogradRowsCompile, HaloTilesCompileToSpirv) {
  const std::filesystem::path cache = std::filesystem::temp_directory_path() / "sdgen-gemm-rows-compile-test";
  std::filesystem::remove_all(cache);
  SlangCompiler compiler(defaultSlangc(), defaultShaderDir(), cache.string());
  SlangCompiler sources(defaultSlangc(), defaultShaderDir(), (cache / "sources").string(), false);
  ASSERT_TRUE(compiler.precompiledModules());
  for (int taps : {1, 3}) {
    ops::ConvCandidate c{ConvAlgo::CoopWinogradRows, ops::ConvTile{128, 128, 0, 0}, 1};
    c.halo = true;
    c.haloTaps = taps;
    const ops::GemmTile tile = ops::convCoopGemmTile(c);
    ASSERT_TRUE(tile.haloConv) << c.name();
    for (int aMode : {8, 9}) {
      KernelSource src;
      src.generated = ops::gemmWrapperSource(test::coopGemmInfo(aMode), tile, aMode == 9);
      src.label = "gemm coop rows halo " + tile.describe() + " A_MODE " + std::to_string(aMode);
      test::expectCompiles(compiler, src);
      src.capabilities = {"spvCooperativeMatrixKHR"};
      EXPECT_EQ(compiler.compile(src), sources.compile(src)) << src.label;
      if (aMode == 9 && taps == 3) {
        const std::vector<uint32_t> defaults = compiler.compile(src);
        src.defines = {{"SDGEN_ROWS_OUT_CHANNELS", "8"}, {"SDGEN_ROWS_OUT_ITEMS", "2"}};
        const std::vector<uint32_t> items = compiler.compile(src);
        EXPECT_NE(items, defaults) << src.label;
        EXPECT_EQ(items, sources.compile(src)) << src.label;
      }
    }
  }
  EXPECT_GT(compiler.modulesCompiled(), 0u);
  std::filesystem::remove_all(cache);
}

}  // namespace
}  // namespace sdgen::conv_test
