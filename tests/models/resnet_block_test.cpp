// networks::ResnetBlock with a width change (its 1x1 shortcut) against a float64 CPU reference, and where its
// shortcut product is added to the graph: right after conv1, on the scratch's side() memory (so that on a GPU
// its launches share conv1's barrier interval: docs/perf.md, session 29), or after norm2 with
// SDGEN_SHORTCUT_BESIDE=0; both compute the same block. x is a stored tensor and a computed one (an up block's
// concatenation); fp32 and fp16 (on tensor-core devices fp16 takes the side scratch and the input's copy node).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <random>

#include "engine/error.h"
#include "graph/executor.h"
#include "models/networks/resnet_block.h"
#include "models/nn/layers.h"
#include "models/nn/parameters.h"
#include "ops/conv2d_scratch.h"
#include "tests/ops/conv2d_reference.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

// Weights held in memory under diffusers' names.
class MapWeights : public models::WeightSource {
 public:
  void add(const std::string& name, std::vector<int64_t> shape, uint32_t seed) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-0.3f, 0.3f);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& e : v) e = u(rng);
    tensors_[name] = {std::move(shape), std::move(v)};
  }
  const std::vector<float>& values(const std::string& name) const { return tensors_.at(name).second; }
  std::string describe() const override { return "in-memory weights"; }
  bool contains(std::string_view name) const override { return tensors_.count(std::string(name)) > 0; }
  std::vector<int64_t> shape(std::string_view name) const override { return at(name).first; }
  std::vector<float> read(std::string_view name, std::span<const int64_t> expected) const override {
    const auto& t = at(name);
    int64_t n = 1;
    for (int64_t d : expected) n *= d;
    if (n != int64_t(t.second.size())) throw Error("tensor '" + std::string(name) + "' has another size");
    return t.second;  // a [n, k, 1, 1] kernel read as [n, k]: the same values
  }
  std::vector<std::string> names() const override {
    std::vector<std::string> n;
    for (const auto& [k, v] : tensors_) n.push_back(k);
    return n;
  }

 private:
  const std::pair<std::vector<int64_t>, std::vector<float>>& at(std::string_view name) const {
    auto it = tensors_.find(std::string(name));
    if (it == tensors_.end()) throw Error("tensor '" + std::string(name) + "' not found");
    return it->second;
  }
  std::map<std::string, std::pair<std::vector<int64_t>, std::vector<float>>> tensors_;
};

constexpr int64_t kH = 6, kW = 5, kCin = 48, kCout = 32, kGroups = 8;

// silu(group norm) of NHWC x [kH, kW, c] (one image), in float64.
std::vector<double> normSilu(const std::vector<double>& x, int64_t c, const std::vector<float>& g,
                             const std::vector<float>& b) {
  std::vector<double> y(x.size());
  const int64_t per = c / kGroups;
  for (int64_t grp = 0; grp < kGroups; ++grp) {
    double s = 0, ss = 0, n = double(kH * kW * per);
    for (int64_t p = 0; p < kH * kW; ++p)
      for (int64_t q = grp * per; q < (grp + 1) * per; ++q) s += x[p * c + q];
    const double mean = s / n;
    for (int64_t p = 0; p < kH * kW; ++p)
      for (int64_t q = grp * per; q < (grp + 1) * per; ++q) ss += (x[p * c + q] - mean) * (x[p * c + q] - mean);
    const double rstd = 1.0 / std::sqrt(ss / n + 1e-5);
    for (int64_t p = 0; p < kH * kW; ++p)
      for (int64_t q = grp * per; q < (grp + 1) * per; ++q) {
        const double v = (x[p * c + q] - mean) * rstd * g[q] + b[q];
        y[p * c + q] = v / (1.0 + std::exp(-v));
      }
  }
  return y;
}

// A k x k convolution (stride 1, padding k / 2) of NHWC x [1, kH, kW, cin] with PyTorch's [cout, cin, k, k] weights.
std::vector<double> conv(const std::vector<double>& x, int64_t cin, int64_t cout, int k, const std::vector<float>& w,
                         const std::vector<float>& bias) {
  return test::conv2dReference(x, {1, kH, kW, cin}, w, bias, int(cout), ops::Conv2dParams::square(k));
}

class ResnetBlockTest : public test::VulkanTest, public ::testing::WithParamInterface<DType> {
 protected:
  void SetUp() override {
    test::VulkanTest::SetUp();
    uint32_t seed = 40;
    for (const char* n : {"norm1.weight", "norm1.bias"}) w_.add(n, {kCin}, seed++);
    for (const char* n : {"norm2.weight", "norm2.bias", "conv1.bias", "conv2.bias", "conv_shortcut.bias"})
      w_.add(n, {kCout}, seed++);
    w_.add("conv1.weight", {kCout, kCin, 3, 3}, seed++);
    w_.add("conv2.weight", {kCout, kCout, 3, 3}, seed++);
    w_.add("conv_shortcut.weight", {kCout, kCin, 1, 1}, seed++);
  }

