// Winograd F(2,3) fused on tensor cores (coop-winograd's fused form, shaders/conv/conv_winograd_coop.slang;
// SDGEN_COOP_WINOGRAD_FUSED): on a tensor-core device the real kernel (4 subgroups), elsewhere the same code on
// software matrices (one subgroup doing the four rows of B^T), against float64 with the fp16-operand bar. Suite
// ConvTest (conv2d_test_fixture.h), instantiated in conv2d_test.cpp.
#include <filesystem>

#include "engine/slang_compiler.h"
#include "tests/ops/conv2d_test_fixture.h"
#include "tests/test_support.h"

namespace sdgen::conv_test {
namespace {

// Partial 2x2 tiles (odd sizes) and partial 16 x 2 tile blocks, two images, several 16-channel slices and 32-channel
// output blocks, a computed input (its expression read once per halo element) with a residual sink; what the fused
// form cannot take keeps the unfused form (refused by name where only the emulation could run it); one case runs
// as the autotune's candidate "coop-winograd fused".
TEST_P(ConvTest, CoopWinogradFused) {
  const bool real = ops::gemmCoopSupported(ctx().info());
  test::ScopedEnv knob("SDGEN_COOP_WINOGRAD_FUSED", real ? "1" : "emulate");
  const Case cases[] = {{"odd, two images", 2, 9, 11, 16, 32, k3},
                        {"wide, 2 slices, 2 channel blocks", 1, 6, 37, 32, 64, k3},
                        {"tall, 3 slices", 1, 13, 7, 48, 32, k3}};
  uint32_t seed = 1400;
  for (const Case& c : cases) {
    Expr x = input({c.n, c.h, c.w, c.cin}, seed++), shift = input({c.cin}, seed++);
    const bool fused = c.cin > 16;
    Expr in = fused ? silu(x) + shift : x;
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
    // The last case through the autotune's candidate "coop-winograd fused" instead of the forced algorithm.
    ops::Conv2dOptions o = options(ConvAlgo::CoopWinograd);
    if (&c == &cases[2]) {
      o = options(ConvAlgo::Auto);
      o.candidate = ops::ConvCandidate{ConvAlgo::CoopWinograd, ops::ConvTile{}, 1, true};
    }
    auto info = ops::conv2d(ctx(), seq, in, *l.gpu, residualAdd(bufferSink(out), residual), o);
    seq.run();
    ASSERT_FALSE(info.kernels.empty());
    EXPECT_NE(info.kernels[0].find("coop-winograd filter"), std::string::npos) << info.kernels[0];
    EXPECT_NE(info.kernels.back().find(real ? "coop-winograd fused" : "coop-winograd fused (emulated)"),
              std::string::npos) << info.kernels.back();
    compareRoundedInput(read(out), ref, std::string("fused coop-winograd, ") + c.name);
  }
  if (dt() != DType::F16 || real) return;
  // Emulated, Cout 24 is outside the fused form and the unfused one needs tensor cores.
  Layer narrow = layer(24, 16, k3, seed++);
  expectError([&] { check(input({1, 8, 8, 16}, seed), narrow, ConvAlgo::CoopWinograd); },
              {"algorithm coop-winograd", "Cout % 32"});
}

// The real fused kernel (4 subgroups, cooperative matrices) compiles to SPIR-V on any machine, where CI runs only
// the emulation above.
TEST(ConvWinogradFused, RealKernelCompilesToSpirv) {
  const std::filesystem::path cache = std::filesystem::temp_directory_path() / "sdgen-winograd-fused-compile-test";
  std::filesystem::remove_all(cache);
  SlangCompiler compiler(defaultSlangc(), defaultShaderDir(), cache.string());
  KernelSource src;
  // Parameter words after the 29-word conv header: the input (an fp16 buffer) at 29, the sink at 36.
  src.generated = ops::convWrapper({"conv.conv_winograd_coop"},
                                   "typealias E = Buf<29,F16Storage,1,0>;\ntypealias S = BufSink<36,F16Storage>;\n",
                                   "convWinogradCoopMain<E, S, 4>(group, local);", 128);
  src.label = "conv winograd fused";
  test::expectCompiles(compiler, src);
  std::filesystem::remove_all(cache);
}

}  // namespace
}  // namespace sdgen::conv_test
