// coop-winograd's explicit input transform (ops::recordWinogradF23Input, shaders/conv/winograd_f23.slang
// winogradF23InputMain; the fp16-accumulator tiles' V, session 42) on every machine: V[e][t][ci] = (B^T d B)[e] of
// each tile's 4x4 patch, zero outside the image, against float64 on the fp16 input — two images of odd size (the
// last row and column of tiles half outside), a band that starts past the first tile, 12 channels (3 groups of 4).
#include <cmath>
#include <cstdio>
#include <vector>

#include "engine/command_sequence.h"
#include "engine/dtype.h"
#include "ops/conv2d_kernels.h"
#include "ops/conv2d_plan.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

class WinogradInputTest : public test::VulkanTest {};

TEST_F(WinogradInputTest, BandOfTilesMatchesFloat64) {
  ops::ConvProblem p;
  p.n = 2, p.h = p.ho = 7, p.w = p.wo = 5, p.cin = 12, p.cout = 8;
  p.p = ops::Conv2dParams::square(3);
  const int64_t tilesH = (p.ho + 1) / 2, tilesW = (p.wo + 1) / 2, tiles = p.n * tilesH * tilesW;  // 2 x 4 x 3
  const int64_t first = 5, count = tiles - first - 2;                                              // tiles 5..21
  std::vector<float> x = test::randomFloats(size_t(p.n * p.h * p.w * p.cin), 4242);
  for (float& f : x) f = roundToStorage(DType::F16, f);
  Allocation in = test::uploadFloats(ctx(), x, DType::F16, "winograd input");
  const size_t vCount = size_t(16 * count * p.cin);
  Allocation v = ctx().allocate(vCount * 2, "winograd V");
  test::poison(ctx(), v);
  {
    CommandSequence seq(ctx());
    const std::string label = ops::recordWinogradF23Input(ctx(), seq, p, in.address(),
                                                          {MemRange{in.address(), in.size()}}, v.address(), first,
                                                          count, "test");
    EXPECT_EQ(label, "test coop-winograd input transform");
    seq.run();
  }
  const std::vector<float> got = test::downloadFloats(ctx(), v, vCount, DType::F16);
  // B^T's rows: which two patch rows and with which signs (row 0: d0 - d2, 1: d1 + d2, 2: d2 - d1, 3: d1 - d3).
  const int at[4][2] = {{0, 2}, {1, 2}, {2, 1}, {1, 3}};
  const double sign[4][2] = {{1, -1}, {1, 1}, {1, -1}, {1, -1}};
  auto pixel = [&](int64_t n, int64_t y, int64_t xx, int64_t c) -> double {
    if (y < 0 || y >= p.h || xx < 0 || xx >= p.w) return 0.0;
    return x[size_t(((n * p.h + y) * p.w + xx) * p.cin + c)];
  };
  double worst = 0;
  for (int64_t tl = 0; tl < count; ++tl) {
    const int64_t t = first + tl, n = t / (tilesH * tilesW), ty = (t / tilesW) % tilesH, tx = t % tilesW;
    for (int e = 0; e < 16; ++e)
      for (int64_t c = 0; c < p.cin; ++c) {
        const int i = e / 4, j = e % 4;
        double want = 0;
        for (int a = 0; a < 2; ++a)
          for (int b = 0; b < 2; ++b)
            want += sign[i][a] * sign[j][b] * pixel(n, 2 * ty - 1 + at[i][a], 2 * tx - 1 + at[j][b], c);
        const double g = got[size_t((e * count + tl) * p.cin + c)];
        ASSERT_FALSE(std::isnan(g)) << "V[" << e << "][" << tl << "][" << c << "] unwritten";
        worst = std::max(worst, std::abs(g - want));
        // four fp16 inputs of |x| <= 1 summed in fp32, one fp16 rounding of |V| <= 4
        EXPECT_NEAR(g, want, 4.0 / 1024) << "V[" << e << "][" << tl << "][" << c << "]";
      }
  }
  std::printf("[winograd input] max |V - V64| = %.3g\n", worst);
}

}  // namespace
}  // namespace sdgen
