// A 3x3 convolution of a nearest 2x upsampling computed per output phase (ops/conv2d_coop_upsample.cpp): the
// decomposition itself in float64, the phase-filter kernel on any device, and the tensor-core GEMM over the four
// phases (gemm_coop.slang A_MODE 5) against float64 where tensor cores run. Suite ConvTest
// (conv2d_test_fixture.h), instantiated in conv2d_test.cpp.
#include <cstdlib>

#include "tests/ops/conv2d_test_fixture.h"

namespace sdgen::conv_test {
namespace {

// The filter rows (or columns) [first, last] that the input offset t (0: y - 1 + a, 1: y + a) of phase a sums,
// as shaders/conv/upsample_phases.slang writes them.
std::pair<int, int> phaseTaps(int a, int t) {
  if (a == 0) return t == 0 ? std::pair{0, 0} : std::pair{1, 2};
  return t == 0 ? std::pair{0, 1} : std::pair{2, 2};
}

// U[p][t][ci][co] in double from [Cout][Cin][3][3] weights (p = 2a + b, t = 2ty + tx).
std::vector<double> phaseFilters(const std::vector<float>& w, int cout, int cin) {
  std::vector<double> u(size_t(16) * cin * cout, 0.0);
  for (int p = 0; p < 4; ++p)
    for (int t = 0; t < 4; ++t) {
      const auto ys = phaseTaps(p >> 1, t >> 1), xs = phaseTaps(p & 1, t & 1);
      for (int ci = 0; ci < cin; ++ci)
        for (int co = 0; co < cout; ++co) {
          double s = 0;
          for (int ky = ys.first; ky <= ys.second; ++ky)
            for (int kx = xs.first; kx <= xs.second; ++kx) s += w[((size_t(co) * cin + ci) * 3 + ky) * 3 + kx];
          u[((size_t(p) * 4 + t) * cin + ci) * cout + co] = s;
        }
    }
  return u;
}

// Host-only: the four 2x2 convolutions of x with the phase filters, each padded by (1 - a, 1 - b) at the top
// left and read at (2y + a, 2x + b), are the 3x3 convolution of upsample2x(x) (padding 1), borders included.
TEST(UpsamplePhases, DecompositionEqualsTheUpsampledConvolution) {
  const int n = 2, h = 3, w = 5, cin = 3, cout = 2;
  const std::vector<float> x = test::randomFloats(size_t(n) * h * w * cin, 11), wt = test::randomFloats(size_t(cout) * cin * 9, 12);
  std::vector<double> up(size_t(n) * 4 * h * w * cin);
  for (int i = 0; i < n; ++i)
    for (int y = 0; y < 2 * h; ++y)
      for (int xx = 0; xx < 2 * w; ++xx)
        for (int c = 0; c < cin; ++c)
          up[((size_t(i) * 2 * h + y) * 2 * w + xx) * cin + c] = x[((size_t(i) * h + y / 2) * w + xx / 2) * cin + c];
  const std::vector<double> ref =
      test::conv2dReference(up, {n, 2 * h, 2 * w, cin}, wt, std::vector<float>(cout, 0.f), cout, Conv2dParams::square(3));
  const std::vector<double> u = phaseFilters(wt, cout, cin);
  double worst = 0;
  for (int i = 0; i < n; ++i)
    for (int p = 0; p < 4; ++p)
      for (int y = 0; y < h; ++y)
        for (int xx = 0; xx < w; ++xx)
          for (int co = 0; co < cout; ++co) {
            const int a = p >> 1, b = p & 1;
            double s = 0;
            for (int t = 0; t < 4; ++t) {
              const int iy = y - 1 + a + (t >> 1), ix = xx - 1 + b + (t & 1);
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              for (int ci = 0; ci < cin; ++ci)
                s += u[((size_t(p) * 4 + t) * cin + ci) * cout + co] * x[((size_t(i) * h + iy) * w + ix) * cin + ci];
            }
            const double r = ref[((size_t(i) * 2 * h + 2 * y + a) * 2 * w + 2 * xx + b) * cout + co];
            worst = std::max(worst, std::abs(s - r));
          }
  EXPECT_LE(worst, 1e-12);
}

// The phase-filter kernel (any device: it runs on CUDA cores) against the sums in float64 of the fp16 weights.
TEST_P(ConvTest, UpsamplePhaseFiltersKernel) {
  if (dt() != DType::F16) {  // the kernel reads the fp16 gemm layout; fp32 weights are refused by name
    Layer l = layer(8, 8, k3, 60);
    Expr x = input({1, 2, 2, 8}, 61);
    TensorView out = output({1, 4, 4, 8}), u = output({16, 8, 8});
    CommandSequence seq(ctx());
    ops::Conv2dInfo info;
    const ops::ConvProblem prob{1, 4, 4, 8, 4, 4, 8, k3};
    const Expr in = upsample2x(x);
    const Sink sink = bufferSink(out);
    const std::string label = "up";
    expectError([&] { ops::recordUpsamplePhaseFilters({ctx(), seq, prob, in, *l.gpu, sink, label, info}, u.address); },
                {"phase filters need fp16"});
    return;
  }
  const int cin = 24, cout = 40;
  Layer l = layer(cout, cin, k3, 62);
  Expr x = input({1, 3, 3, cin}, 63);
  TensorView out = output({1, 6, 6, cout}), u = output({16, cin, cout});  // fp16: the filters' storage
  CommandSequence seq(ctx());
  ops::Conv2dInfo info;
  const ops::ConvProblem prob{1, 6, 6, cin, 6, 6, cout, k3};
  const Expr in = upsample2x(x);
  const Sink sink = bufferSink(out);
  const std::string label = "up";
  ops::recordUpsamplePhaseFilters({ctx(), seq, prob, in, *l.gpu, sink, label, info}, u.address);
  seq.run();
  ASSERT_EQ(info.kernels, std::vector<std::string>{"up coop phase filters"});
  const std::vector<float> got = read(u);
  const std::vector<double> ref = phaseFilters(l.w, cout, cin);
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i)
    worst = std::max(worst, std::abs(got[i] - ref[i]) / std::max(1.0, std::abs(ref[i])));
  EXPECT_LE(worst, 1e-3);  // one fp16 rounding of a sum of up to four fp16 weights
}

// The phase filters made once, as the weights of the networks' upsamplers hold them
// (Conv2dWeightsOptions::packUpsamplePhases): the host's packing (the weights' host constructor) and the kernel's
// (packUpsamplePhaseFilters, what nn::ParameterStore runs after a load and a LoRA re-merge) agree bit for bit
// (the same fp32 sums of the same fp16 taps, in the same order), and both hold float64's sums within one fp16
// rounding. Layouts that cannot hold them are refused by name.
TEST_P(ConvTest, UpsamplePhaseFiltersMadeOnce) {
  const int cin = 24, cout = 40;
  Layer l = layer(cout, cin, k3, 64);
  ops::Conv2dWeightsOptions o;
  o.storage = DType::F16;
  o.packUpsamplePhases = true;
  o.name = "up conv";
  if (dt() != DType::F16) {
    o.storage = DType::F32;
    expectError([&] { ops::Conv2dWeights::allocate(ctx(), cout, cin, k3, o); }, {"up conv", "fp16 storage"});
    o.storage = DType::F16;
    expectError([&] { ops::Conv2dWeights::allocate(ctx(), 36, cin, k3, o); }, {"up conv", "multiples of 8"});
    expectError([&] { ops::Conv2dWeights::allocate(ctx(), cout, cin, Conv2dParams::square(3, 2), o); },
                {"up conv", "3x3 s1 p1 d1"});
    ops::Conv2dWeights plain = ops::Conv2dWeights::allocate(ctx(), cout, cin, k3, {.storage = DType::F16});
    EXPECT_FALSE(plain.hasUpsamplePhases());
    expectError([&] { (void)plain.upsamplePhases(); }, {"packUpsamplePhases"});
    return;
  }
  ops::Conv2dWeights w(ctx(), cout, cin, k3, l.w, l.b, o);
  ASSERT_TRUE(w.hasUpsamplePhases());
  const int64_t count = int64_t(16) * cin * cout;
  const std::vector<float> host = test::downloadFloats(ctx(), w.upsamplePhases(), count, DType::F16);
  CommandSequence seq(ctx());
  ops::packUpsamplePhaseFilters(ctx(), seq, w);
  seq.run();
  const std::vector<float> device = test::downloadFloats(ctx(), w.upsamplePhases(), count, DType::F16);
  ASSERT_EQ(host.size(), device.size());
  size_t differ = 0;
  for (size_t i = 0; i < host.size(); ++i) differ += host[i] != device[i];
  EXPECT_EQ(differ, 0u) << "of " << host.size() << " phase filter values";
  const std::vector<double> ref = phaseFilters(l.w, cout, cin);
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i)
    worst = std::max(worst, std::abs(device[i] - ref[i]) / std::max(1.0, std::abs(ref[i])));
  EXPECT_LE(worst, 1e-3);
}

