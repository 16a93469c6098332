// Split-K summed by each tile's last part in the GEMM's own launch (gemm_coop.slang SPLIT 5, GemmInfo::fusedSplitSum;
// SDGEN_SPLIT_FUSED_SUM=1): the same bits as the second launch (gemm_split.slang), one launch fewer, and the tile
// counters back at zero after every launch (a second replay gives the same bits). On software matrices
// (GemmTile::coopEmulation) so that every machine runs it: partial tiles along M and N, a residual sink, 3 parts;
// and on tensor cores, the 256x256 fp16-accumulator tile in 4 parts (the VAE's 512 channels at 64^2).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "engine/command_sequence.h"
#include "graph/expr.h"
#include "ops/conv2d_scratch.h"
#include "ops/linear.h"
#include "ops/linear_gemm.h"
#include "tests/graph/tensor_fixture.h"
#include "tests/ops/gemm_coop_test_support.h"

namespace sdgen {
namespace {

using namespace graph;

class FusedSplitSumTest : public test::TensorTest {
 protected:
  struct Result {
    std::vector<float> first, second;  // two replays of one recording, the output poisoned before each
    ops::GemmInfo info;
    size_t launches = 0;
  };
  // x W^T + b + r, K in the tile's parts; `fused`: SDGEN_SPLIT_FUSED_SUM's value.
  Result run(int64_t m, int64_t n, int64_t k, const ops::GemmTile& tile, const char* fused, uint32_t seed) {
    test::ScopedEnv knob("SDGEN_SPLIT_FUSED_SUM", fused);
    std::vector<float> w = test::randomFloats(n * k, seed), b = test::randomFloats(n, seed + 1);
    weights_.push_back(std::make_unique<ops::LinearWeights>(ctx(), w, n, k, b, DType::F16, "test fused split sum"));
    Expr a = input({m, k}, seed + 2), r = input({m, n}, seed + 3);
    outputs_.push_back(ctx().allocate(uint64_t(m * n) * 2, "fused split sum output"));
    const Allocation& xMem = outputs_.back();
    TensorView x = view(xMem, DType::F16, {m, n});
    CommandSequence seq(ctx());
    ops::LinearOptions o{.tile = tile, .scratch = &scratch_, .label = "fused split sum"};
    Result res;
    res.info = ops::linear(ctx(), seq, a, *weights_.back(), residualAdd(bufferSink(x), r), o);
    res.launches = seq.dispatchCount();
    seq.end();
    // The partials are poisoned too: a sum made before every part has stored its own would read NaNs (not the
    // previous run's values, which are the same numbers).
    const Allocation& partials = scratch_.acquire(1, ops::Conv2dScratch::Slot::Partials);
    const uint64_t counters = uint64_t(((m + tile.bm - 1) / tile.bm) * ((n + tile.bn - 1) / tile.bn));
    for (std::vector<float>* out : {&res.first, &res.second}) {
      test::poison(ctx(), xMem);
      test::poison(ctx(), partials);
      seq.run();
      *out = test::downloadFloats(ctx(), xMem, m * n, DType::F16);
      if (res.info.fusedSplitSum) {
        const std::vector<float> left = test::downloadFloats(ctx(), scratch_.counters(counters), counters, DType::F32);
        EXPECT_EQ(std::count(left.begin(), left.end(), 0.0f), std::ptrdiff_t(counters)) << "counters left non-zero";
      }
    }
    return res;
  }
  void expectSameBits(int64_t m, int64_t n, int64_t k, const ops::GemmTile& tile, uint32_t seed) {
    const Result apart = run(m, n, k, tile, nullptr, seed), fused = run(m, n, k, tile, "1", seed);
    const std::string what = tile.describe() + " on " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                             std::to_string(k);
    EXPECT_FALSE(apart.info.fusedSplitSum) << what;
    EXPECT_TRUE(fused.info.fusedSplitSum) << what;
    EXPECT_EQ(fused.launches + 1, apart.launches) << what;
    EXPECT_EQ(test::differingBits(apart.first, fused.first), 0u) << what << ": the fused sum's bits differ";
    EXPECT_EQ(std::count_if(fused.first.begin(), fused.first.end(), [](float v) { return std::isnan(v); }), 0) << what;
    EXPECT_EQ(test::differingBits(fused.first, fused.second), 0u)
        << what << ": the second replay differs (counters not zero)";
    EXPECT_EQ(test::differingBits(apart.first, apart.second), 0u) << what;
  }

  ops::Conv2dScratch scratch_{ctx()};
  std::vector<std::unique_ptr<ops::LinearWeights>> weights_;
  std::deque<Allocation> outputs_;
};

TEST_P(FusedSplitSumTest, SameBitsAsTheSumLaunchOneLaunchFewer) {
  ops::GemmTile emulated = ops::GemmTile::coopTile(32, 32, 32, 2, 2, false, 3);
  emulated.coopEmulation = true;
  expectSameBits(70, 72, 104, emulated, 4500);  // partial tiles along M and N; K in 3 parts of 32, 32, 40
  expectSameBits(64, 64, 192, emulated, 4510);  // whole tiles (no bounds checks)
  if (ops::gemmCoopSupported(ctx().info())) {
    expectSameBits(512, 512, 4608, test::flushed(ops::GemmTile::coopTile(256, 256, 32, 8, 4, false, 4), 0, true),
                   4520);
    expectSameBits(300, 256, 1024, ops::GemmTile::coopTile(64, 64, 32, 2, 2, false, 4), 4530);
  }
}

// fp16 only: the tensor-core GEMM takes fp16 weights, and fp16 partials need an fp16 output.
INSTANTIATE_TEST_SUITE_P(Linear, FusedSplitSumTest, ::testing::Values(DType::F16),
                         [](const auto& info) { return std::string(dtypeName(info.param)); });

}  // namespace
}  // namespace sdgen
