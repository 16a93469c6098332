// --bench-conv2d: the settings the command line gives, the statistics, and a quick run of one requested shape on
// lavapipe whose rows match the shape and whose outputs agree with the general kernel and a float64 CPU
// convolution. Timings are never compared with anything.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/bench_conv2d.h"
#include "ops/conv2d_tune.h"
#include "app/bench_conv2d_reference.h"
#include "ops/linear_gemm.h"
#include "tests/test_support.h"

namespace sdgen::app {
namespace {

TEST(BenchConv2dSettings, FromTheCommandLine) {
  ConvBenchSettings table = benchSettings(parseCommandLine({"--bench-conv2d"}));
  EXPECT_EQ(table.shapes.size(), sdConvShapes().size());
  EXPECT_EQ(table.precisions.size(), 2u);  // auto: both
  EXPECT_EQ(table.algos.size(), 6u);  // general, gemm-v2, winograd, coop, direct, coop-winograd
  EXPECT_TRUE(table.tuned);           // ... and the autotune's pick
  ConvBenchSettings tuned = benchSettings(parseCommandLine({"--bench-conv2d", "--algo", "tuned"}));
  EXPECT_TRUE(tuned.algos.empty());
  EXPECT_TRUE(tuned.tuned);
  EXPECT_TRUE(tuned.autotune.retune);  // measured afresh
  ConvBenchSettings rule = benchSettings(parseCommandLine({"--bench-conv2d", "--no-autotune"}));
  EXPECT_EQ(rule.autotune.mode, ops::ConvTuneSettings::Mode::Off);
  EXPECT_FALSE(rule.autotune.retune);
  EXPECT_EQ(table.reps, 20);
  EXPECT_EQ(table.warmup, 3);
  EXPECT_EQ(table.warmupMs, 300);  // and at least 300 ms of warm-up replays per row (cold clocks)
  EXPECT_FALSE(table.cudnn);
  ConvBenchSettings quick =
      benchSettings(parseCommandLine({"--bench-conv2d", "--quick", "--precision", "fp16", "--algo", "gemm_v2"}));
  ASSERT_EQ(quick.shapes.size(), 3u);
  EXPECT_EQ(quick.shapes[0].layer, "unet.conv_in");
  ASSERT_EQ(quick.precisions.size(), 1u);
  EXPECT_EQ(quick.precisions[0], DType::F16);
  ASSERT_EQ(quick.algos.size(), 1u);
  EXPECT_EQ(quick.algos[0], ops::ConvAlgo::GemmV2);
  EXPECT_FALSE(quick.tuned);
  EXPECT_LT(quick.reps, 20);
  EXPECT_EQ(quick.warmupMs, 0);
  ConvBenchSettings one = benchSettings(parseCommandLine(
      {"--bench-conv2d", "--shape", "2,320,640,32,32,1,1", "--reps", "25", "--warmup", "0", "--reference", "cudnn"}));
  ASSERT_EQ(one.shapes.size(), 1u);
  EXPECT_EQ(one.shapes[0].str(), "[2,320,640,32,32,1,1]");
  EXPECT_EQ(one.reps, 25);
  EXPECT_EQ(one.warmup, 0);
  EXPECT_EQ(one.warmupMs, 0);  // --warmup 0: none at all
  EXPECT_TRUE(one.cudnn);
  // The table is the anchors' (shared/anchors/h100-pytorch.json): 17 UNet and 9 VAE rows.
  EXPECT_EQ(sdConvShapes().size(), 26u);
  EXPECT_EQ(sdConvShapes()[2].stride, 2);
}

TEST(BenchConv2dStats, MedianMeanStdPercentiles) {
  TimingStats t = timingStats({4, 1, 3, 2, 5});
  EXPECT_DOUBLE_EQ(t.medianMs, 3);
  EXPECT_DOUBLE_EQ(t.meanMs, 3);
  EXPECT_DOUBLE_EQ(t.stdMs, std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(t.minMs, 1);
  EXPECT_DOUBLE_EQ(t.p10Ms, 1.4);
  EXPECT_DOUBLE_EQ(t.p90Ms, 4.6);
  EXPECT_THROW(timingStats({}), Error);
}

class BenchConv2d : public test::VulkanTest {};

TEST_F(BenchConv2d, QuickRunOfOneShapeIsCorrectAndComplete) {
  // 8 -> 16 channels, 3x3 stride 1: every algorithm is eligible; then a strided 3x3, which Winograd skips.
  ConvBenchSettings st = benchSettings(parseCommandLine(
      {"--bench-conv2d", "--quick", "--shape", "1,8,16,12,12,3,1", "--precision", "auto"}));
  st.shapes.push_back({"strided", 2, 12, 8, 9, 9, 3, 2});
  std::FILE* sink = std::tmpfile();
  ConvBenchReport r = runConvBench(ctx(), st, sink);
  std::fclose(sink);
  ASSERT_EQ(r.rows.size(), 2u * 2u * 7u);  // shapes x precisions x (algorithms + the tuned row)
  size_t i = 0;
  for (const auto& shape : st.shapes)
    for (DType dt : st.precisions) {
      for (ops::ConvAlgo algo : st.algos) {
        const ConvBenchRow& row = r.rows[i++];
        SCOPED_TRACE(shape.str() + " " + dtypeName(dt) + " " + ops::convAlgoName(algo));
        EXPECT_EQ(row.shape.str(), shape.str());
        EXPECT_EQ(row.precision, dt);
        EXPECT_EQ(row.algo, ops::convAlgoName(algo));
        if (algo == ops::ConvAlgo::Winograd && shape.stride == 2) {
          EXPECT_NE(row.error.find("not 3x3 s1 p1 d1"), std::string::npos) << row.error;
          continue;
        }
        if (algo == ops::ConvAlgo::Direct) {  // both shapes have more than 4 output channels
          EXPECT_NE(row.error.find("is more than 4"), std::string::npos) << row.error;
          continue;
        }
        // Coop needs tensor cores, fp16 and channel counts that are multiples of 8 (the strided row has Cin 12).
        const bool coopContract = ops::gemmCoopSupported(ctx().info()) && dt == DType::F16 &&
                                  shape.cin % 8 == 0 && shape.cout % 8 == 0;
        if (algo == ops::ConvAlgo::Coop && !coopContract) {
          EXPECT_NE(row.error.find("algorithm coop was forced but its contract does not hold"), std::string::npos)
              << row.error;
          continue;
        }
        if (algo == ops::ConvAlgo::CoopWinograd && (!coopContract || shape.stride == 2)) {
          EXPECT_NE(row.error.find("algorithm coop-winograd was forced but its contract does not hold"),
                    std::string::npos)
              << row.error;
          continue;
        }
        ASSERT_EQ(row.error, "");
        EXPECT_EQ(row.reps, st.reps);
        EXPECT_GT(row.time.medianMs, 0);
        EXPECT_LE(row.time.minMs, row.time.p10Ms);
        EXPECT_LE(row.time.p10Ms, row.time.medianMs);
        EXPECT_LE(row.time.medianMs, row.time.p90Ms);
        EXPECT_GT(row.tflops, 0);
        EXPECT_FALSE(row.tile.empty());
        // Correctness: fp32 agrees closely; fp16 within a few half-precision ulps of O(1) outputs.
        const double tol = dt == DType::F32 ? 1e-4 : 4e-3;
        EXPECT_LE(row.maxAbs, tol);
        EXPECT_LE(row.maxRel, tol);
        EXPECT_GE(row.cpuRel, 0);
        EXPECT_LE(row.cpuRel, dt == DType::F32 ? 1e-5 : 4e-3);
        if (algo == ops::ConvAlgo::General) {
          EXPECT_EQ(row.maxAbs, 0);  // the baseline itself
        }
      }
      // The tuned row: the autotune's plan, its candidate and where it came from as the tile; on a CPU device
      // (tuning off) the rule's; on tensor cores with fp16 a coop candidate (both shapes: Cout > 4, no direct).
      const ConvBenchRow& tunedRow = r.rows[i++];
      EXPECT_EQ(tunedRow.algo, "tuned");
      ASSERT_EQ(tunedRow.error, "");
      // (A problem with a single candidate runs the rule even where tuning is on.)
      const bool tuning = ops::convTuneEnabled(st.autotune, ctx().info());
      const bool tuned = tunedRow.tile.find(" [tuner]") != std::string::npos;
      EXPECT_TRUE(tuned || tunedRow.tile.find(" [rule]") != std::string::npos) << tunedRow.tile;
      if (!tuning) {
        EXPECT_FALSE(tuned) << tunedRow.tile;
      }
      if (tuning && ops::gemmCoopSupported(ctx().info()) && dt == DType::F16 && shape.cin % 8 == 0) {
        EXPECT_TRUE(tuned) << tunedRow.tile;
        EXPECT_EQ(tunedRow.tile.rfind("coop ", 0), 0u) << tunedRow.tile;
      }
      EXPECT_LE(tunedRow.maxAbs, dt == DType::F32 ? 1e-4 : 4e-3);
      EXPECT_LE(tunedRow.maxRel, dt == DType::F32 ? 1e-4 : 4e-3);
    }

  nlohmann::json j = nlohmann::json::parse(convBenchJson(r));
  ASSERT_EQ(j["rows"].size(), r.rows.size());
  EXPECT_EQ(j["rows"][0]["shape"], "[1,8,16,12,12,3,1]");
  EXPECT_EQ(j["rows"][0]["cin"], 8);
  EXPECT_EQ(j["rows"][0]["reps"], st.reps);
  EXPECT_TRUE(j["rows"][0].contains("p90_ms"));
  EXPECT_TRUE(j["rows"][0].contains("max_rel_vs_general"));
}

// Without a CUDA device (this machine, CI) the reference cannot open and says why; with one (the H100 machine)
// it must compute the convolution: checked against a float64 CPU convolution.
TEST(CudnnReference, UnavailableSaysWhyOrComputesTheConvolution) {
  std::unique_ptr<CudnnReference> ref;
  try {
    ref = CudnnReference::open();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cuDNN reference unavailable: ", 0), 0u) << e.what();
    return;
  }
  const int n = 2, cin = 8, cout = 16, h = 9, w = 7, k = 3, stride = 2, pad = 1;
  const int ho = (h + 2 * pad - k) / stride + 1, wo = (w + 2 * pad - k) / stride + 1;
  std::vector<float> x = test::randomFloats(size_t(n) * h * w * cin, 1), wt = test::randomFloats(size_t(cout) * cin * k * k, 2),
                     b = test::randomFloats(cout, 3);
  ReferenceTiming t = ref->run({n, cin, cout, h, w, k, stride, pad, false, 1, 3}, x, wt, b);
  ASSERT_EQ(t.output.size(), size_t(n) * ho * wo * cout);
  EXPECT_GT(t.medianMs, 0);
  EXPECT_FALSE(t.algorithm.empty());
  double worst = 0;
  for (int in = 0; in < n; ++in)
    for (int oy = 0; oy < ho; ++oy)
      for (int ox = 0; ox < wo; ++ox)
        for (int co = 0; co < cout; ++co) {
          double acc = b[co];
          for (int ky = 0; ky < k; ++ky)
            for (int kx = 0; kx < k; ++kx) {
              int iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              for (int ci = 0; ci < cin; ++ci)
                acc += double(x[((size_t(in) * h + iy) * w + ix) * cin + ci]) * wt[((size_t(co) * cin + ci) * k + ky) * k + kx];
            }
          worst = std::max(worst, std::abs(acc - t.output[((size_t(in) * ho + oy) * wo + ox) * cout + co]));
        }
  EXPECT_LT(worst, 1e-4);
}

TEST(CudnnReference, PluginPathFromTheEnvironment) {
  setenv("SDGEN_CUDNN_PLUGIN", "/nonexistent/libplugin.so", 1);
  EXPECT_EQ(CudnnReference::pluginLocation(), "/nonexistent/libplugin.so");
  test::expectErrorContaining([] { CudnnReference::open(); }, "no plugin at '/nonexistent/libplugin.so'");
  unsetenv("SDGEN_CUDNN_PLUGIN");
}

}  // namespace
}  // namespace sdgen::app
