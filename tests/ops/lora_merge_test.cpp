// The LoRA merge kernel (ops/lora_merge.h, shaders/weights/lora_merge.slang) against a float64 product on the
// host: C + scale * L * Rt for odd sizes (rows and columns that are not multiples of the workgroup), rank 1 to
// 16, a matrix larger than one dispatch's grid (the grid-stride loop), negative and zero scales, and several
// merges into one weight (two LoRAs at once).
#include <cmath>

#include "engine/command_sequence.h"
#include "ops/lora_merge.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

struct Merge {
  uint32_t rank;
  float scale;
  std::vector<float> l, rt;
};

class LoraMergeTest : public test::VulkanTest {
 protected:
  // Runs the merges in one sequence and compares with C + sum of scale * L * Rt computed in double.
  void check(uint32_t m, uint32_t n, const std::vector<Merge>& merges, uint32_t seed) {
    std::vector<float> c = test::randomFloats(size_t(m) * n, seed);
    Allocation dc = test::uploadFloats(ctx(), c, DType::F32, "lora test weight");
    std::vector<Allocation> factors;
    {
      CommandSequence seq(ctx());
      for (size_t i = 0; i < merges.size(); ++i) {
        const Merge& g = merges[i];
        factors.push_back(test::uploadFloats(ctx(), g.l, DType::F32, "lora test up"));
        factors.push_back(test::uploadFloats(ctx(), g.rt, DType::F32, "lora test down"));
        ops::loraMerge(ctx(), seq, dc.address(), factors[factors.size() - 2].address(), factors.back().address(),
                       {m, n, g.rank}, g.scale, "test merge " + std::to_string(i));
      }
      seq.end();
      seq.run();
    }
    std::vector<float> got = test::downloadFloats(ctx(), dc, size_t(m) * n, DType::F32);
    double worst = 0;
    for (uint32_t row = 0; row < m; ++row)
      for (uint32_t col = 0; col < n; ++col) {
        double want = c[size_t(row) * n + col], mag = std::abs(want);
        for (const Merge& g : merges) {
          double acc = 0, accMag = 0;
          for (uint32_t r = 0; r < g.rank; ++r) {
            const double t = double(g.l[size_t(row) * g.rank + r]) * g.rt[size_t(r) * n + col];
            acc += t;
            accMag += std::abs(t);
          }
          want += double(g.scale) * acc;
          mag += std::abs(double(g.scale)) * accMag;
        }
        const double err = std::abs(got[size_t(row) * n + col] - want);
        // fp32: each product and sum rounds once (relative 2^-24) over rank + 2 operations
        ASSERT_LE(err, (merges.front().rank + 4) * 1.2e-7 * mag + 1e-30)
            << "element [" << row << "][" << col << "] of " << m << "x" << n;
        worst = std::max(worst, err);
      }
    EXPECT_LT(worst, 1e-4);
  }
  static Merge random(uint32_t m, uint32_t n, uint32_t rank, float scale, uint32_t seed) {
    return {rank, scale, test::randomFloats(size_t(m) * rank, seed), test::randomFloats(size_t(rank) * n, seed + 1)};
  }
};

TEST_F(LoraMergeTest, MatchesFloat64Product) {
  check(7, 5, {random(7, 5, 1, 0.75f, 10)}, 1);
  check(33, 70, {random(33, 70, 4, -1.25f, 20)}, 2);
  check(64, 9 * 3, {random(64, 27, 16, 0.5f, 30)}, 3);  // a 3x3 conv's [Cout][Cin*9]
}

TEST_F(LoraMergeTest, LargerThanOneDispatchGrid) {
  // 512 groups of 256 threads cover 131072 elements per pass; this has 3.3 passes.
  check(600, 719, {random(600, 719, 8, 0.3f, 40)}, 4);
}

TEST_F(LoraMergeTest, TwoLorasIntoOneWeightAndAZeroScale) {
  check(40, 24, {random(40, 24, 4, 0.8f, 50), random(40, 24, 2, -0.5f, 60), random(40, 24, 3, 0.f, 70)}, 5);
}

TEST_F(LoraMergeTest, ZeroRankIsAnError) {
  Allocation a = ctx().allocate(64, "lora test");
  CommandSequence seq(ctx());
  test::expectErrorContaining(
      [&] { ops::loraMerge(ctx(), seq, a.address(), a.address(), a.address(), {2, 2, 0}, 1.f, "layer.weight"); },
      "layer.weight: a LoRA of rank 0");
  seq.end();
}

}  // namespace
}  // namespace sdgen
