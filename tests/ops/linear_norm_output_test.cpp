// A linear layer's output and the layer norm of it (ops::LinearOptions::normOutput): a transformer block's residual
// stream and its next norm's input. Where the product ends in a split-K sum (unless SDGEN_SPLIT_SUM_NORM=0), the
// sum launch writes both (gemm_split.slang gemmSplitNormRowMain by default, gemmSplitNormMain with =1); else
// ops::layerNormRows runs after the product. On software matrices (GemmTile::coopEmulation) so that every machine
// runs the split-K sum: form 1 and the separate launch give the same bits, form 2 is within an fp16 rounding of
// them and the default, and each matches float64; a product without a split, and the refusals (a sink that does not write the
// source whole, an output of another shape).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/command_sequence.h"
#include "graph/expr.h"
#include "ops/conv2d_scratch.h"
#include "ops/layer_norm_rows.h"
#include "ops/linear.h"
#include "ops/linear_gemm.h"
#include "tests/graph/tensor_fixture.h"
#include "tests/ops/gemm_coop_test_support.h"

namespace sdgen {
namespace {

using namespace graph;

ops::GemmTile emulatedSplit(int parts) {
  ops::GemmTile t = ops::GemmTile::coopTile(32, 32, 32, 2, 2, false, parts);
  t.coopEmulation = true;
  return t;
}

class LinearNormOutputTest : public test::TensorTest {
 protected:
  struct Result {
    std::vector<float> x, normed;
    bool normInSum = false;
    size_t launches = 0;
  };
  // x W^T + b + r into `x`, and its layer norm (gamma, beta: fp32) into `normed`.
  // form: SDGEN_SPLIT_SUM_NORM's value ("0": off; nullptr: the default, form 2).
  Result run(int64_t m, int64_t n, int64_t k, const ops::GemmTile& tile, const char* form, uint32_t seed) {
    test::ScopedEnv knob("SDGEN_SPLIT_SUM_NORM", form);
    std::vector<float> w = test::randomFloats(n * k, seed), b = test::randomFloats(n, seed + 1);
    weights_.push_back(std::make_unique<ops::LinearWeights>(ctx(), w, n, k, b, DType::F16, "test norm output"));
    Expr a = input({m, k}, seed + 2), r = input({m, n}, seed + 3);
    Expr gamma = input({n}, seed + 4, DType::F32, 0.5f, 1.5f), beta = input({n}, seed + 5, DType::F32);
    TensorView x = output({m, n}), normed = output({m, n});
    CommandSequence seq(ctx());
    ops::LinearOptions o{.tile = tile, .scratch = &scratch_, .label = "norm output"};
    o.normOutput = ops::LinearNormOutput{x, gamma, beta, 1e-5f, normed, "norm3"};
    Result res;
    res.normInSum = ops::linear(ctx(), seq, a, *weights_.back(), residualAdd(bufferSink(x), r), o).normInSum;
    res.launches = seq.dispatchCount();
    seq.run();
    res.x = read(x);
    res.normed = read(normed);
    // float64: the layer norm of the stored (fp16) x, as the kernels read it back.
    const std::vector<double> g = test::evalReference(gamma, mem_), bt = test::evalReference(beta, mem_);
    std::vector<double> ref(m * n);
    for (int64_t row = 0; row < m; ++row) {
      double s = 0, q = 0;
      for (int64_t j = 0; j < n; ++j) s += res.x[row * n + j], q += double(res.x[row * n + j]) * res.x[row * n + j];
      const double mean = s / n, rstd = 1.0 / std::sqrt(std::max(q / n - mean * mean, 0.0) + 1e-5);
      for (int64_t j = 0; j < n; ++j) ref[row * n + j] = (res.x[row * n + j] - mean) * rstd * g[j] + bt[j];
    }
    compare(res.normed, ref,
            "layer norm of the output, " + tile.describe() + (form ? std::string(", in the sum ") + form : ""));
    return res;
  }

