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
  std::vector<float> run(int64_t b, int64_t sq, int64_t sk, int64_t h, int64_t d, std::vector<float>* want) {
    std::mt19937 rng(uint32_t(sq * 131 + d));
    std::normal_distribution<float> nd(0.f, 1.f);
    auto randoms = [&](int64_t n) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float& e : x) e = nd(rng);
      return x;
    };
    std::vector<float> q = randoms(b * sq * h * d), k = randoms(b * sk * h * d), v = randoms(b * sk * h * d);
    *want = referenceAttention(q, k, v, b, sq, sk, h, d);
    graph::Graph g;
    graph::TensorId qi = g.input("q", {b, sq, h, d}, DType::F32), ki = g.input("k", {b, sk, h, d}, DType::F32);
    graph::TensorId vi = g.input("v", {b, sk, h, d}, DType::F32), out = g.output("o", {b, sq, h * d}, DType::F32);
    nn::Builder builder(g, DType::F32, nullptr);
    builder.attention(g.read(qi), g.read(ki), g.read(vi), {}, {"attention", out});
    Allocation qm = uploadFloats(ctx(), q, DType::F32, "q"), km = uploadFloats(ctx(), k, DType::F32, "k");
    Allocation vm = uploadFloats(ctx(), v, DType::F32, "v"), om = ctx().allocate(want->size() * 4, "o");
    graph::CompiledGraph cg(ctx(), g,
                            {{qi, graph::view(qm, DType::F32, {b, sq, h, d})},
                             {ki, graph::view(km, DType::F32, {b, sk, h, d})},
                             {vi, graph::view(vm, DType::F32, {b, sk, h, d})},
                             {out, graph::view(om, DType::F32, {b, sq, h * d})}});
    cg.run();
    return downloadFloats(ctx(), om, want->size(), DType::F32);
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
