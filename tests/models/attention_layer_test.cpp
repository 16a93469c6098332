// nn::Builder::attention against a float64 CPU softmax(QK^T/sqrt(d))V: the flash kernel for narrow heads and the
// product-softmax-product path for a single head wider than the flash kernel's limit (the VAE's mid block).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/tensor_io.h"
#include "graph/executor.h"
#include "models/nn/layers.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

// q [B, Sq, H, D], k/v [B, Sk, H, D] -> [B, Sq, H*D]
std::vector<float> referenceAttention(const std::vector<float>& q, const std::vector<float>& k,
                                      const std::vector<float>& v, int64_t b, int64_t sq, int64_t sk, int64_t h,
                                      int64_t d) {
  std::vector<float> out(static_cast<size_t>(b * sq * h * d));
  const double scale = 1.0 / std::sqrt(double(d));
  std::vector<double> p(static_cast<size_t>(sk));
  for (int64_t n = 0; n < b; ++n)
    for (int64_t hh = 0; hh < h; ++hh)
      for (int64_t i = 0; i < sq; ++i) {
        double mx = -1e300;
        for (int64_t j = 0; j < sk; ++j) {
          double s = 0;
          for (int64_t c = 0; c < d; ++c)
            s += double(q[((n * sq + i) * h + hh) * d + c]) * double(k[((n * sk + j) * h + hh) * d + c]);
          p[j] = s * scale;
          mx = std::max(mx, p[j]);
        }
        double sum = 0;
        for (double& x : p) sum += (x = std::exp(x - mx));
        for (int64_t c = 0; c < d; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < sk; ++j) acc += p[j] * double(v[((n * sk + j) * h + hh) * d + c]);
          out[((n * sq + i) * h + hh) * d + c] = float(acc / sum);
        }
      }
  return out;
}

class AttentionLayer : public test::VulkanTest {
 protected:
  // dt: the activations' type (the builder's, the inputs' and the output's).
  std::vector<float> run(int64_t b, int64_t sq, int64_t sk, int64_t h, int64_t d, std::vector<float>* want,
                         DType dt = DType::F32) {
    std::mt19937 rng(uint32_t(sq * 131 + d));
    std::normal_distribution<float> nd(0.f, 1.f);
    auto randoms = [&](int64_t n) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float& e : x) e = nd(rng);
      return x;
    };
    std::vector<float> q = randoms(b * sq * h * d), k = randoms(b * sk * h * d), v = randoms(b * sk * h * d);
    for (auto* x : {&q, &k, &v})  // the reference sees the inputs as stored
      for (float& e : *x) e = test::roundTo(dt, e);
    *want = referenceAttention(q, k, v, b, sq, sk, h, d);
    graph::Graph g;
    graph::TensorId qi = g.input("q", {b, sq, h, d}, dt), ki = g.input("k", {b, sk, h, d}, dt);
    graph::TensorId vi = g.input("v", {b, sk, h, d}, dt), out = g.output("o", {b, sq, h * d}, dt);
    ops::Conv2dScratch scratch(ctx());  // split-K partials of the tensor-core products (fp16)
    nn::Builder builder(g, dt, &scratch);
    builder.attention(g.read(qi), g.read(ki), g.read(vi), {}, {"attention", out});
    Allocation qm = uploadFloats(ctx(), q, dt, "q"), km = uploadFloats(ctx(), k, dt, "k");
    Allocation vm = uploadFloats(ctx(), v, dt, "v"), om = ctx().allocate(want->size() * dtypeSize(dt), "o");
    graph::CompiledGraph cg(ctx(), g,
                            {{qi, graph::view(qm, dt, {b, sq, h, d})},
                             {ki, graph::view(km, dt, {b, sk, h, d})},
                             {vi, graph::view(vm, dt, {b, sk, h, d})},
                             {out, graph::view(om, dt, {b, sq, h * d})}});
    cg.run();
    return downloadFloats(ctx(), om, want->size(), dt);
  }
};

TEST_F(AttentionLayer, NarrowHeadsUseTheFlashKernel) {
  std::vector<float> want;
  auto got = run(2, 37, 29, 3, 40, &want);
  EXPECT_LE(test::relativeError(got, want), 1e-5);
}

TEST_F(AttentionLayer, OneWideHeadRunsAsProducts) {
  std::vector<float> want;
  auto got = run(2, 45, 45, 1, ops::kAttentionMaxHeadDim + 64, &want);  // the VAE: one head of 512 channels
  EXPECT_LE(test::relativeError(got, want), 1e-5);
}

// fp16 activations: keys transposed and values stored in fp16 and multiplied by ops::matmulHalfB (tensor cores
// where the device has them: 64 keys make both products whole 8-column B operands there; 45 keys leave the
// scores on the expression path), the softmax's probabilities in fp16.
TEST_F(AttentionLayer, OneWideHeadRunsAsHalfProductsInFp16) {
  for (int64_t keys : {64, 45}) {
    std::vector<float> want;
    auto got = run(2, 70, keys, 1, ops::kAttentionMaxHeadDim + 64, &want, DType::F16);
    EXPECT_LE(test::relativeError(got, want), 5e-3) << keys << " keys";
  }
}

TEST_F(AttentionLayer, SeveralWideHeadsAreAClearError) {
  std::vector<float> want;
  try {
    run(1, 8, 8, 2, ops::kAttentionMaxHeadDim + 4, &want);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("supported for a single head only"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sdgen
