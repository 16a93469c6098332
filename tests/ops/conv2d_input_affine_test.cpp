// The group-norm input of a tensor-core conv staged as x * scale + shift (ops/conv2d_input_affine.h): which
// expressions are recognized, and the table's values against float64 from the statistics (lavapipe runs it: the
// table is an elementwise launch; the staging and the convs that read it are covered on tensor-core
// GPUs by ConvTest.CoopWhereSupported).
#include <cmath>

#include "graph/expr_nodes.h"
#include "ops/conv2d_input_affine.h"
#include "ops/elementwise.h"
#include "ops/norm.h"
#include "tests/graph/tensor_fixture.h"

namespace sdgen {
namespace {

using namespace graph;

class ConvInputAffineTest : public test::TensorTest {
 protected:
  // Statistics (sum, sum of squares) per (image, group) uploaded as given.
  TensorView stats(const std::vector<float>& v, int64_t n, int64_t groups) {
    keep_.push_back(mem_.upload(ctx(), v, DType::F32));
    return view(keep_.back(), DType::F32, {n, groups, 2});
  }
};

TEST_P(ConvInputAffineTest, GroupNormTableMatchesFloat64) {
  const int64_t N = 2, H = 3, W = 5, C = 24, G = 6, cg = C / G;  // groups of 4: a word spans two groups
  Expr x = input({N, H, W, C}, 1, DType::F16);
  std::vector<float> st(size_t(N * G * 2));
  for (size_t i = 0; i < st.size(); i += 2) {  // mean in [-0.3, 0.3], variance in [0.2, 1.1]
    const double count = double(H * W * cg), mean = -0.3 + 0.05 * double(i % 13), var = 0.2 + 0.07 * double(i % 14);
    st[i] = float(mean * count);
    st[i + 1] = float((var + mean * mean) * count);
  }
  TensorView sv = stats(st, N, G);
  Expr gamma = input({C}, 2, DType::F32, 0.5f, 1.5f), beta = input({C}, 3, DType::F32, -0.5f, 0.5f);
  const float eps = 1e-5f;
  for (bool withSilu : {true, false}) {
    Expr normalized = ops::groupNormFromStats(x, sv, int(G), eps, gamma, beta);
    auto a = ops::convInputAffineOf(withSilu ? silu(normalized) : normalized);
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->silu, withSilu);
    EXPECT_EQ(a->x.address, x.node().tensor.address);
    EXPECT_EQ(a->scale.shape(), (Shape{N, 1, 1, C}));
    TensorView out = output({N, 1, 1, 2 * C}, DType::F32);
    CommandSequence seq(ctx());
    ops::elementwise(ctx(), seq, ops::convInputAffineTable(*a), bufferSink(out), {.label = "affine table"});
    seq.run();
    const std::vector<float> got = read(out);
    const std::vector<double> g = test::evalReference(gamma, mem_), b = test::evalReference(beta, mem_);
    double worst = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) {
        const size_t s = size_t((n * G + c / cg) * 2);
        const double count = double(H * W * cg), mean = st[s] / count;
        const double rstd = 1.0 / std::sqrt(std::max(double(st[s + 1]) / count - mean * mean, 0.0) + eps);
        const double scale = rstd * g[size_t(c)], shift = b[size_t(c)] - mean * scale;
        worst = std::max({worst, std::abs(got[size_t(n * 2 * C + c)] - scale) / std::max(1.0, std::abs(scale)),
                          std::abs(got[size_t(n * 2 * C + C + c)] - shift) / std::max(1.0, std::abs(shift))});
      }
    EXPECT_LE(worst, 1e-5) << (withSilu ? "silu" : "plain");
    // The map applied to x gives the expression's own values (float64 reference of both).
    const std::vector<double> xv = test::evalReference(x, mem_);
    const std::vector<double> want = test::evalReference(normalized, mem_);
    for (size_t i = 0; i < xv.size(); i += 7) {
      const int64_t c = int64_t(i) % C, n = int64_t(i) / (H * W * C);
      const double v = xv[i] * got[size_t(n * 2 * C + c)] + got[size_t(n * 2 * C + C + c)];
      EXPECT_NEAR(v, want[i], 1e-4 * std::max(1.0, std::abs(want[i]))) << i;
    }
  }
}

TEST_P(ConvInputAffineTest, OtherInputsAreNotRecognized) {
  Expr x = input({1, 4, 4, 16}, 10, DType::F16), y = input({1, 4, 4, 16}, 11, DType::F16);
  Expr shift = input({16}, 12, DType::F32), scale = input({16}, 13, DType::F32);
  EXPECT_TRUE(ops::convInputAffineOf(x * scale + shift).has_value());         // no centering: still a map
  EXPECT_TRUE(ops::convInputAffineOf(silu(shift + scale * x)).has_value());    // either operand order
  EXPECT_FALSE(ops::convInputAffineOf(x).has_value());                         // raw: A_MODE 2
  EXPECT_FALSE(ops::convInputAffineOf(silu(x) + shift).has_value());           // SiLU inside the map
  EXPECT_FALSE(ops::convInputAffineOf(x * y + shift).has_value());             // a second spatial factor
  EXPECT_FALSE(ops::convInputAffineOf(x * scale + y).has_value());             // a spatial shift
  EXPECT_FALSE(ops::convInputAffineOf(concat(x, y, 3) * constant(2.f) + constant(1.f)).has_value());  // not raw
  Expr small = input({1, 2, 2, 16}, 14, DType::F16);
  EXPECT_FALSE(ops::convInputAffineOf(upsample2x(small) * scale + shift).has_value());
  Expr odd = input({1, 4, 4, 12}, 15, DType::F16), s12 = input({12}, 16, DType::F32);
  EXPECT_FALSE(ops::convInputAffineOf(odd * s12 + s12).has_value());  // Cin % 8 != 0: 16-byte words
  Expr f32 = input({1, 4, 4, 16}, 17, DType::F32);
  EXPECT_FALSE(ops::convInputAffineOf(f32 * scale + shift).has_value());  // the raw read is fp16
}

INSTANTIATE_TEST_SUITE_P(F16, ConvInputAffineTest, ::testing::Values(DType::F16),
                         [](const auto&) { return std::string("f16"); });

}  // namespace
}  // namespace sdgen