  ops::Conv2dScratch scratch_{ctx()};
  std::vector<std::unique_ptr<ops::LinearWeights>> weights_;
};

TEST_P(LinearNormOutputTest, SplitSumWritesTheSameBitsAsItsOwnLaunch) {
  // 70 rows (partial tiles), N 72 (18 quads: lanes with and without a third), K 104 in 3 parts.
  const Result apart = run(70, 72, 104, emulatedSplit(3), "0", 4100);
  const Result fused = run(70, 72, 104, emulatedSplit(3), "1", 4100);
  EXPECT_FALSE(apart.normInSum);
  // A device that reports no subgroup sizes keeps the norm's own launch (its layout needs them).
  const bool subgroupRows = ops::layerNormRowsLayout(ctx().info(), 72).rows > 0;
  EXPECT_EQ(fused.normInSum, subgroupRows);
  EXPECT_EQ(fused.launches + (subgroupRows ? 1 : 0), apart.launches);  // the sum writes the norm: one launch fewer
  EXPECT_EQ(test::differingBits(apart.x, fused.x), 0u) << "the stored output differs";
  EXPECT_EQ(test::differingBits(apart.normed, fused.normed), 0u) << "the layer norm differs";
  // Without a split there is no sum launch: the norm is its own launch, fused or not.
  const Result unsplit = run(70, 72, 104, emulatedSplit(1), "1", 4200);
  EXPECT_FALSE(unsplit.normInSum);
  // The workgroup-per-row form (SDGEN_SPLIT_SUM_NORM=2): the same stored output, its statistics in another order (the
  // float64 check in run), the same launches as form 1.
  const Result rowForm = run(70, 72, 104, emulatedSplit(3), "2", 4100);
  EXPECT_TRUE(rowForm.normInSum);
  EXPECT_EQ(rowForm.launches + 1, apart.launches);
  EXPECT_EQ(test::differingBits(apart.x, rowForm.x), 0u) << "the stored output differs";
  double worst = 0;
  for (size_t i = 0; i < apart.normed.size(); ++i)
    worst = std::max(worst, double(std::abs(apart.normed[i] - rowForm.normed[i])));
  EXPECT_LE(worst, 4e-3) << "the two forms of the layer norm differ by more than an fp16 rounding";
  std::printf("the two forms of the layer norm: max abs difference %.3g\n", worst);
  // Unset, the knob means form 2 (session 41's default).
  const Result byDefault = run(70, 72, 104, emulatedSplit(3), nullptr, 4100);
  EXPECT_TRUE(byDefault.normInSum);
  EXPECT_EQ(test::differingBits(byDefault.normed, rowForm.normed), 0u) << "the default is not form 2";
  // On tensor cores, the real split tiles (64x64 in 4 parts, the split fp16-accumulator tile) at SDXL's width.
  if (ops::gemmCoopSupported(ctx().info())) {
    ops::GemmTile half = test::flushed(ops::GemmTile::coopTile(256, 256, 32, 8, 4, false, 3), 0, true);
    for (const ops::GemmTile& t : {ops::GemmTile::coopTile(64, 64, 32, 2, 2, false, 4), half}) {
      const Result a = run(512, 1280, 1280, t, "0", 4400), f = run(512, 1280, 1280, t, "1", 4400);
      EXPECT_TRUE(f.normInSum) << t.describe();
      EXPECT_EQ(test::differingBits(a.x, f.x), 0u) << t.describe();
      EXPECT_EQ(test::differingBits(a.normed, f.normed), 0u) << t.describe();
      const Result r = run(512, 1280, 1280, t, "2", 4400);
      EXPECT_TRUE(r.normInSum) << t.describe();
      EXPECT_EQ(test::differingBits(a.x, r.x), 0u) << t.describe();
    }
  }
}

TEST_P(LinearNormOutputTest, RefusesWhatItCannotNormalize) {
  std::vector<float> w = test::randomFloats(32 * 32, 4300), b = test::randomFloats(32, 4301);
  ops::LinearWeights lw(ctx(), w, 32, 32, b, DType::F16, "test norm output");
  Expr a = input({64, 32}, 4302), gamma = input({32}, 4303, DType::F32), beta = input({32}, 4304, DType::F32);
  TensorView x = output({64, 32}), other = output({64, 32}), normed = output({64, 32}), narrow = output({64, 16});
  CommandSequence seq(ctx());
  ops::LinearOptions o{.tile = emulatedSplit(2), .scratch = &scratch_, .label = "norm output"};
  // The sink writes another tensor than the norm's source.
  o.normOutput = ops::LinearNormOutput{x, gamma, beta, 1e-5f, normed, "norm"};
  test::expectErrorContaining([&] { ops::linear(ctx(), seq, a, lw, bufferSink(other), o); },
                              "norm output: the layer norm of the output needs the output written whole");
  // A permuted sink into the source's memory: its rows are not where the lanes that stored them read them back.
  TensorView transposed = x;
  transposed.shape = {32, 64};
  transposed.strides = denseStrides(transposed.shape);
  test::expectErrorContaining([&] { ops::linear(ctx(), seq, a, lw, permute(bufferSink(transposed), {1, 0}), o); },
                              "the layer norm of the output needs the output written whole");
  // An output of another shape.
  o.normOutput = ops::LinearNormOutput{x, gamma, beta, 1e-5f, narrow, "norm"};
  test::expectErrorContaining([&] { ops::linear(ctx(), seq, a, lw, bufferSink(x), o); },
                              "the layer norm's output must be a dense tensor of shape [64,32], got [64,16]");
}

// fp16 only: the tensor-core GEMM takes fp16 weights (LinearTest checks the fp32 refusal).
INSTANTIATE_TEST_SUITE_P(Linear, LinearNormOutputTest, ::testing::Values(DType::F16),
                         [](const auto& info) { return std::string(dtypeName(info.param)); });

}  // namespace
}  // namespace sdgen
