// The Winograd transforms' arithmetic (F(4,3) and F(2,3)) in double against the 3x3 correlation, the
// coop-winograd transform kernels compiling to SPIR-V, and the GEMM weight layout (host side: no device).
#include <filesystem>
#include <span>

#include <gtest/gtest.h>

#include "engine/slang_compiler.h"
#include "ops/conv2d_kernels.h"
#include "ops/conv2d_weights.h"
#include "ops/conv2d_winograd_math.h"
#include "tests/ops/gemm_coop_test_support.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

// The F(4,3) matrices: A^T [(G g G^T) .* (B^T d B)] A is the 2-D correlation of d with g (host only).
TEST(ConvWinogradMath, TransformsComputeTheCorrelation) {
  using namespace ops::winograd;
  auto g = test::randomFloats(9, 1), dd = test::randomFloats(36, 2);
  auto u = filterTransform(std::span<const float, 9>(g.data(), 9));
  double v[6][6], bd[6][6];
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) {
      bd[i][j] = 0;
      for (int k = 0; k < 6; ++k) bd[i][j] += BT[i][k] * dd[k * 6 + j];
    }
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) {
      v[i][j] = 0;
      for (int k = 0; k < 6; ++k) v[i][j] += bd[i][k] * BT[j][k];
      v[i][j] *= u[i * 6 + j];
    }
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) {
      double got = 0, want = 0;
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) got += AT[y][i] * v[i][j] * AT[x][j];
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) want += double(dd[(y + a) * 6 + x + b]) * g[a * 3 + b];
      EXPECT_NEAR(got, want, 1e-12) << "output " << y << "," << x;
    }
}

// Winograd F(2,3) as shaders/conv/winograd_f23.slang and gemm_coop.slang's A_MODE 4 compute it, in double: V
// from the two nonzero terms of each row of B^T, U from G's coefficients, Y = A^T M A as the output kernel's
// row and column sums; the 2x2 outputs equal the 3x3 correlation of the 4x4 patch.
TEST(ConvWinogradMath, F23TransformsComputeTheCorrelation) {
  auto g = test::randomFloats(9, 3), d = test::randomFloats(16, 4);
  const int at[4][2] = {{0, 2}, {1, 2}, {1, 2}, {1, 3}};
  const double sign[4][2] = {{1, -1}, {1, 1}, {-1, 1}, {1, -1}};
  auto gCoef = [](int i, int k) { return i == 0 ? (k == 0 ? 1.0 : 0.0) : i == 3 ? (k == 2 ? 1.0 : 0.0)
                                         : i == 1 ? 0.5 : (k == 1 ? -0.5 : 0.5); };
  double m[16];
  for (int e = 0; e < 16; ++e) {
    const int i = e / 4, j = e % 4;
    double v = 0, u = 0;
    for (int q = 0; q < 4; ++q) v += sign[i][q / 2] * sign[j][q % 2] * d[at[i][q / 2] * 4 + at[j][q % 2]];
    for (int ky = 0; ky < 3; ++ky)
      for (int kx = 0; kx < 3; ++kx) u += gCoef(i, ky) * gCoef(j, kx) * g[ky * 3 + kx];
    m[e] = v * u;
  }
  double r0[4], r1[4];
  for (int b = 0; b < 4; ++b) r0[b] = m[b] + m[4 + b] + m[8 + b], r1[b] = m[4 + b] - m[8 + b] - m[12 + b];
  const double y[4] = {r0[0] + r0[1] + r0[2], r0[1] - r0[2] - r0[3], r1[0] + r1[1] + r1[2], r1[1] - r1[2] - r1[3]};
  for (int q = 0; q < 4; ++q) {
    double want = 0;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) want += double(d[(q / 2 + a) * 4 + q % 2 + b]) * g[a * 3 + b];
    EXPECT_NEAR(y[q], want, 1e-12) << "output " << q;
  }
}

// coop-winograd's transform kernels (shaders/conv/winograd_f23.slang) compile to SPIR-V in CI, where no tensor
// cores run them: the filter transform and the output transform through an fp16 buffer sink (parameter word 31,
// after the conv header and the two band words).
TEST(ConvWinogradMath, F23TransformKernelsCompileToSpirv) {
  const std::filesystem::path cache = std::filesystem::temp_directory_path() / "sdgen-winograd-f23-compile-test";
  std::filesystem::remove_all(cache);
  SlangCompiler compiler(defaultSlangc(), defaultShaderDir(), cache.string());
  KernelSource filter, output;
  filter.generated = ops::convWrapper({"conv.winograd_f23"}, "", "winogradF23FilterMain(winogradF23Item(group, local));");
  filter.label = "coop-winograd filter";
  output.generated = ops::convWrapper({"conv.winograd_f23"}, "typealias S = BufSink<31,F16Storage>;\n",
                                      "winogradF23OutputMain<S>(winogradF23Item(group, local));");
  output.label = "coop-winograd output";
  test::expectCompiles(compiler, filter, false);
  test::expectCompiles(compiler, output, false);
  std::filesystem::remove_all(cache);
}

TEST(ConvWinogradMath, GemmLayoutPacking) {
  // [Cout=2, Cin=3, 1, 2] -> row k = kx * Cin + ci, column co.
  std::vector<float> w(12);
  for (int i = 0; i < 12; ++i) w[i] = float(i);
  auto p = ops::packGemmLayout(w, 2, 3, 1, 2);
  for (int co = 0; co < 2; ++co)
    for (int ci = 0; ci < 3; ++ci)
      for (int kx = 0; kx < 2; ++kx) EXPECT_EQ(p[(kx * 3 + ci) * 2 + co], w[(co * 3 + ci) * 2 + kx]);
}

}  // namespace
}  // namespace sdgen
