// Winograd F(2,3) fused on tensor cores (coop-winograd's fused form, shaders/conv/conv_winograd_coop.slang;
// SDGEN_COOP_WINOGRAD_FUSED): on a tensor-core device the real kernels (4 or 8 subgroups), elsewhere the same code on
// software matrices (one subgroup taking every unit in turn), against float64 with the fp16-operand bar. Suite
// ConvTest (conv2d_test_fixture.h), instantiated in conv2d_test.cpp.
#include <filesystem>

#include "engine/slang_compiler.h"
#include "tests/ops/conv2d_test_fixture.h"
#include "tests/test_support.h"

namespace sdgen::conv_test {
namespace {

// Both blocks (32 tiles of 2x2 outputs per workgroup: 16 x 2; 64: 16 x 4), with fp32 and fp16 accumulators: partial
// 2x2 tiles (odd sizes) and partial tile blocks, two images, several 16-channel slices (a deep case of 32, where fp16
// accumulation shows) and 32-channel output blocks, a computed input (its expression read once per halo element)
// with a residual sink; one case per form runs as the autotune's candidate instead of the forced algorithm. What the
// fused form cannot take keeps the unfused form (refused by name where only the emulation could run it).
TEST_P(ConvTest, CoopWinogradFused) {
  const bool real = ops::gemmCoopSupported(ctx().info());
  const Case cases[] = {{"odd, two images", 2, 9, 11, 16, 32, k3},
                        {"wide, 2 slices, 2 channel blocks", 1, 6, 37, 32, 64, k3},
                        {"tall, 3 slices", 1, 19, 7, 48, 32, k3},
                        {"deep, 32 slices", 1, 6, 10, 512, 32, k3}};
  const bool halfShape = !real || ctx().info().hasCoopMatrix(16, 16, 16, "f16", "f16");
  uint32_t seed = 1400;
  for (int f = 0; f < 4; ++f) {
    const int tiles = f % 2 ? 64 : 32;
    const bool half = f >= 2;  // fp16 accumulators (where the device has the f16 -> f16 shape)
    if (half && !halfShape) continue;
    const char* form = real ? (tiles == 32 ? "1" : "64") : (tiles == 32 ? "emulate" : "emulate64");
    test::ScopedEnv knob("SDGEN_COOP_WINOGRAD_FUSED", form);
    test::ScopedEnv halfKnob("SDGEN_COOP_WINOGRAD_HALF_ACC", half ? "1" : nullptr);
    const std::string block = std::to_string(tiles) + "x32" + (half ? " f16acc" : "");
    const std::string label = "coop-winograd fused " + block + (real ? "" : " emulated");
    for (const Case& c : cases) {
      Expr x = input({c.n, c.h, c.w, c.cin}, seed++), shift = input({c.cin}, seed++);
      Expr in = c.cin > 16 ? silu(x) + shift : x;
      Layer l = layer(c.cout, c.cin, c.p, seed++);
      const Shape os = ops::conv2dOutputShape(in.shape(), *l.gpu);
      Expr residual = input(os, seed++);
      TensorView out = output(os);
      CommandSequence seq(ctx());
      if (dt() != DType::F16) {  // fp32 weights: the algorithm's contract refuses them by name
        expectError([&] { ops::conv2d(ctx(), seq, in, *l.gpu, bufferSink(out), options(ConvAlgo::CoopWinograd)); },
                    {"algorithm coop-winograd", "fp16"});
        continue;
      }
      auto ref = reference(in, l);
      auto res = test::evalReference(residual, mem_);
      for (size_t i = 0; i < ref.size(); ++i) ref[i] += res[i];
      ops::Conv2dOptions o = options(ConvAlgo::CoopWinograd);
      if (&c == &cases[2]) {
        o = options(ConvAlgo::Auto);
        o.candidate = ops::ConvCandidate{ConvAlgo::CoopWinograd, ops::ConvTile{tiles, 32, 0, 0}, 1, true, half};
      }
      auto info = ops::conv2d(ctx(), seq, in, *l.gpu, residualAdd(bufferSink(out), residual), o);
      seq.run();
      ASSERT_FALSE(info.kernels.empty());
      EXPECT_NE(info.kernels[0].find("coop-winograd filter"), std::string::npos) << info.kernels[0];
      EXPECT_NE(info.kernels.back().find(label), std::string::npos) << info.kernels.back();
      EXPECT_EQ(info.tile, "fused " + block);
      compareRoundedInput(read(out), ref, "fused coop-winograd " + block + ", " + c.name);
    }
  }
  if (dt() != DType::F16 || real) return;
  // Emulated, Cout 24 is outside the fused form and the unfused one needs tensor cores.
  test::ScopedEnv knob("SDGEN_COOP_WINOGRAD_FUSED", "emulate");
  Layer narrow = layer(24, 16, k3, seed++);
  expectError([&] { check(input({1, 8, 8, 16}, seed), narrow, ConvAlgo::CoopWinograd); },
              {"algorithm coop-winograd", "Cout % 32"});
}

// The real fused kernels (4 and 8 subgroups, fp32 and fp16 accumulators, cooperative matrices) compile to SPIR-V on
// any machine, where CI runs only the emulation above.
TEST(ConvWinogradFused, RealKernelCompilesToSpirv) {
  const std::filesystem::path cache = std::filesystem::temp_directory_path() / "sdgen-winograd-fused-compile-test";
  std::filesystem::remove_all(cache);
  SlangCompiler compiler(defaultSlangc(), defaultShaderDir(), cache.string());
  KernelSource src;
  // Parameter words after the 29-word conv header: the input (an fp16 buffer) at 29, the sink at 36.
  src.generated = ops::convWrapper({"conv.conv_winograd_coop"},
                                   "typealias E = Buf<29,F16Storage,1,0>;\ntypealias S = BufSink<36,F16Storage>;\n",
                                   "convWinogradCoopMain<E, S, 2, 4, 1432>(group, local);", 128);
  src.label = "conv winograd fused 32";
  test::expectCompiles(compiler, src);
  src.generated = ops::convWrapper({"conv.conv_winograd_coop"},
                                   "typealias E = Buf<29,F16Storage,1,0>;\ntypealias S = BufSink<36,F16Storage>;\n",
                                   "convWinogradCoopMain<E, S, 4, 8, 2728>(group, local);", 256);
  src.label = "conv winograd fused 64";
  test::expectCompiles(compiler, src);
  src.defines = {{"SDGEN_WINOGRAD_HALF_ACC", "1"}};
  src.label = "conv winograd fused 64 f16acc";
  test::expectCompiles(compiler, src);
  std::filesystem::remove_all(cache);
}

}  // namespace
}  // namespace sdgen::conv_test