  // Runs the block on x (split as a concatenation of 16 + 32 channels when `concat`); returns the output and
  // the labels of the graph's nodes in the order they were added.
  std::vector<float> run(const std::vector<float>& x, bool concat, std::vector<std::string>* order) {
    const DType dt = GetParam();
    nn::ParameterStore p(ctx(), dt);
    networks::ResnetBlock block(p, models::ScopedWeights(w_), kCin, kCout, int(kGroups), 1e-5f);
    p.flush();
    graph::Graph g;
    ops::Conv2dScratch scratch(ctx());
    nn::Builder b(g, dt, &scratch);
    const int64_t c1 = concat ? 16 : kCin;
    graph::TensorId a = g.input("a", {1, kH, kW, c1}, dt), out = g.output("y", {1, kH, kW, kCout}, dt);
    std::optional<graph::TensorId> s;
    if (concat) s = g.input("s", {1, kH, kW, kCin - c1}, dt);
    graph::Value in = concat ? b.zip(g.read(a), g.read(*s), [](const graph::Expr& l, const graph::Expr& r) {
      return graph::concat(l, r, 3);
    }) : g.read(a);
    b.store(block(b, in, {}, "res"), {"y", out});
    std::vector<float> av(static_cast<size_t>(kH * kW * c1)), sv(static_cast<size_t>(kH * kW * (kCin - c1)));
    for (int64_t px = 0; px < kH * kW; ++px)
      for (int64_t q = 0; q < kCin; ++q)
        (q < c1 ? av[px * c1 + q] : sv[px * (kCin - c1) + q - c1]) = x[px * kCin + q];
    Allocation am = test::uploadFloats(ctx(), av, dt), om = ctx().allocate(kH * kW * kCout * dtypeSize(dt), "y");
    std::map<graph::TensorId, graph::TensorView> bindings{{a, graph::view(am, dt, {1, kH, kW, c1})},
                                                          {out, graph::view(om, dt, {1, kH, kW, kCout})}};
    Allocation sm;
    if (concat) {
      sm = test::uploadFloats(ctx(), sv, dt);
      bindings[*s] = graph::view(sm, dt, {1, kH, kW, kCin - c1});
    }
    order->clear();
    for (const graph::GraphNode& n : g.nodes()) order->push_back(n.label);
    graph::CompiledGraph cg(ctx(), g, bindings);
    cg.run();
    return test::downloadFloats(ctx(), om, size_t(kH * kW * kCout), dt);
  }

  std::vector<double> reference(const std::vector<float>& x) const {
    std::vector<double> xd(x.begin(), x.end());
    std::vector<double> h = conv(normSilu(xd, kCin, w_.values("norm1.weight"), w_.values("norm1.bias")), kCin, kCout,
                                 3, w_.values("conv1.weight"), w_.values("conv1.bias"));
    std::vector<double> y = conv(normSilu(h, kCout, w_.values("norm2.weight"), w_.values("norm2.bias")), kCout, kCout,
                                 3, w_.values("conv2.weight"), w_.values("conv2.bias"));
    std::vector<double> sc = conv(xd, kCin, kCout, 1, w_.values("conv_shortcut.weight"), w_.values("conv_shortcut.bias"));
    for (size_t i = 0; i < y.size(); ++i) y[i] += sc[i];
    return y;
  }

  MapWeights w_;
};

size_t position(const std::vector<std::string>& order, const std::string& label) {
  return size_t(std::find(order.begin(), order.end(), label) - order.begin());
}

TEST_P(ResnetBlockTest, ShortcutAddedRightAfterConv1AndTheSameBlockEitherWay) {
  std::vector<float> x(static_cast<size_t>(kH * kW * kCin));
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (float& e : x) e = test::roundTo(GetParam(), nd(rng));  // the reference sees x as stored
  const std::vector<double> want = reference(x);
  for (bool concat : {false, true})
    for (const char* beside : {"1", "0"}) {
      SCOPED_TRACE(std::string(concat ? "computed x" : "stored x") + ", SDGEN_SHORTCUT_BESIDE=" + beside);
      ::setenv("SDGEN_SHORTCUT_BESIDE", beside, 1);
      std::vector<std::string> order;
      const std::vector<float> got = run(x, concat, &order);
      ::unsetenv("SDGEN_SHORTCUT_BESIDE");
      double err = 0;
      for (size_t i = 0; i < want.size(); ++i) err = std::max(err, std::abs(got[i] - want[i]) / std::max(1.0, std::abs(want[i])));
      EXPECT_LE(err, GetParam() == DType::F16 ? 1e-2 : 1e-4);  // fp16: weights and activations rounded
      const size_t conv1 = position(order, "res conv1"), shortcut = position(order, "res shortcut"),
                   norm2 = std::min(position(order, "res norm2"), position(order, "res norm2 stats"));
      ASSERT_LT(conv1, order.size());
      ASSERT_LT(shortcut, order.size());
      ASSERT_LT(norm2, order.size());
      if (std::string(beside) == "1") {
        EXPECT_EQ(shortcut, conv1 + 1);
      } else {
        EXPECT_GT(shortcut, norm2);
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Precision, ResnetBlockTest, ::testing::Values(DType::F32, DType::F16),
                         [](const auto& info) { return std::string(dtypeName(info.param)); });

}  // namespace
}  // namespace sdgen