// conv3x3(upsample2x(x)) on tensor cores: the phases where the rows of a phase are whole tiles (the rule's tile,
// forced candidates with a 128-wide tile and with split-K), the staged upsampling where they are not or where
// SDGEN_CONV_UPSAMPLE_PHASES=0; every result into a residual sink against float64 with the coop bar.
TEST_P(ConvTest, CoopUpsamplePhasesWhereSupported) {
  struct UpCase {
    const char* name;
    int n, h, w, cin, cout;  // x's size: the convolution reads its 2x upsampling
    std::optional<ops::ConvCandidate> candidate;
    bool phases;
    const char* env = nullptr;
    bool madeOnce = false;  // the weights hold their phase filters (packUpsamplePhaseFilters): no filter launch
  };
  const ops::ConvCandidate big{ConvAlgo::Coop, ops::ConvTile{128, 128, 0, 0}, 1};
  const ops::ConvCandidate split{ConvAlgo::Coop, ops::ConvTile{64, 64, 0, 0}, 2};
  const UpCase cases[] = {{"64 rows per phase, two images", 2, 4, 8, 16, 24, std::nullopt, true},
                          {"128x128, partial columns", 1, 8, 16, 64, 136, big, true},
                          {"split-K, K 1024", 1, 4, 16, 256, 72, split, true},
                          {"15 rows per phase: staged", 1, 3, 5, 16, 24, std::nullopt, false},
                          {"turned off: staged", 2, 4, 8, 16, 24, std::nullopt, false, "0"},
                          {"filters made once", 2, 4, 8, 16, 24, std::nullopt, true, nullptr, true},
                          {"filters made once, split-K", 1, 4, 16, 256, 72, split, true, nullptr, true}};
  const bool coop = ops::gemmCoopSupported(ctx().info()) && dt() == DType::F16;
  uint32_t seed = 1000;
  for (const UpCase& c : cases) {
    SCOPED_TRACE(c.name);
    Layer l = layer(c.cout, c.cin, k3, seed++);
    if (c.madeOnce && dt() == DType::F16) {
      ops::Conv2dWeightsOptions wo;
      wo.storage = DType::F16;
      wo.packUpsamplePhases = true;
      l.gpu = std::make_unique<ops::Conv2dWeights>(ctx(), c.cout, c.cin, k3, l.w, l.b, wo);
      CommandSequence pack(ctx());  // made again on the device, as nn::ParameterStore does
      ops::packUpsamplePhaseFilters(ctx(), pack, *l.gpu);
      pack.run();
    }
    const Expr in = upsample2x(input({c.n, c.h, c.w, c.cin}, seed++));
    const Shape os{c.n, 2 * c.h, 2 * c.w, c.cout};
    const Expr residual = input(os, seed++);
    std::vector<double> ref = referencePlusResidual(in, l, residual);
    TensorView out = output(os);
    CommandSequence seq(ctx());
    // Without tensor cores the general kernel reads the upsampling as an expression (Auto's Winograd in fp32
    // carries ~3e-4 at K 2304, over the fixture's 1e-4 bar for fp32).
    ops::Conv2dOptions o = options(coop ? ConvAlgo::Coop : ConvAlgo::General);
    if (coop && c.candidate) {
      o.algo = ConvAlgo::Auto;
      o.candidate = c.candidate;
    }
    if (c.env) setenv("SDGEN_CONV_UPSAMPLE_PHASES", c.env, 1);
    const ops::Conv2dInfo info = ops::conv2d(ctx(), seq, in, *l.gpu, residualAdd(bufferSink(out), residual), o);
    unsetenv("SDGEN_CONV_UPSAMPLE_PHASES");
    seq.run();
    const bool filterLaunch = !info.kernels.empty() && info.kernels[0].find("coop phase filters") != std::string::npos;
    const bool ranPhases = filterLaunch || (!info.kernels.empty() && info.kernels[0].find("coop phases") != std::string::npos);
    if (!coop) {  // CUDA cores: never by phases
      EXPECT_FALSE(ranPhases);
      compare(read(out), ref, std::string("upsampled ") + ops::convAlgoName(info.algo));
      continue;
    }
    EXPECT_EQ(ranPhases, c.phases) << info.kernels[0];
    if (c.phases) {
      const bool splitSum = info.kernels.back().find("coop split-K sum") != std::string::npos;
      EXPECT_EQ(filterLaunch, !c.madeOnce);
      const size_t gemm = filterLaunch ? 1 : 0;
      ASSERT_EQ(info.kernels.size(), gemm + 1 + (splitSum ? 1u : 0u));
      EXPECT_NE(info.kernels[gemm].find("coop phases"), std::string::npos) << info.kernels[gemm];
      EXPECT_EQ(splitSum, c.candidate && c.candidate->splitK > 1);
    } else {
      EXPECT_NE(info.kernels[0].find("coop input"), std::string::npos) << info.kernels[0];
    }
    const double err = test::errorOfScale(read(out), ref);
    EXPECT_LE(err, 5e-3);
    double& worst = maxErrors()[std::string("coop f16 upsampled (of max |ref|)")];
    worst = std::max(worst, err);
  }
}

}  // namespace
}  // namespace sdgen::conv_test
