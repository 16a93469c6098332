// The direct convolution (few output channels: the UNet's and the VAE's conv_out) against a float64 CPU
// reference in fp32 and fp16 storage: geometries, fused inputs and sinks, the split over input channels, a group
// norm read through its table, and its contract. With fp16 weights the halo holds a computed input rounded to
// fp16, so those cases take the tensor-core kernels' bar (compareRoundedInput). Suite ConvTest
// (conv2d_test_fixture.h), instantiated in conv2d_test.cpp.
#include <cstdlib>

#include "tests/ops/conv2d_test_fixture.h"

namespace sdgen::conv_test {
namespace {

// Few output channels (the UNet's and the VAE's conv_out): every geometry the contract allows, several 16 x 16
// pixel blocks, partial blocks, channel slices past Cin (Cin 20: one full slice and a partial one), batch 2.
TEST_P(ConvTest, DirectFewOutputChannels) {
  checkCases({
                 {"3x3, Cout 3, partial blocks", 1, 19, 35, 8, 3, k3},
                 {"3x3, Cout 4, batch 2", 2, 17, 16, 20, 4, k3},
                 {"3x3 padding 0, Cout 1", 1, 18, 20, 4, 1, geometry(3, 3, 1, 1, 0, 0)},
                 {"1x1, Cout 2", 1, 9, 21, 12, 2, Conv2dParams::square(1)},
                 {"2x3 uneven padding", 1, 10, 12, 4, 3, geometry(2, 3, 1, 1, 1, 0)},
             },
             ConvAlgo::Direct);
}

// A computed input (silu(x) + shift: evaluated once per halo element) and a residual sink; what the contract
// rules out is refused by name.
TEST_P(ConvTest, DirectFusedAndContract) {
  Expr x = input({1, 20, 18, 16}, 40), shift = input({16}, 41), residual = input({1, 20, 18, 3}, 42);
  Expr in = silu(x) + shift;
  Layer l = layer(3, 16, k3, 43);
  std::vector<double> ref = referencePlusResidual(in, l, residual);
  TensorView out = output({1, 20, 18, 3});
  CommandSequence seq(ctx());
  auto info = ops::conv2d(ctx(), seq, in, *l.gpu, residualAdd(bufferSink(out), residual), options(ConvAlgo::Direct));
  seq.run();
  EXPECT_EQ(info.algo, ConvAlgo::Direct);
  compareRoundedInput(read(out), ref, "direct fused");

  Layer wide = layer(5, 8, k3, 44), strided = layer(3, 8, Conv2dParams::square(3, 2), 45);
  Layer odd = layer(3, 6, k3, 46);
  expectError([&] { check(input({1, 8, 8, 8}, 47), wide, ConvAlgo::Direct); }, {"algorithm direct", "Cout = 5"});
  expectError([&] { check(input({1, 8, 8, 8}, 48), strided, ConvAlgo::Direct); }, {"algorithm direct", "stride 1"});
  expectError([&] { check(input({1, 8, 8, 6}, 49), odd, ConvAlgo::Direct); }, {"algorithm direct", "Cin = 6"});
}

// The input channels split over workgroups (candidate "direct split P": where the 16 x 16 blocks are few, as for
// the UNet's conv_out): parts of whole 16-channel slices with a shorter last one (Cin 40 in 2 and 3 parts), a
// computed input, a residual sink, two images and partial blocks, against float64; the parts' sums are a second
// launch; what the split cannot run is refused by name.
TEST_P(ConvTest, DirectSplitOverInputChannels) {
  struct SplitCase { Case c; int parts; };
  const SplitCase cases[] = {{{"3x3 Cin 40", 2, 19, 17, 40, 4, k3}, 2},
                             {{"3x3 Cin 40", 2, 19, 17, 40, 4, k3}, 3},
                             {{"3x3 Cin 64 Cout 3", 1, 16, 20, 64, 3, k3}, 4},
                             {{"1x1 Cin 32 Cout 1", 1, 9, 21, 32, 1, Conv2dParams::square(1)}, 2}};
  // The CUDA-core kernel's split (the default on tensor cores is their form since session 38; its split is
  // DirectOnTensorCores' "Cin 40 in 3 parts").
  test::ScopedEnv cudaCores("SDGEN_CONV_DIRECT_COOP", "0");
  uint32_t seed = 1000;
  for (const SplitCase& sc : cases) {
    const Case& c = sc.c;
    Expr x = input({c.n, c.h, c.w, c.cin}, seed++), shift = input({c.cin}, seed++);
    Expr in = silu(x) + shift, residual = input({c.n, c.h, c.w, c.cout}, seed++);
    Layer l = layer(c.cout, c.cin, c.p, seed++);
    std::vector<double> ref = referencePlusResidual(in, l, residual);
    TensorView out = output({c.n, c.h, c.w, c.cout});
    CommandSequence seq(ctx());
    ops::Conv2dOptions o = options(ConvAlgo::Auto);
    o.candidate = ops::ConvCandidate{ConvAlgo::Direct, ops::ConvTile{}, sc.parts};
    auto info = ops::conv2d(ctx(), seq, in, *l.gpu, residualAdd(bufferSink(out), residual), o);
    seq.run();
    EXPECT_EQ(info.candidate, "direct split " + std::to_string(sc.parts));
    ASSERT_EQ(info.kernels.size(), 2u);
    EXPECT_NE(info.kernels[0].find("direct 16x16 split " + std::to_string(sc.parts)), std::string::npos) << info.kernels[0];
    EXPECT_NE(info.kernels[1].find("direct split sum"), std::string::npos) << info.kernels[1];
    compareRoundedInput(read(out), ref, std::string("direct split ") + c.name + " in " + std::to_string(sc.parts));
  }
  // A group norm + SiLU input through its per-channel table (forced; SDXL's conv_out takes it by size): the table
  // and the partials live in different scratch slots, both read and written by the same launch.
  if (dt() == DType::F16) {
    Expr x = input({2, 18, 20, 48}, 1200);
    Expr in = groupNormSilu(x, 1201);
    Layer l = layer(4, 48, k3, 1202);
    auto ref = reference(in, l);
    TensorView out = output({2, 18, 20, 4});
    CommandSequence seq(ctx());
    ops::Conv2dOptions o = options(ConvAlgo::Auto);
    o.candidate = ops::ConvCandidate{ConvAlgo::Direct, ops::ConvTile{}, 3};
    // Scratch whose partials slot already holds room for both: were the partials there, they would overwrite
    // the table the same launch reads.
    ops::Conv2dScratch roomy(ctx());
    roomy.acquire(1 << 20, ops::Conv2dScratch::Slot::Partials);
    o.scratch = &roomy;
    setenv("SDGEN_CONV_FUSE_NORM", "1", 1);
    auto info = ops::conv2d(ctx(), seq, in, *l.gpu, bufferSink(out), o);
    unsetenv("SDGEN_CONV_FUSE_NORM");
    seq.run();
    ASSERT_EQ(info.kernels.size(), 3u);
    EXPECT_NE(info.kernels[0].find("direct affine"), std::string::npos) << info.kernels[0];
    compareRoundedInput(read(out), ref, "direct split 3 through the group norm's table");
  }
  EXPECT_EQ(ops::parseConvCandidate("direct split 8"), (ops::ConvCandidate{ConvAlgo::Direct, ops::ConvTile{}, 8}));
  EXPECT_FALSE(ops::parseConvCandidate("direct split 1"));
  EXPECT_FALSE(ops::parseConvCandidate("direct split"));
  Layer l = layer(4, 40, k3, 1100);
  Expr x = input({1, 8, 8, 40}, 1101);
  TensorView out = output({1, 8, 8, 4});
  CommandSequence seq(ctx());
  ops::Conv2dOptions o = options(ConvAlgo::Auto);
  o.candidate = ops::ConvCandidate{ConvAlgo::Direct, ops::ConvTile{}, 4};  // 3 slices of 16 channels
  expectError([&] { ops::conv2d(ctx(), seq, x, *l.gpu, bufferSink(out), o); },
              {"candidate 'direct split 4'", "more parts than 16-channel slices"});
  o.candidate = ops::ConvCandidate{ConvAlgo::Direct, ops::ConvTile{}, 2};
  o.scratch = nullptr;
  expectError([&] { ops::conv2d(ctx(), seq, x, *l.gpu, bufferSink(out), o); },
              {"candidate 'direct split 2'", "needs scratch memory"});
}

// A group norm + SiLU input (the VAE's conv_out) read through its per-channel table where x is raw fp16 (forced
// here: the default takes it from 4 M elements, ops/conv2d_input_affine.h), two images, against float64; on the
// CUDA-core kernel and on its tensor-core form (SDGEN_CONV_DIRECT_COOP: the real kernel on tensor-core devices,
// software matrices elsewhere; fp16 weights only, fp32 keeps the CUDA-core kernel).
TEST_P(ConvTest, DirectReadsGroupNormThroughItsTable) {
  const bool real = ops::gemmCoopSupported(ctx().info());
  for (bool coop : {false, true}) {
    test::ScopedEnv knob("SDGEN_CONV_DIRECT_COOP", coop ? (real ? nullptr : "emulate") : "0");
    Expr x = input({2, 18, 20, 16}, 60);
    Expr in = groupNormSilu(x, 61);
    Layer l = layer(3, 16, k3, 62);
    auto ref = reference(in, l);
    TensorView out = output({2, 18, 20, 3});
    CommandSequence seq(ctx());
    test::ScopedEnv fuse("SDGEN_CONV_FUSE_NORM", "1");
    auto info = ops::conv2d(ctx(), seq, in, *l.gpu, bufferSink(out), options(ConvAlgo::Direct));
    seq.run();
    EXPECT_EQ(info.algo, ConvAlgo::Direct);
    const bool table = dt() == DType::F16;  // the table's expression reads x raw as fp16
    ASSERT_EQ(info.kernels.size(), table ? 2u : 1u);
    if (table) {
      EXPECT_NE(info.kernels[0].find("direct affine"), std::string::npos) << info.kernels[0];
    }
    const bool coopRan = coop && dt() == DType::F16;
    EXPECT_NE(info.kernels.back().find(coopRan ? (real ? "direct coop 16x16" : "direct coop 2x16") : "direct 16x16"),
              std::string::npos) << info.kernels.back();
    compareRoundedInput(read(out), ref, coopRan ? "direct group norm, tensor cores" : "direct group norm");
  }
}

// The direct kernel's products on tensor cores (shaders/conv/conv_direct_coop.slang, SDGEN_CONV_DIRECT_COOP): on a
// tensor-core device the real kernel (16 x 16 pixels, 8 subgroups), elsewhere the same code on software matrices
// (2 x 16 pixels, one subgroup); fp16 weights only (fp32 keeps the CUDA-core kernel). Every geometry the contract
// allows, partial blocks, Cin past a 16-channel slice, a computed input with a residual sink and the split over input
// channels, against float64 with the fp16-operand bar (its group norm table: DirectReadsGroupNormThroughItsTable).
TEST_P(ConvTest, DirectOnTensorCores) {
  const bool real = ops::gemmCoopSupported(ctx().info());
  test::ScopedEnv knob("SDGEN_CONV_DIRECT_COOP", real ? nullptr : "emulate");  // the default on tensor cores
  const std::string label = dt() == DType::F16 ? (real ? "direct coop 16x16" : "direct coop 2x16") : "direct 16x16";
  uint32_t seed = 1300;
  struct CoopCase { Case c; int parts; bool fused; };
  const CoopCase cases[] = {{{"3x3, Cout 3, partial blocks", 1, 19, 35, 8, 3, k3}, 1, false},
                            {{"3x3, Cout 4, batch 2, Cin 20", 2, 17, 16, 20, 4, k3}, 1, true},
                            {{"3x3 padding 0, Cout 1", 1, 18, 20, 4, 1, geometry(3, 3, 1, 1, 0, 0)}, 1, false},
                            {{"1x1, Cout 2", 1, 9, 21, 12, 2, Conv2dParams::square(1)}, 1, true},
                            {{"2x3 uneven padding", 1, 10, 12, 4, 3, geometry(2, 3, 1, 1, 1, 0)}, 1, false},
                            {{"3x3 Cin 40 in 3 parts", 2, 19, 17, 40, 4, k3}, 3, true}};
  for (const CoopCase& cc : cases) {
    const Case& c = cc.c;
    Expr x = input({c.n, c.h, c.w, c.cin}, seed++), shift = input({c.cin}, seed++);
    Expr in = cc.fused ? silu(x) + shift : x;
    Layer l = layer(c.cout, c.cin, c.p, seed++);
    const Shape os = ops::conv2dOutputShape(in.shape(), *l.gpu);
    Expr residual = input(os, seed++);
    std::vector<double> ref = referencePlusResidual(in, l, residual);
    TensorView out = output(os);
    CommandSequence seq(ctx());
    ops::Conv2dOptions o = options(ConvAlgo::Auto);
    o.candidate = ops::ConvCandidate{ConvAlgo::Direct, ops::ConvTile{}, cc.parts};
    auto info = ops::conv2d(ctx(), seq, in, *l.gpu, residualAdd(bufferSink(out), residual), o);
    seq.run();
    ASSERT_FALSE(info.kernels.empty());
    EXPECT_NE(info.kernels[0].find(label), std::string::npos) << info.kernels[0];
    compareRoundedInput(read(out), ref, std::string("direct on tensor cores, ") + c.name);
  }
}

// The real tensor-core form (8 subgroups, cooperative matrices) compiles to SPIR-V on any machine, unsplit and
// split, where CI runs only the emulation above.
TEST(ConvDirectCoop, RealKernelCompilesToSpirv) {
  const std::filesystem::path cache = std::filesystem::temp_directory_path() / "sdgen-direct-coop-compile-test";
  std::filesystem::remove_all(cache);
  SlangCompiler compiler(defaultSlangc(), defaultShaderDir(), cache.string());
  for (const char* split : {"0", "1"}) {
    KernelSource src;
    // Parameter words after the 29-word conv header: the input (an fp16 buffer) at 29, the sink at 36.
    src.generated = ops::convWrapper({"conv.conv_direct_coop"},
                                     "typealias E = Buf<29,F16Storage,1,0>;\ntypealias S = BufSink<36,F16Storage>;\n",
                                     std::string("convDirectCoopMain<E, S, F16Storage, ") + split + ", 8>(group, local);",
                                     256);
    src.label = std::string("conv direct coop split ") + split;
    test::expectCompiles(compiler, src);
  }
  std::filesystem::remove_all(cache);
}

}  // namespace
}  // namespace sdgen::conv_test
