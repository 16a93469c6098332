// coop-winograd's F(2,3) filters made by the first recording that runs the algorithm
// (Conv2dWeightsOptions::winogradF23OnUse, what nn::ParameterStore asks for; ops/conv2d_coop_winograd.cpp): none
// before it, U = G g G^T against float64 within one fp16 rounding after it, made once (a second call keeps the
// allocation), a pack that throws leaves none, layouts that cannot hold them refused by name; on tensor-core
// devices a conv on them records no filter launch and matches float64. Suite ConvTest (conv2d_test_fixture.h).
#include <algorithm>
#include <cmath>
#include <string>

#include "ops/conv2d.h"
#include "tests/ops/conv2d_test_fixture.h"

namespace sdgen::conv_test {
namespace {

TEST_P(ConvTest, CoopWinogradFiltersMadeOnFirstUse) {
  const int cin = 24, cout = 40;
  Layer l = layer(cout, cin, k3, 2810);
  ops::Conv2dWeightsOptions o;
  o.storage = DType::F16;
  o.winogradF23OnUse = true;
  o.name = "f23-on-use conv";
  if (dt() != DType::F16) {
    o.storage = DType::F32;
    expectError([&] { ops::Conv2dWeights::allocate(ctx(), cout, cin, k3, o); }, {"f23-on-use conv", "fp16 storage"});
    o.storage = DType::F16;
    expectError([&] { ops::Conv2dWeights::allocate(ctx(), cout, cin, Conv2dParams::square(3, 2), o); },
                {"f23-on-use conv", "3x3 s1 p1 d1"});
    expectError([&] { ops::Conv2dWeights::allocate(ctx(), 36, cin, k3, o); }, {"f23-on-use conv", "multiples of 8"});
    ops::Conv2dWeights w = ops::Conv2dWeights::allocate(ctx(), cout, cin, k3, o);
    expectError([&] { w.makeWinogradF23(ctx(), [](const Allocation&) { throw Error("pack failed"); }); },
                {"pack failed"});
    EXPECT_FALSE(w.hasWinogradF23());
    EXPECT_EQ(w.winogradF23Bytes(), 0u);
    expectError([&] { (void)w.winogradF23(); }, {"f23-on-use conv", "winogradF23OnUse"});
    ops::Conv2dWeights plain = ops::Conv2dWeights::allocate(ctx(), cout, cin, k3, {.storage = DType::F16});
    EXPECT_FALSE(ops::makeWinogradF23Filters(ctx(), plain));  // not asked for: the algorithm makes them per call
    EXPECT_FALSE(plain.hasWinogradF23());
    return;
  }
  ops::Conv2dWeights w(ctx(), cout, cin, k3, l.w, l.b, o);
  EXPECT_TRUE(w.winogradF23OnUse());
  EXPECT_FALSE(w.hasWinogradF23());
  EXPECT_EQ(w.bytesMadeOnUse(), 0u);
  ASSERT_TRUE(ops::makeWinogradF23Filters(ctx(), w));
  const VkDeviceAddress first = w.winogradF23().address();
  ASSERT_TRUE(ops::makeWinogradF23Filters(ctx(), w));
  EXPECT_EQ(w.winogradF23().address(), first) << "made again";
  EXPECT_EQ(w.winogradF23Bytes(), uint64_t(16) * cin * cout * 2);
  EXPECT_EQ(w.bytesMadeOnUse(), w.winogradF23Bytes());

  // float64: U[4 i + j][ci][co] = (G g G^T)[i][j], G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
  static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  const std::vector<float> u = test::downloadFloats(ctx(), w.winogradF23(), size_t(16) * cin * cout, DType::F16);
  double worst = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int ci = 0; ci < cin; ++ci)
        for (int co = 0; co < cout; ++co) {
          double ref = 0;
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx)
              ref += G[i][ky] * G[j][kx] * l.w[((size_t(co) * cin + ci) * 3 + ky) * 3 + kx];
          const double got = u[((size_t(i) * 4 + j) * cin + ci) * cout + co];
          worst = std::max(worst, std::abs(got - ref) / std::max(1.0, std::abs(ref)));
        }
  EXPECT_LE(worst, 1e-3);  // one fp16 rounding of fp32 sums of fp16 taps

  // A conv on them where tensor cores run it: no filter launch in the recording, float64's result.
  if (!ops::gemmCoopSupported(ctx().info())) return;
  Expr x = input({1, 9, 11, cin}, 2811);
  TensorView out = output(ops::conv2dOutputShape(x.shape(), w));
  CommandSequence seq(ctx());
  const ops::Conv2dInfo info = ops::conv2d(ctx(), seq, x, w, bufferSink(out), options(ConvAlgo::CoopWinograd));
  seq.run();
  for (const std::string& k : info.kernels) EXPECT_EQ(k.find("filter"), std::string::npos) << k;
  compareRoundedInput(read(out), reference(x, l), "coop-winograd filters on first use");
}

}  // namespace
}  // namespace sdgen::conv_test
