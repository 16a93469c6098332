// The tensor-core convolution's A modes on software cooperative matrices (GemmTile::coopEmulation,
// shaders/coop_emulation.slang): the im2col walk (gemm_coop.slang A_MODE 2: strides, dilation, a K slice crossing a
// tap at a different k per invocation, 1x1) and the four phases of an upsampled 3x3 convolution (A_MODE 5, its
// sub-pixel sink), with fp32 and fp16 accumulators (the 256x256 candidate's accumulation, session 37) and split-K,
// the split cases again with the geometry compiled in (GemmTile::fixedShape) and bit-identical,
// through ops::recordGemm as ops/conv2d_coop.cpp records them, against float64 on every machine. The real tiles
// run in ConvTest.Coop*WhereSupported on tensor-core devices. Suite ConvTest (conv2d_test_fixture.h).
#include <cstdio>
#include <cstring>

#include "graph/expr_nodes.h"
#include "ops/linear_gemm.h"
#include "tests/ops/conv2d_test_fixture.h"

namespace sdgen::conv_test {
namespace {

ops::GemmTile emulatedTile(bool f16, int splitK) {
  ops::GemmTile t = ops::GemmTile::coopTile(32, 32, 32, 2, 2);
  t.coopEmulation = true;
  t.f16Accumulators = f16;
  t.splitK = splitK;
  return t;
}

// One subgroup of the 256x160 fp16-accumulator conv tile (64 x 80: 4 x 5 fragments), in 2 parts.
ops::GemmTile wideSubgroupTile() {
  ops::GemmTile t = ops::GemmTile::coopTile(64, 80, 32, 4, 5);
  t.coopEmulation = true;
  t.f16Accumulators = true;
  t.splitK = 2;
  return t;
}

// fp16 accumulators flushed to fp16 planes every `flushK` of K (ACC 3): the unsplit 256x256 conv candidate past
// 2048 of K (session 42), here every 96 of K 288 (3 chunks, 2 planes).
ops::GemmTile flushedTile(int flushK) {
  ops::GemmTile t = emulatedTile(true, 1);
  t.flushK = flushK;
  return t;
}

std::string accumulation(const ops::GemmTile& t) {
  return std::string(t.f16Accumulators ? "fp16" : "fp32") + " accumulators" +
         (t.splitK > 1 ? ", split " + std::to_string(t.splitK) : "") +
         (t.flushK > 0 ? ", flushed every " + std::to_string(t.flushK) : "");
}

TEST_P(ConvTest, CoopIm2colEmulated) {
  struct EmuCase { Case c; ops::GemmTile tile; };
  const EmuCase cases[] = {
      {{"3x3", 2, 9, 11, 16, 24, k3}, emulatedTile(false, 1)},
      {{"3x3 stride 2", 1, 13, 10, 8, 40, Conv2dParams::square(3, 2)}, emulatedTile(false, 3)},
      {{"1x1", 1, 7, 5, 32, 16, Conv2dParams::square(1)}, emulatedTile(true, 1)},
      {{"3x5 d2x1 s1x2 Cin 40", 1, 11, 13, 40, 24, geometry(3, 5, 1, 2, 2, 2, 2, 1)}, emulatedTile(true, 2)},
      // K 2304 in 2 parts of 1152 with fp16 accumulators, stride 2: the 256x256 candidate's accumulation.
      {{"3x3 deep stride 2", 1, 9, 9, 256, 32, Conv2dParams::square(3, 2)}, emulatedTile(true, 2)},
      // Whole 32x32 tiles (M 64, Cout 32, K 288) on fp32 accumulators: the residual loaded into them.
      {{"3x3 whole tiles", 1, 8, 8, 32, 32, k3}, emulatedTile(false, 1)},
      // The 256x160 candidate's 64x80 subgroup tile (4 x 5 fragments) with fp16 accumulators, partial columns, 2 parts.
      {{"3x3 64x80 subgroup", 1, 9, 9, 64, 88, k3}, wideSubgroupTile()},
      // The flushed accumulation of the unsplit 256x256 candidate: K 288 in 3 fp16 chunks, partial tiles.
      {{"3x3 flushed", 1, 9, 9, 32, 40, k3}, flushedTile(96)}};
  uint32_t seed = 1500;
  for (const EmuCase& e : cases) {
    const Case& c = e.c;
    Layer l = layer(c.cout, c.cin, c.p, seed++);
    Expr x = input({c.n, c.h, c.w, c.cin}, seed++);
    const Shape os = ops::conv2dOutputShape(x.shape(), *l.gpu);
    Expr residual = input(os, seed++);
    auto ref = referencePlusResidual(x, l, residual);
    TensorView out = output(os);
    ops::GemmProblem g;
    g.a = x;
    g.packed = ops::PackedB{l.gpu->gemm().address(), l.gpu->bias().address(), c.cout, dt(),
                            {range(l.gpu->gemm()), range(l.gpu->bias())}};
    g.conv = ops::GemmConv{x.node().tensor.address, c.h, c.w, c.cin, os[1], os[2], c.p.kh, c.p.kw, c.p.strideH,
                           c.p.strideW, c.p.padH, c.p.padW, c.p.dilationH, c.p.dilationW};
    g.out = residualAdd(bufferSink(out), residual);
    g.m = os[0] * os[1] * os[2];
    g.n = c.cout;
    g.k = int64_t(c.p.kh) * c.p.kw * c.cin;
    g.d1 = os[1];
    g.d2 = os[2];
    g.tile = e.tile;
    g.scratch = &scratch_;
    g.label = "emulated conv";
    CommandSequence seq(ctx());
    if (dt() != DType::F16) {
      expectError([&] { ops::recordGemm(ctx(), seq, g); }, {"emulated conv", "packed fp16 weights"});
      continue;
    }
    const ops::GemmInfo info = ops::recordGemm(ctx(), seq, g);
    seq.run();
    EXPECT_EQ(info.aMode, 2);
    const bool whole = g.m % 32 == 0 && g.n % 32 == 0 && g.k % 32 == 0;
    EXPECT_EQ(info.residualPreloaded, whole && !e.tile.f16Accumulators) << c.name;
    const std::string what = std::string("emulated im2col ") + c.name + ", " + accumulation(e.tile);
    const std::vector<float> got = read(out);
    std::printf("%s: relative error %.3g\n", what.c_str(), compareRoundedInput(got, ref, what));
    // The geometry compiled in (GemmTile::fixedShape): the same kernel on constants, so the same bits. On the
    // split and strided cases (the tap walk's folded divisions, the parts' bounds).
    if (e.tile.splitK > 1) {
      g.tile->fixedShape = true;
      CommandSequence fixedSeq(ctx());
      const ops::GemmInfo fixed = ops::recordGemm(ctx(), fixedSeq, g);
      fixedSeq.run();
      EXPECT_EQ(fixed.headerType, "FixedHeader") << what;
      EXPECT_NE(fixed.kernel.find(" fixed"), std::string::npos) << fixed.kernel;
      const std::vector<float> again = read(out);
      ASSERT_EQ(again.size(), got.size());
      size_t differ = 0;
      for (size_t i = 0; i < got.size(); ++i) differ += std::memcmp(&got[i], &again[i], sizeof(float)) != 0;
      EXPECT_EQ(differ, 0u) << what << ": the fixed-shape kernel differs from the runtime one";
    }
  }
}

TEST_P(ConvTest, CoopUpsamplePhasesEmulated) {
  uint32_t seed = 1600;
  for (const ops::GemmTile& tile : {emulatedTile(false, 1), emulatedTile(true, 2)}) {
    const int n = 1, h = 8, w = 8, cin = 16, cout = 24;  // phase rows 64: whole 32-row tiles per phase
    Layer l = layer(cout, cin, k3, seed++);
    Expr x = input({n, h, w, cin}, seed++);
    auto ref = reference(upsample2x(x), l);
    TensorView out = output({n, 2 * h, 2 * w, cout});
    // The phase filters as the device makes them (packUpsamplePhaseFilters), [4][4 Cin][Cout] in fp16.
    keep_.push_back(mem_.upload(ctx(), ops::packUpsamplePhaseLayout(l.w, cout, cin), DType::F16));
    const Allocation& u = keep_.back();
    ops::GemmProblem g;
    g.a = x;
    // (Stored as fp16 either way; an fp32 model's weights are refused as such, below.)
    g.packed = ops::PackedB{u.address(), l.gpu->bias().address(), cout, dt(), {range(u), range(l.gpu->bias())}};
    g.conv = ops::GemmConv{x.node().tensor.address, h, w, cin, h, w, 2, 2, 1, 1, 0, 0, 1, 1, n * h * w};
    g.out = subPixel(bufferSink(out));
    g.m = 4 * n * h * w;
    g.n = cout;
    g.k = 4 * cin;
    g.d1 = h;
    g.d2 = w;
    g.tile = tile;
    g.scratch = &scratch_;
    g.label = "emulated phases";
    CommandSequence seq(ctx());
    if (dt() != DType::F16) {
      expectError([&] { ops::recordGemm(ctx(), seq, g); }, {"emulated phases", "packed fp16 weights"});
      return;
    }
    EXPECT_EQ(ops::recordGemm(ctx(), seq, g).aMode, 5);
    seq.run();
    const std::string what = "emulated upsampling phases, " + accumulation(tile);
    std::printf("%s: relative error %.3g\n", what.c_str(), compareRoundedInput(read(out), ref, what));
  }
}

}  // namespace
}  // namespace sdgen::conv_test
