// The tensor-core GEMM's contract and kernels on any device (split from linear_test.cpp): which devices can run
// it and that fp16 weights choose it there, its tile problems, and its generated kernels (the flushed, im2col,
// MMA-peak and workgroup-scope ones) compiled to SPIR-V.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "engine/error.h"
#include "engine/slang_compiler.h"
#include "ops/conv2d_candidates.h"
#include "ops/conv2d_plan.h"
#include "ops/linear.h"
#include "ops/linear_gemm.h"
#include "tests/ops/gemm_coop_test_support.h"

namespace sdgen {
namespace {

using test::doubleBuffered;
using test::flushed;

// Tensor cores (gemm_coop.slang): which devices can run the kernel, and that fp16 weights choose it there.
TEST(GemmCoopRule, CapableDevicesOnly) {
  DeviceInfo d;
  d.type = "discrete";
  d.coopMatrixKHR = true;
  d.subgroupSize = 32;
  d.sharedMemoryPerWorkgroup = 49152;
  d.maxWorkgroupInvocations = 1024;
  d.coopMatrixShapes = {{16, 16, 16, "f16", "f16", "f32", "f32", "subgroup"}};
  EXPECT_TRUE(ops::gemmCoopSupported(d));
  EXPECT_TRUE(ops::chooseGemmTile(8192, 320, 320, d, true).isCoop());
  EXPECT_FALSE(ops::chooseGemmTile(8192, 320, 320, d, false).isCoop());  // fp32 weights: fp32 arithmetic
  // 4 subgroups of 2 x 2 accumulators; shared = max(A + B slices, epilogue rows) in 16-byte words.
  EXPECT_EQ(ops::GemmTile::coopTile(64, 64, 32, 2, 2).threads(), 128);
  EXPECT_EQ(ops::GemmTile::coopTile(64, 64, 32, 2, 2).sharedBytes(), 16u * (64 * 40 / 8 + 32 * 72 / 8));
  EXPECT_EQ(ops::GemmTile::coopTile(128, 128, 32, 2, 4).threads(), 256);
  EXPECT_EQ(ops::GemmTile::coopTile(128, 128, 32, 2, 4).sharedBytes(), 16u * 8 * 16 * 17);
  EXPECT_NE(ops::coopTileProblem(ops::GemmTile::coopTile(64, 64, 32, 2, 2, true), d).find("f16 -> f16"),
            std::string::npos);
  EXPECT_NE(ops::coopTileProblem(ops::GemmTile::coopTile(48, 64, 32, 2, 2), d).find("multiple"), std::string::npos);
  DeviceInfo f16acc = d;
  f16acc.coopMatrixShapes.push_back({16, 16, 16, "f16", "f16", "f16", "f16", "subgroup"});
  // Large whole-tile GEMMs: the 256 x 256 chunked fp16 tile, only with the optimizer and the f16 shape.
  std::optional<ops::GemmTile> large = ops::chooseLargeCoopTile(4096, 4096, 4096, f16acc, true);
  ASSERT_TRUE(large.has_value());
  EXPECT_EQ(large->describe(), "coop 256x256x32 warp 128x64 f16acc flush 2048 opt");
  EXPECT_FALSE(ops::chooseLargeCoopTile(4096, 4096, 4096, f16acc, false));  // no spirv-opt: 5x slower
  EXPECT_FALSE(ops::chooseLargeCoopTile(4096, 4096, 4096, d, true));        // no f16 accumulator shape
  EXPECT_FALSE(ops::chooseLargeCoopTile(4096, 4096, 1024, f16acc, true));   // K below the measured bucket
  EXPECT_FALSE(ops::chooseLargeCoopTile(4096, 4000, 4096, f16acc, true));   // partial tiles
  EXPECT_FALSE(ops::chooseLargeCoopTile(2048, 4096, 4096, f16acc, true));   // 128 tiles: under two waves
  EXPECT_FALSE(ops::chooseLargeCoopTile(8192, 10240, 1280, f16acc, true));  // SD 1.5's largest (GEGLU) shape
  EXPECT_EQ(ops::coopTileProblem(flushed(ops::GemmTile::coopTile(64, 64, 32, 2, 2), 64), f16acc), "");
  EXPECT_NE(ops::coopTileProblem(flushed(ops::GemmTile::coopTile(64, 64, 32, 2, 2), 48), f16acc).find("flush"),
            std::string::npos);
  EXPECT_NE(ops::coopTileProblem(flushed(ops::GemmTile::coopTile(64, 64, 32, 2, 2, false, 2), 64), f16acc).find("flush"),
            std::string::npos);
  EXPECT_NE(ops::coopTileProblem(ops::GemmTile::coopTile(256, 256, 64, 4, 4), d).find("shared memory"),
            std::string::npos);
  // Convolutions: coop whenever the channels allow it, so the Winograd filters are not packed then.
  EXPECT_TRUE(ops::coopConvChosen(d, DType::F16, 320, 640));
  EXPECT_FALSE(ops::coopConvChosen(d, DType::F32, 320, 640));
  EXPECT_FALSE(ops::coopConvChosen(d, DType::F16, 4, 320));
  EXPECT_FALSE(ops::coopConvChosen(d, DType::F16, 320, 4));
  DeviceInfo wide = d;
  wide.subgroupSize = 64;
  EXPECT_FALSE(ops::gemmCoopSupported(wide));
  EXPECT_FALSE(ops::coopConvChosen(wide, DType::F16, 320, 640));
  EXPECT_FALSE(ops::chooseGemmTile(8192, 320, 320, wide, true).isCoop());
  DeviceInfo f16Accumulator = d;
  f16Accumulator.coopMatrixShapes = {{16, 16, 16, "f16", "f16", "f16", "f16", "subgroup"}};
  EXPECT_FALSE(ops::gemmCoopSupported(f16Accumulator));
  DeviceInfo none = d;
  none.coopMatrixKHR = false;
  EXPECT_FALSE(ops::gemmCoopSupported(none));
  DeviceInfo small = d;
  small.sharedMemoryPerWorkgroup = 8192;
  EXPECT_FALSE(ops::gemmCoopSupported(small));
}

// Host-only: the chunked fp16 accumulation (ACC 3) compiles to SPIR-V at -O0 and, where the optimizer is
// installed, through spirv-opt (the H100 runs both in CoopMatrixKernelWhereSupported).
TEST(GemmCoopRule, FlushedKernelCompilesToSpirv) {
  const std::filesystem::path cache = std::filesystem::temp_directory_path() / "sdgen-gemm-flush-compile-test";
  std::filesystem::remove_all(cache);
  SlangCompiler compiler(defaultSlangc(), defaultShaderDir(), cache.string());
  for (const ops::GemmTile& tile : {flushed(ops::GemmTile::coopTile(64, 64, 32, 2, 2), 64),
                                    flushed(ops::GemmTile::coopTile(256, 256, 32, 8, 4), 1024, true)}) {
    KernelSource src;
    src.generated = ops::gemmWrapperSource(test::coopGemmInfo(1), tile, true);
    src.label = "gemm coop flushed " + tile.describe();
    src.optimize = tile.spirvOpt;
    test::expectCompiles(compiler, src);
  }
  std::filesystem::remove_all(cache);
}

// Host-only: the im2col mode (A_MODE 2, the conv algorithm coop: its tap walk) and the upsampling phases (A_MODE
// 5) compile to SPIR-V for the conv tiles, plain and split-K (the H100/H200 run them in ConvTest.Coop*WhereSupported
// against float64).
TEST(GemmCoopRule, Im2colKernelCompilesToSpirv) {
  const std::filesystem::path cache = std::filesystem::temp_directory_path() / "sdgen-gemm-im2col-compile-test";
  std::filesystem::remove_all(cache);
  SlangCompiler compiler(defaultSlangc(), defaultShaderDir(), cache.string());
  // Session 40's fp16-accumulator conv candidates too: 256x128 (64x64 warp tiles) and 256x160 (64x80), spirv-opt.
  for (const ops::GemmTile& tile : {ops::GemmTile::coopTile(64, 64, 32, 2, 2), ops::GemmTile::coopTile(128, 128, 32, 4, 4),
                                    ops::GemmTile::coopTile(128, 128, 32, 4, 4, false, 2),
                                    ops::convCoopGemmTile({ops::ConvAlgo::Coop, ops::ConvTile{256, 128, 0, 0}, 1}),
                                    ops::convCoopGemmTile({ops::ConvAlgo::Coop, ops::ConvTile{256, 160, 0, 0}, 2})}) {
    ASSERT_GT(tile.bm, 0);
    KernelSource src;
    src.generated = ops::gemmWrapperSource(test::coopGemmInfo(2), tile, true);
    src.label = "gemm coop im2col " + tile.describe();
    src.optimize = tile.spirvOpt;
    test::expectCompiles(compiler, src);
    // A_MODE 5: the four phases of an upsampled convolution into their pixels (graph::subPixel).
    ops::GemmInfo phases = test::coopGemmInfo(5);
    phases.sinkType = "SubPixelSink<35,BufSink<36,F16Storage>>";
    src.generated = ops::gemmWrapperSource(phases, tile, true);
    src.label = "gemm coop upsampling phases " + tile.describe();
    test::expectCompiles(compiler, src);
  }
  std::filesystem::remove_all(cache);
}

// Host-only: the shape words compiled in (GemmTile::fixedShape) for the plain, im2col and Winograd A modes, at -O0
// and through spirv-opt (the 256 x 256 tile's compilation); the emulated tests check the sums on lavapipe.
TEST(GemmCoopRule, FixedShapeKernelCompilesToSpirv) {
  const std::filesystem::path cache = std::filesystem::temp_directory_path() / "sdgen-gemm-fixed-compile-test";
  std::filesystem::remove_all(cache);
  SlangCompiler compiler(defaultSlangc(), defaultShaderDir(), cache.string());
  // SDXL's 32^2 GEGLU-sized plain GEMM, a 3x3 convolution of 512 channels at 64^2 (stride 1, padding 1) and a
  // Winograd band: the header words recordGemm writes (addresses zero).
  std::vector<uint32_t> plain(32, 0), conv(32, 0), winograd(32, 0);
  for (auto [w, v] : {std::pair{0, 2048u}, {1, 10240u}, {2, 1280u}, {8, 10240u}, {11, 2048u}, {14, 1280u}, {15, 2048u}})
    plain[size_t(w)] = v;
  for (auto [w, v] : {std::pair{0, 4096u}, {1, 512u}, {2, 4608u}, {5, 2u}, {8, 512u}, {11, 2304u}, {15, 4096u},
                      {16, 64u}, {17, 64u}, {18, 512u}, {19, 64u}, {20, 64u}, {21, 3u}, {22, 1u | 1u << 8 | 1u << 16 | 1u << 24},
                      {23, 1u | 1u << 8}})
    conv[size_t(w)] = v;
  for (auto [w, v] : {std::pair{0, 1024u}, {1, 512u}, {2, 512u}, {8, 512u}, {15, 16384u}, {16, 64u}, {17, 64u},
                      {18, 512u}, {19, 32u}, {20, 32u}, {22, 262144u}})
    winograd[size_t(w)] = v;
  struct Kernel { int aMode; const std::vector<uint32_t>* words; ops::GemmTile tile; };
  ops::GemmTile split = ops::GemmTile::coopTile(128, 128, 32, 4, 4, false, 2);
  for (const Kernel& k : {Kernel{1, &plain, flushed(ops::GemmTile::coopTile(256, 256, 32, 8, 4), 2048, true)},
                          Kernel{2, &conv, split}, Kernel{4, &winograd, ops::GemmTile::coopTile(128, 128, 32, 4, 4)}}) {
    ops::GemmInfo info = test::coopGemmInfo(k.aMode);
    ops::GemmTile tile = k.tile;
    tile.fixedShape = true;
    ops::fixHeaderWords(info, *k.words);
    EXPECT_EQ(info.headerType, "FixedHeader");
    EXPECT_NE(info.headerSource.find("case 2: return int(" + std::to_string((*k.words)[2]) + "u);"), std::string::npos)
        << info.headerSource;
    EXPECT_EQ(info.headerSource.find("case 16:") != std::string::npos, k.aMode != 3);
    KernelSource src;
    src.generated = ops::gemmWrapperSource(info, tile, true);
    src.label = "gemm coop fixed shape A mode " + std::to_string(k.aMode) + " " + tile.describe();
    src.optimize = tile.spirvOpt;
    EXPECT_NE(src.generated.find("gemmCoopMain<A, S, H, "), std::string::npos);
    test::expectCompiles(compiler, src);
  }
  // A_MODE 3 (the fused layer norm) keeps words 16-23 at run time: its addresses and scalars live there.
  ops::GemmInfo norm = test::coopGemmInfo(3);
  ops::fixHeaderWords(norm, plain);
  EXPECT_EQ(norm.headerSource.find("case 16:"), std::string::npos);
  EXPECT_THROW(ops::fixHeaderWords(norm, std::vector<uint32_t>(8, 0)), Error);
  std::filesystem::remove_all(cache);
}

// The tensor-core rate kernel of bench/mma_peak_bench (shaders/linear/mma_peak.slang) compiles in its forms (fp32 /
// fp16 accumulators, fragments from shared memory / registers / global memory, the slice round trip from L1 / a
// streamed region), where CI has no tensor cores.
TEST(GemmCoopRule, MmaPeakKernelCompilesToSpirv) {
  const std::filesystem::path cache = std::filesystem::temp_directory_path() / "sdgen-mma-peak-compile-test";
  std::filesystem::remove_all(cache);
  SlangCompiler compiler(defaultSlangc(), defaultShaderDir(), cache.string());
  for (const char* flags : {"0, 0, 8, 0, 2, 4, 2", "0, 1, 8, 0, 2, 4, 2", "1, 0, 8, 0, 2, 4, 2", "1, 1, 8, 0, 2, 4, 2",
                            "0, 1, 8, 1, 2, 4, 2", "0, 1, 8, 2, 4, 8, 1", "0, 2, 8, 0, 2, 4, 2",
                            "0, 3, 8, 0, 2, 4, 2"}) {
    KernelSource src;
    src.generated = std::string("import sdgen;\nimport linear.mma_peak;\n[shader(\"compute\")]\n"
                                "[numthreads(256, 1, 1)]\n"
                                "void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n"
                                "  mmaPeakMain<4, 2, ") + flags + ">(group, local);\n}\n";
    src.label = std::string("mma peak ") + flags;
    test::expectCompiles(compiler, src);
  }
  std::filesystem::remove_all(cache);
}

// The workgroup-scope GEMM of bench/wg_gemm_bench (shaders/linear/gemm_wg.slang) compiles, in both output types,
// and declares SPV_NV_cooperative_matrix2 itself (Slang leaves it out for workgroup-scope matrices, and without it
// the module is invalid).
TEST(GemmWorkgroupScope, KernelCompilesAndDeclaresItsExtension) {
  const std::filesystem::path cache = std::filesystem::temp_directory_path() / "sdgen-gemm-wg-compile-test";
  std::filesystem::remove_all(cache);
  SlangCompiler compiler(defaultSlangc(), defaultShaderDir(), cache.string());
  for (int f16 : {0, 1}) {
    KernelSource src;
    src.generated = "import sdgen;\nimport linear.gemm_wg;\n[shader(\"compute\")]\n[numthreads(256, 1, 1)]\n"
                    "void main(uint3 group : SV_GroupID) {\n  gemmWgMain<128, 128, 32, 4, " + std::to_string(f16) +
                    ">(group);\n}\n";
    src.capabilities = {"spvCooperativeMatrixKHR", "spvTensorAddressingNV", "spvCooperativeMatrixTensorAddressingNV"};
    if (f16) src.capabilities.push_back("spvCooperativeMatrixConversionsNV");
    src.label = std::string("gemm wg ") + (f16 ? "f16" : "f32");
    std::vector<uint32_t> spirv;
    ASSERT_NO_THROW(spirv = compiler.compile(src)) << src.label;
    const std::string bytes(reinterpret_cast<const char*>(spirv.data()), spirv.size() * 4);
    EXPECT_NE(bytes.find("SPV_NV_cooperative_matrix2"), std::string::npos) << src.label;
  }
  std::filesystem::remove_all(cache);
}

// The tensor-core kernel, every tile the selection or the benchmarks use, on devices that have it (the H100:
// scripts/device/run-tests.sh): odd M, N, K (partial tiles, scalar paths), bias, a computed prologue and a
// residual epilogue, against float64; relative error (max |diff| / max |ref|) <= 5e-3. It needs fp16 weights;
// where the device lacks tensor cores (lavapipe) or the weights are fp32, forcing it is a clear error.

}  // namespace
}  // namespace sdgen
