// Convolution: every algorithm against a float64 CPU reference, in fp32 and fp16 storage (activations, weights
// and output in the same dtype; accumulation is fp32 on the GPU), on small shapes covering borders, odd sizes,
// strides, 1x1, dilation, no padding, batches, several tiles and every GEMM tile variant; fused input
// expressions and sinks; the algorithms agreeing with each other; contracts and shape errors.
//
// Error measure: max over elements of |gpu - ref| / max(1, |ref|); at most 1e-4 in fp32 and 5e-3 with fp16
// storage. Outputs are poisoned with NaN first, so an element no kernel wrote fails. The largest error per
// algorithm and dtype is printed after the run (per tile and test with CONV_DETAIL=1).
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>

#include "engine/command_sequence.h"
#include "graph/expr.h"
#include "engine/slang_compiler.h"
#include "ops/conv2d.h"
#include "ops/conv2d_candidates.h"
#include "ops/conv2d_kernels.h"
#include "ops/conv2d_winograd_math.h"
#include "tests/graph/tensor_fixture.h"
#include "ops/linear_gemm.h"
#include "ops/norm.h"
#include "tests/ops/conv2d_reference.h"
#include "tests/ops/gemm_coop_test_support.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using namespace graph;
using ops::Conv2dParams;
using ops::ConvAlgo;

// Largest error seen per "algorithm dtype" (the first word of a check's description), printed after the tests.
std::map<std::string, double>& maxErrors() {
  static std::map<std::string, double> m;
  return m;
}

class ConvErrorReport : public ::testing::Environment {
 public:
  void TearDown() override {
    for (auto& [k, v] : maxErrors()) std::printf("[conv2d] max relative error %-18s %.3g\n", k.c_str(), v);
  }
};
[[maybe_unused]] auto* const gReport = ::testing::AddGlobalTestEnvironment(new ConvErrorReport);

struct Case {
  const char* name;
  int n, h, w, cin, cout;
  Conv2dParams p;
};

// Host copy of a layer and its packing.
struct Layer {
  int cout = 0, cin = 0;
  Conv2dParams p;
  std::vector<float> w, b;
  std::unique_ptr<ops::Conv2dWeights> gpu;
};

// Runs `f` and checks that it throws sdgen::Error whose message contains every string in `parts`.
template <class F>
void expectError(F&& f, std::initializer_list<const char*> parts) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    for (const char* p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

class ConvTest : public test::TensorTest {
 protected:
  Layer layer(int cout, int cin, Conv2dParams p, uint32_t seed) {
    Layer l{cout, cin, p, test::randomFloats(size_t(cout) * cin * p.kh * p.kw, seed), test::randomFloats(cout, seed + 1)};
    // Weights representable in the storage type (an fp16 checkpoint): every layout then holds the same values
    // (Winograd's U is computed from them in double and kept in fp32).
    for (auto& x : l.w) x = test::roundTo(dt(), x);
    ops::Conv2dWeightsOptions o;
    o.storage = dt();
    l.gpu = std::make_unique<ops::Conv2dWeights>(ctx(), cout, cin, p, l.w, l.b, o);
    return l;
  }
  std::vector<double> reference(const Expr& in, const Layer& l) {
    return test::conv2dReference(test::evalReference(in, mem_), in.shape(), l.w, l.b, l.cout, l.p);
  }
  ops::Conv2dOptions options(ConvAlgo algo) {
    ops::Conv2dOptions o;
    o.algo = algo;
    o.scratch = &scratch_;
    return o;
  }

  // Max relative error of `got` against `ref` (same order); records it under `what` and checks the tolerance.
  double compare(const std::vector<float>& got, const std::vector<double>& ref, const std::string& what) {
    EXPECT_EQ(got.size(), ref.size());
    double worst = 0;
    size_t worstAt = 0;
    for (size_t i = 0; i < got.size() && i < ref.size(); ++i) {
      if (std::isnan(got[i])) {
        ADD_FAILURE() << what << ": element " << i << " not written (NaN), reference " << ref[i];
        return INFINITY;
      }
      double e = std::abs(got[i] - ref[i]) / std::max(1.0, std::abs(ref[i]));
      if (e > worst) worst = e, worstAt = i;
    }
    EXPECT_LE(worst, tolerance()) << what << ": element " << worstAt << " got " << got[worstAt] << ", reference "
                                  << ref[worstAt];
    std::string key = (std::getenv("CONV_DETAIL") ? what : what.substr(0, what.find(' '))) + " " + dtypeName(dt());
    maxErrors()[key] = std::max(maxErrors()[key], worst);
    maxError_ = std::max(maxError_, worst);
    return worst;
  }

  // One conv of `in` into a fresh NHWC buffer, checked against the reference.
  ops::Conv2dInfo check(const Expr& in, const Layer& l, ConvAlgo algo, int tileM = 0, int tileN = 0,
                        bool lanes = false) {
    TensorView out = output(ops::conv2dOutputShape(in.shape(), *l.gpu));
    CommandSequence seq(ctx());
    auto o = options(algo);
    o.tileM = tileM, o.tileN = tileN, o.lanes = lanes;
    ops::Conv2dInfo info = ops::conv2d(ctx(), seq, in, *l.gpu, bufferSink(out), o);
    EXPECT_EQ(info.algo, algo);
    seq.run();
    compare(read(out), reference(in, l), std::string(ops::convAlgoName(algo)) + " " + info.tile);
    return info;
  }
  void checkCases(const std::vector<Case>& cases, ConvAlgo algo) {
    uint32_t seed = 100;
    for (const Case& c : cases) {
      SCOPED_TRACE(c.name);
      Layer l = layer(c.cout, c.cin, c.p, seed++);
      check(input({c.n, c.h, c.w, c.cin}, seed++), l, algo);
    }
  }

  // One tensor-core case (coop, coop-winograd): on devices without tensor cores, or with fp32 weights, forcing
  // `algo` is a clear error naming the condition (returns false). Else the conv of a plain input (read raw) and
  // of a computed one (staged into fp16 scratch) into a residual sink, against float64: tensor cores multiply
  // fp16 operands and a computed input is rounded to fp16 where the other algorithms keep it in fp32, so the bar
  // is relative to the output's scale, max |got - ref| / max |ref| <= 5e-3 (with K = 9 * 64 products of O(1)
  // terms an element near 0 carries O(1e-2) absolute rounding). `kernels` checks each run's launches.
  // A group norm of x (+ SiLU) as a resnet block reads it: statistics computed on the host from x's values and
  // uploaded (the reference reads them), groups of Cin / 4 channels (32 where Cin % 32 == 0: SD's).
  Expr groupNormSilu(const Expr& x, uint32_t seed) {
    const Shape& s = x.shape();
    const int64_t cin = s[3], groups = cin % 32 == 0 ? 32 : cin / 4, cg = cin / groups;
    const std::vector<double> xv = test::evalReference(x, mem_);
    std::vector<float> stats(size_t(s[0] * groups * 2), 0.f);
    for (int64_t i = 0; i < int64_t(xv.size()); ++i) {
      const int64_t n = i / (s[1] * s[2] * cin), g = (i % cin) / cg;
      stats[size_t((n * groups + g) * 2)] += float(xv[size_t(i)]);
      stats[size_t((n * groups + g) * 2 + 1)] += float(xv[size_t(i)] * xv[size_t(i)]);
    }
    keep_.push_back(mem_.upload(ctx(), stats, DType::F32));
    const TensorView st = view(keep_.back(), DType::F32, {s[0], groups, 2});
    Expr gamma = input({cin}, seed, DType::F32, 0.5f, 1.5f), beta = input({cin}, seed + 1, DType::F32, -0.5f, 0.5f);
    return silu(ops::groupNormFromStats(x, st, int(groups), 1e-5f, gamma, beta));
  }

  // The input modes of tensorCoreCase: x read raw, an expression staged into fp16 (silu(x) + shift), a group
  // norm + SiLU of x (staged from a per-channel scale and shift table: ops/conv2d_input_affine.h).
  enum InputMode { kRaw, kStaged, kGroupNorm };
  static unsigned stagingLaunches(InputMode m) { return m == kRaw ? 0u : m == kStaged ? 1u : 2u; }

  bool tensorCoreCase(const Case& c, ConvAlgo algo, uint32_t& seed, int64_t bandTiles,
                      const std::function<void(const ops::Conv2dInfo&, InputMode, const Shape&)>& kernels,
                      std::optional<ops::ConvCandidate> candidate = std::nullopt) {
    const bool coop = ops::gemmCoopSupported(ctx().info());
    const std::string name = ops::convAlgoName(algo);
    Layer l = layer(c.cout, c.cin, c.p, seed++);
    Expr x = input({c.n, c.h, c.w, c.cin}, seed++), shift = input({c.cin}, seed++);
    if (!coop || dt() != DType::F16) {
      const std::string forced = "algorithm " + name + " was forced but its contract does not hold";
      expectError([&] { check(x, l, algo); },
                  {forced.c_str(), coop ? "not stored in fp16" : "no 16x16x16 f16 x f16 -> f32 subgroup matrices"});
      return false;
    }
    for (InputMode mode : {kRaw, kStaged, kGroupNorm}) {
      Expr in = mode == kStaged ? silu(x) + shift : mode == kGroupNorm ? groupNormSilu(x, seed++) : x;
      const Shape os = ops::conv2dOutputShape(in.shape(), *l.gpu);
      Expr residual = input(os, seed++);
      auto ref = reference(in, l);
      auto res = test::evalReference(residual, mem_);
      for (size_t i = 0; i < ref.size(); ++i) ref[i] += res[i];
      TensorView out = output(os);
      CommandSequence seq(ctx());
      auto o = options(algo);
      o.winogradBandTiles = bandTiles;
      if (candidate) {  // a forced candidate names its algorithm
        o.algo = ConvAlgo::Auto;
        o.candidate = candidate;
      }
      // These inputs are below the size where the table pays off (ops/conv2d_coop.cpp): forced on here.
      if (mode == kGroupNorm) setenv("SDGEN_CONV_FUSE_NORM", "1", 1);
      auto info = ops::conv2d(ctx(), seq, in, *l.gpu, residualAdd(bufferSink(out), residual), o);
      unsetenv("SDGEN_CONV_FUSE_NORM");
      seq.run();
      EXPECT_EQ(info.algo, algo);
      kernels(info, mode, os);
      const std::string what = name + " " + c.name + (candidate ? " " + candidate->name() : "") +
                               (mode == kRaw ? " raw" : mode == kStaged ? " staged" : " group norm");
      const double err = test::errorOfScale(read(out), ref);
      EXPECT_LE(err, 5e-3) << what;
      double& worst = maxErrors()[name + " f16 (of max |ref|)"];
      worst = std::max(worst, err);
    }
    return true;
  }

  ops::Conv2dScratch scratch_{test::context()};
};

Conv2dParams geometry(int kh, int kw, int sh, int sw, int ph, int pw, int dh = 1, int dw = 1) {
  return {kh, kw, sh, sw, ph, pw, dh, dw};
}
const Conv2dParams k3 = Conv2dParams::square(3);

TEST_P(ConvTest, GeneralAnyShape) {
  checkCases({
                 {"3x3, odd channels", 1, 5, 7, 3, 5, k3},
                 {"stride 2, batch 2", 2, 7, 6, 5, 6, Conv2dParams::square(3, 2)},
                 {"1x1", 1, 4, 5, 7, 3, Conv2dParams::square(1)},
                 {"dilation 2", 1, 7, 8, 3, 4, Conv2dParams::square(3, 1, 2)},
                 {"padding 0", 1, 6, 5, 2, 3, geometry(3, 3, 1, 1, 0, 0)},
                 {"5x5", 1, 6, 6, 3, 4, Conv2dParams::square(5)},
                 {"1x3 mixed stride/pad/dilation", 1, 6, 9, 3, 5, geometry(1, 3, 2, 1, 0, 1, 1, 2)},
                 {"several tiles in M, N and K", 2, 9, 9, 20, 70, k3},
                 {"narrow tile (Cout <= 16), several tiles in M", 2, 12, 13, 3, 5, k3},
                 {"single channel in and out", 1, 3, 4, 1, 1, k3},
             },
             ConvAlgo::General);
}

TEST_P(ConvTest, GemmV2) {
  checkCases({
                 {"3x3", 1, 5, 7, 8, 12, k3},
                 {"stride 2, batch 2", 2, 7, 6, 4, 8, Conv2dParams::square(3, 2)},
                 {"1x1", 1, 5, 5, 12, 8, Conv2dParams::square(1)},
                 {"dilation 2", 1, 7, 8, 4, 4, Conv2dParams::square(3, 1, 2)},
                 {"padding 0", 1, 6, 5, 8, 4, geometry(3, 3, 1, 1, 0, 0)},
                 {"1x3 mixed stride/pad/dilation", 1, 6, 9, 4, 8, geometry(1, 3, 2, 1, 0, 1, 1, 2)},
             },
             ConvAlgo::GemmV2);
}

TEST_P(ConvTest, GemmV2EveryTile) {
  // M = 162 rows, Cout = 136 and K = 180 (11.25 steps of 16): partial tiles on every axis for every variant.
  Layer l = layer(136, 20, k3, 7);
  Expr x = input({2, 9, 9, 20}, 8);
  for (const ops::ConvTile& t : ops::convTiles()) {
    SCOPED_TRACE(t.str());
    EXPECT_EQ(check(x, l, ConvAlgo::GemmV2, t.bm, t.bn).tile, t.str());
  }
}

// The CPU lanes kernel (gemmLanesMain) with every rows-per-lane and column-group count, on partial tiles in
// M, N and K, for GEMM v2 and Winograd (lavapipe has subgroup size 8; elsewhere the test has nothing to run).
TEST_P(ConvTest, LanesKernelEveryTile) {
  if (ctx().info().subgroupSize != 8) GTEST_SKIP() << "lanes kernels need subgroup size 8";
  Layer l = layer(76, 20, k3, 11);
  Expr x = input({2, 9, 9, 20}, 12);
  for (int tm : {8, 16, 32, 64})
    for (int tn : {32, 64}) {
      SCOPED_TRACE(std::to_string(tm) + "x" + std::to_string(tn));
      EXPECT_EQ(check(x, l, ConvAlgo::GemmV2, tm, tn, true).tile, ops::ConvTile::lanesTile(tm / 8, tn / 32).str());
      EXPECT_EQ(check(x, l, ConvAlgo::Winograd, tm, tn, true).tile, ops::ConvTile::lanesTile(tm / 8, tn / 32).str());
    }
}

TEST_P(ConvTest, Winograd) {
  checkCases({
                 {"one 4x4 tile", 1, 4, 4, 4, 4, k3},
                 {"image smaller than a tile", 1, 2, 3, 4, 8, k3},
                 {"partial tiles, batch 2", 2, 7, 9, 8, 12, k3},
                 {"several tiles in M, N and K", 1, 13, 6, 20, 68, k3},
             },
             ConvAlgo::Winograd);
  Layer l = layer(8, 8, k3, 9);
  check(input({1, 10, 11, 8}, 10), l, ConvAlgo::Winograd, 128, 128);  // a large tile over a partial GEMM
}

// Winograd F(4,3) in bands of tiles (ConvProblem::winogradBandTiles; forced small here, as the VAE's 512^2 and
// 1024^2 layers get by size): a fused input and a residual sink, band sizes that split a tile row, leave a
// partial last band, cross the batch boundary, or hold every tile; three launches per band, one scratch.
TEST_P(ConvTest, WinogradBands) {
  Layer l = layer(12, 8, k3, 50);
  Expr x = input({2, 9, 13, 8}, 51), shift = input({8}, 52);  // 2 x 3 x 4 = 24 tiles
  Expr in = silu(x) + shift;
  const Shape os{2, 9, 13, 12};
  Expr residual = input(os, 53);
  auto ref = reference(in, l);
  auto res = test::evalReference(residual, mem_);
  for (size_t i = 0; i < ref.size(); ++i) ref[i] += res[i];
  for (int64_t band : {1, 5, 7, 12, 24, 100}) {
    SCOPED_TRACE("band " + std::to_string(band));
    TensorView out = output(os);
    CommandSequence seq(ctx());
    auto o = options(ConvAlgo::Winograd);
    o.winogradBandTiles = band;
    ops::Conv2dInfo info = ops::conv2d(ctx(), seq, in, *l.gpu, residualAdd(bufferSink(out), residual), o);
    seq.run();
    const int64_t bands = (24 + std::min<int64_t>(band, 24) - 1) / std::min<int64_t>(band, 24);
    EXPECT_EQ(info.kernels.size(), size_t(3 * bands));
    const ops::ConvProblem prob{2, 9, 13, 8, 9, 13, 12, k3};
    EXPECT_EQ(info.scratchBytes, prob.winogradScratchBytes(std::min<int64_t>(band, 24)));
    compare(read(out), ref, "winograd bands");
  }
}

// The band of the default rule: every tile where V and M fit kWinogradBandBytes, else whole multiples of 256 tiles
// within it (the VAE's 256-channel layer at 1024^2, fp32: 65,536 tiles, 4.8 GB unbanded).
TEST(ConvWinogradBands, DefaultBandFitsTheBudget) {
  const Conv2dParams p3 = Conv2dParams::square(3);
  const ops::ConvProblem small{2, 64, 64, 320, 64, 64, 320, p3}, vae{1, 1024, 1024, 256, 1024, 1024, 256, p3};
  EXPECT_EQ(small.winogradBandTiles(), small.tiles());
  const int64_t band = vae.winogradBandTiles();
  EXPECT_EQ(band % 256, 0);
  EXPECT_LT(band, vae.tiles());
  EXPECT_LE(vae.winogradScratchBytes(band), ops::kWinogradBandBytes);
  EXPECT_GT(vae.winogradScratchBytes(band + 256), ops::kWinogradBandBytes);
  const ops::ConvProblem huge{1, 64, 64, 8192, 64, 64, 8192, p3};  // one tile over the budget: 256 tiles
  EXPECT_EQ(huge.winogradBandTiles(), 256);
  EXPECT_EQ(vae.winogradBandTiles(10), 10);
}

TEST_P(ConvTest, AlgorithmsAgree) {
  Layer l = layer(8, 12, k3, 11);
  Expr x = input({2, 6, 10, 12}, 12);
  std::vector<std::vector<float>> results;
  for (ConvAlgo a : {ConvAlgo::General, ConvAlgo::GemmV2, ConvAlgo::Winograd}) {
    TensorView out = output({2, 6, 10, 8});
    CommandSequence seq(ctx());
    ops::conv2d(ctx(), seq, x, *l.gpu, bufferSink(out), options(a));
    seq.run();
    results.push_back(read(out));
  }
  for (size_t a = 1; a < results.size(); ++a)
    compare(results[a], std::vector<double>(results[0].begin(), results[0].end()),
            std::string("agreement-with-general ") + std::to_string(a));
}

// Few output channels (the UNet's and the VAE's conv_out): every geometry the contract allows, several 16 x 16
// pixel blocks, partial blocks, channel slices past Cin (Cin 20: one full slice and a partial one), batch 2.
TEST_P(ConvTest, DirectFewOutputChannels) {
  checkCases({
                 {"3x3, Cout 3, partial blocks", 1, 19, 35, 8, 3, k3},
                 {"3x3, Cout 4, batch 2", 2, 17, 16, 20, 4, k3},
                 {"3x3 padding 0, Cout 1", 1, 18, 20, 4, 1, geometry(3, 3, 1, 1, 0, 0)},
                 {"1x1, Cout 2", 1, 9, 21, 12, 2, Conv2dParams::square(1)},
                 {"2x3 uneven padding", 1, 10, 12, 4, 3, geometry(2, 3, 1, 1, 1, 0)},
             },
             ConvAlgo::Direct);
}

// A computed input (silu(x) + shift: evaluated once per halo element) and a residual sink; what the contract
// rules out is refused by name.
TEST_P(ConvTest, DirectFusedAndContract) {
  Expr x = input({1, 20, 18, 16}, 40), shift = input({16}, 41), residual = input({1, 20, 18, 3}, 42);
  Expr in = silu(x) + shift;
  Layer l = layer(3, 16, k3, 43);
  auto ref = reference(in, l);
  auto res = test::evalReference(residual, mem_);
  for (size_t i = 0; i < ref.size(); ++i) ref[i] += res[i];
  TensorView out = output({1, 20, 18, 3});
  CommandSequence seq(ctx());
  auto info = ops::conv2d(ctx(), seq, in, *l.gpu, residualAdd(bufferSink(out), residual), options(ConvAlgo::Direct));
  seq.run();
  EXPECT_EQ(info.algo, ConvAlgo::Direct);
  compare(read(out), ref, "direct fused");

  Layer wide = layer(5, 8, k3, 44), strided = layer(3, 8, Conv2dParams::square(3, 2), 45);
  Layer odd = layer(3, 6, k3, 46);
  expectError([&] { check(input({1, 8, 8, 8}, 47), wide, ConvAlgo::Direct); }, {"algorithm direct", "Cout = 5"});
  expectError([&] { check(input({1, 8, 8, 8}, 48), strided, ConvAlgo::Direct); }, {"algorithm direct", "stride 1"});
  expectError([&] { check(input({1, 8, 8, 6}, 49), odd, ConvAlgo::Direct); }, {"algorithm direct", "Cin = 6"});
}

// The input channels split over workgroups (candidate "direct split P": where the 16 x 16 blocks are few, as for
// the UNet's conv_out): parts of whole 16-channel slices with a shorter last one (Cin 40 in 2 and 3 parts), a
// computed input, a residual sink, two images and partial blocks, against float64; the parts' sums are a second
// launch; what the split cannot run is refused by name.
TEST_P(ConvTest, DirectSplitOverInputChannels) {
  struct SplitCase { Case c; int parts; };
  const SplitCase cases[] = {{{"3x3 Cin 40", 2, 19, 17, 40, 4, k3}, 2},
                             {{"3x3 Cin 40", 2, 19, 17, 40, 4, k3}, 3},
                             {{"3x3 Cin 64 Cout 3", 1, 16, 20, 64, 3, k3}, 4},
                             {{"1x1 Cin 32 Cout 1", 1, 9, 21, 32, 1, Conv2dParams::square(1)}, 2}};
  uint32_t seed = 1000;
  for (const SplitCase& sc : cases) {
    const Case& c = sc.c;
    Expr x = input({c.n, c.h, c.w, c.cin}, seed++), shift = input({c.cin}, seed++);
    Expr in = silu(x) + shift, residual = input({c.n, c.h, c.w, c.cout}, seed++);
    Layer l = layer(c.cout, c.cin, c.p, seed++);
    auto ref = reference(in, l);
    auto res = test::evalReference(residual, mem_);
    for (size_t i = 0; i < ref.size(); ++i) ref[i] += res[i];
    TensorView out = output({c.n, c.h, c.w, c.cout});
    CommandSequence seq(ctx());
    ops::Conv2dOptions o = options(ConvAlgo::Auto);
    o.candidate = ops::ConvCandidate{ConvAlgo::Direct, ops::ConvTile{}, sc.parts};
    auto info = ops::conv2d(ctx(), seq, in, *l.gpu, residualAdd(bufferSink(out), residual), o);
    seq.run();
    EXPECT_EQ(info.candidate, "direct split " + std::to_string(sc.parts));
    ASSERT_EQ(info.kernels.size(), 2u);
    EXPECT_NE(info.kernels[0].find("direct 16x16 split " + std::to_string(sc.parts)), std::string::npos) << info.kernels[0];
    EXPECT_NE(info.kernels[1].find("direct split sum"), std::string::npos) << info.kernels[1];
    compare(read(out), ref, std::string("direct split ") + c.name + " in " + std::to_string(sc.parts));
  }
  // A group norm + SiLU input through its per-channel table (forced; SDXL's conv_out takes it by size): the table
  // and the partials live in different scratch slots, both read and written by the same launch.
  if (dt() == DType::F16) {
    Expr x = input({2, 18, 20, 48}, 1200);
    Expr in = groupNormSilu(x, 1201);
    Layer l = layer(4, 48, k3, 1202);
    auto ref = reference(in, l);
    TensorView out = output({2, 18, 20, 4});
    CommandSequence seq(ctx());
    ops::Conv2dOptions o = options(ConvAlgo::Auto);
    o.candidate = ops::ConvCandidate{ConvAlgo::Direct, ops::ConvTile{}, 3};
    // Scratch whose partials slot already holds room for both: were the partials there, they would overwrite
    // the table the same launch reads.
    ops::Conv2dScratch roomy(ctx());
    roomy.acquire(1 << 20, ops::Conv2dScratch::Slot::Partials);
    o.scratch = &roomy;
    setenv("SDGEN_CONV_FUSE_NORM", "1", 1);
    auto info = ops::conv2d(ctx(), seq, in, *l.gpu, bufferSink(out), o);
    unsetenv("SDGEN_CONV_FUSE_NORM");
    seq.run();
    ASSERT_EQ(info.kernels.size(), 3u);
    EXPECT_NE(info.kernels[0].find("direct affine"), std::string::npos) << info.kernels[0];
    compare(read(out), ref, "direct split 3 through the group norm's table");
  }
  EXPECT_EQ(ops::parseConvCandidate("direct split 8"), (ops::ConvCandidate{ConvAlgo::Direct, ops::ConvTile{}, 8}));
  EXPECT_FALSE(ops::parseConvCandidate("direct split 1"));
  EXPECT_FALSE(ops::parseConvCandidate("direct split"));
  Layer l = layer(4, 40, k3, 1100);
  Expr x = input({1, 8, 8, 40}, 1101);
  TensorView out = output({1, 8, 8, 4});
  CommandSequence seq(ctx());
  ops::Conv2dOptions o = options(ConvAlgo::Auto);
  o.candidate = ops::ConvCandidate{ConvAlgo::Direct, ops::ConvTile{}, 4};  // 3 slices of 16 channels
  expectError([&] { ops::conv2d(ctx(), seq, x, *l.gpu, bufferSink(out), o); },
              {"candidate 'direct split 4'", "more parts than 16-channel slices"});
  o.candidate = ops::ConvCandidate{ConvAlgo::Direct, ops::ConvTile{}, 2};
  o.scratch = nullptr;
  expectError([&] { ops::conv2d(ctx(), seq, x, *l.gpu, bufferSink(out), o); },
              {"candidate 'direct split 2'", "needs scratch memory"});
}

// A group norm + SiLU input (the VAE's conv_out) read through its per-channel table where x is raw fp16 (forced
// here: the default takes it from 4 M elements, ops/conv2d_input_affine.h), two images, against float64.
TEST_P(ConvTest, DirectReadsGroupNormThroughItsTable) {
  Expr x = input({2, 18, 20, 16}, 60);
  Expr in = groupNormSilu(x, 61);
  Layer l = layer(3, 16, k3, 62);
  auto ref = reference(in, l);
  TensorView out = output({2, 18, 20, 3});
  CommandSequence seq(ctx());
  setenv("SDGEN_CONV_FUSE_NORM", "1", 1);
  auto info = ops::conv2d(ctx(), seq, in, *l.gpu, bufferSink(out), options(ConvAlgo::Direct));
  unsetenv("SDGEN_CONV_FUSE_NORM");
  seq.run();
  EXPECT_EQ(info.algo, ConvAlgo::Direct);
  const bool table = dt() == DType::F16;  // the table's expression reads x raw as fp16
  ASSERT_EQ(info.kernels.size(), table ? 2u : 1u);
  if (table) {
    EXPECT_NE(info.kernels[0].find("direct affine"), std::string::npos) << info.kernels[0];
  }
  compare(read(out), ref, "direct group norm");
}

TEST_P(ConvTest, FusedInputAndResidualSink) {
  // in = silu(x) + per-channel shift; out = conv(in) + residual.
  Expr x = input({1, 6, 7, 8}, 20), shift = input({8}, 21), residual = input({1, 6, 7, 12}, 22);
  Expr in = silu(x) + shift;
  Layer l = layer(12, 8, k3, 23);
  auto ref = reference(in, l);
  auto res = test::evalReference(residual, mem_);
  for (size_t i = 0; i < ref.size(); ++i) ref[i] += res[i];
  for (ConvAlgo a : {ConvAlgo::General, ConvAlgo::GemmV2, ConvAlgo::Winograd}) {
    SCOPED_TRACE(ops::convAlgoName(a));
    TensorView out = output({1, 6, 7, 12});
    CommandSequence seq(ctx());
    auto info = ops::conv2d(ctx(), seq, in, *l.gpu, residualAdd(bufferSink(out), residual), options(a));
    seq.run();
    if (a != ConvAlgo::General) {
      EXPECT_GT(info.nativeVectorNodes, 0);
      EXPECT_EQ(info.scalarWrappedNodes, 0);
    }
    compare(read(out), ref, std::string(ops::convAlgoName(a)) + " fused");
  }
}

TEST_P(ConvTest, FusedConcatUpsampleInputAndNchwSink) {
  // in = concat(upsample2x(a), b) along channels (2 + 6: the split is not a multiple of 4, so the vector
  // kernels read it with scalar accesses); the sink permutes to NCHW.
  Expr a = input({2, 3, 4, 2}, 30), b = input({2, 6, 8, 6}, 31);
  Expr in = concat(upsample2x(a), b, 3);
  Layer l = layer(4, 8, k3, 32);
  auto ref = reference(in, l);
  for (ConvAlgo algo : {ConvAlgo::General, ConvAlgo::GemmV2, ConvAlgo::Winograd}) {
    SCOPED_TRACE(ops::convAlgoName(algo));
    TensorView out = output({2, 4, 6, 8});  // NCHW
    CommandSequence seq(ctx());
    auto info = ops::conv2d(ctx(), seq, in, *l.gpu, permute(bufferSink(out), {0, 3, 1, 2}), options(algo));
    seq.run();
    if (algo != ConvAlgo::General) {
      EXPECT_GT(info.scalarWrappedNodes, 0);
    }
    std::vector<float> nchw = read(out), nhwc(nchw.size());
    for (int n = 0; n < 2; ++n)
      for (int c = 0; c < 4; ++c)
        for (int y = 0; y < 6; ++y)
          for (int x = 0; x < 8; ++x) nhwc[((n * 6 + y) * 8 + x) * 4 + c] = nchw[((n * 4 + c) * 6 + y) * 8 + x];
    compare(nhwc, ref, std::string(ops::convAlgoName(algo)) + " fused");
  }
}

TEST_P(ConvTest, MixedActivationAndWeightStorage) {
  // Weights in the parameter's dtype, activations in the other one, output in fp32.
  const DType other = dt() == DType::F16 ? DType::F32 : DType::F16;
  Layer l = layer(8, 4, k3, 80);
  Expr x = input({1, 5, 6, 4}, 81, other);
  auto ref = reference(x, l);
  for (ConvAlgo a : {ConvAlgo::General, ConvAlgo::GemmV2, ConvAlgo::Winograd}) {
    SCOPED_TRACE(ops::convAlgoName(a));
    TensorView out = output({1, 5, 6, 8}, DType::F32);
    CommandSequence seq(ctx());
    ops::conv2d(ctx(), seq, x, *l.gpu, bufferSink(out), options(a));
    seq.run();
    compare(read(out), ref, std::string(ops::convAlgoName(a)) + " mixed");
  }
}

TEST_P(ConvTest, ChainedWinogradConvsShareScratch) {
  // Two Winograd convs in one sequence reuse the same scratch memory; the second reads the first's output.
  Layer l1 = layer(8, 4, k3, 40), l2 = layer(4, 8, k3, 41);
  Expr x = input({1, 5, 6, 4}, 42);
  TensorView mid = output({1, 5, 6, 8}), out = output({1, 5, 6, 4});
  CommandSequence seq(ctx());
  ops::conv2d(ctx(), seq, x, *l1.gpu, bufferSink(mid), options(ConvAlgo::Winograd));
  ops::conv2d(ctx(), seq, buffer(mid), *l2.gpu, bufferSink(out), options(ConvAlgo::Winograd));
  seq.run();
  auto r1 = reference(x, l1);
  for (auto& v : r1) v = test::roundTo(dt(), float(v));  // mid is stored in the storage dtype
  auto r2 = test::conv2dReference(r1, {1, 5, 6, 8}, l2.w, l2.b, 4, k3);
  compare(read(out), r2, "winograd chained");
}

// Tensor cores (algorithm coop, fp16 weights): 3x3 stride 1 and 2, 1x1, partial tiles, a computed input
// (staged into fp16 scratch), a group norm + SiLU (staged from its per-channel table) and a plain one (read
// raw), a residual sink, against float64 (tensorCoreCase).
TEST_P(ConvTest, CoopWhereSupported) {
  const Case cases[] = {{"3x3", 2, 9, 11, 16, 24, k3},
                        {"3x3 stride 2", 1, 13, 10, 8, 40, Conv2dParams::square(3, 2)},
                        {"1x1", 1, 7, 5, 32, 16, Conv2dParams::square(1)},
                        {"3x3 wide", 1, 12, 12, 64, 136, k3},
                        {"3x3 deep", 1, 5, 4, 256, 72, k3},  // few rows, K 2304: split-K (chooseSplitK)
                        // Cin 40: a 32-deep K slice crosses a tap boundary at a different k per invocation (the
                        // im2col tap walk); 3x5 taps, dilation 2 x 1 and stride 1 x 2 (the walk's row and column steps).
                        {"3x5 d2x1 s1x2 Cin 40", 1, 11, 13, 40, 24, geometry(3, 5, 1, 2, 2, 2, 2, 1)}};
  uint32_t seed = 700;
  for (const Case& c : cases) {
    const bool ran = tensorCoreCase(c, ConvAlgo::Coop, seed, 0, [&](const ops::Conv2dInfo& info, InputMode mode, const Shape&) {
      const bool split = info.kernels.back().find("coop split-K sum") != std::string::npos;
      EXPECT_EQ(info.kernels.size(), 1u + stagingLaunches(mode) + (split ? 1u : 0u));
      // A group norm is staged from its per-channel table (one small launch first), any other expression directly.
      if (mode != kRaw) {
        EXPECT_NE(info.kernels[0].find(mode == kGroupNorm ? "coop affine" : "coop input"), std::string::npos)
            << info.kernels[0];
      }
      if (std::string(c.name) == "3x3 deep") {
        EXPECT_TRUE(split);
      }
    });
    if (!ran) return;
  }
}

// The 128x128 tile with K split in parts (an autotune candidate where such tiles are few: the VAE's 64^2
// level), forced on a few-row, deep-K convolution with partial tiles.
TEST_P(ConvTest, CoopBigTileSplitKWhereSupported) {
  const Case c{"3x3 deep", 1, 5, 4, 256, 136, k3};  // 20 rows, Cout 136: partial 128x128 tiles; K 2304
  uint32_t seed = 800;
  for (int parts : {2, 4}) {
    const ops::ConvCandidate cand{ConvAlgo::Coop, ops::ConvTile{128, 128, 0, 0}, parts};
    const bool ran = tensorCoreCase(c, ConvAlgo::Coop, seed, 0, [&](const ops::Conv2dInfo& info, InputMode, const Shape&) {
      EXPECT_EQ(info.candidate, cand.name());
      EXPECT_NE(info.kernels.back().find("coop split-K sum"), std::string::npos) << info.kernels.back();
    }, cand);
    if (!ran) return;
  }
}

// Winograd F(2,3) on tensor cores (coop-winograd, fp16 weights): odd output sizes (partial 2x2 tiles and GEMM
// tiles), two images, Cout not a multiple of the 128-wide tile, a deep K, several bands of tiles, raw and staged
// inputs, a residual sink, against float64 with the coop bar (tensorCoreCase).
TEST_P(ConvTest, CoopWinogradWhereSupported) {
  struct WinoCase {
    Case c;
    int64_t bandTiles;
  };
  const WinoCase cases[] = {{{"odd", 2, 9, 11, 16, 24, k3}, 0},
                            {{"wide", 1, 12, 12, 64, 136, k3}, 0},
                            {{"deep", 1, 6, 5, 256, 72, k3}, 0},
                            {{"banded", 1, 30, 34, 32, 128, k3}, 64}};  // 255 tiles in bands of 64
  uint32_t seed = 900;
  for (const WinoCase& wc : cases) {
    const Case& c = wc.c;
    const bool ran = tensorCoreCase(c, ConvAlgo::CoopWinograd, seed, wc.bandTiles,
                                    [&](const ops::Conv2dInfo& info, InputMode mode, const Shape& os) {
      const int64_t tiles = int64_t(c.n) * ((os[1] + 1) / 2) * ((os[2] + 1) / 2);
      const int64_t bands = wc.bandTiles ? (tiles + wc.bandTiles - 1) / wc.bandTiles : 1;
      // [staged input,] filter transform, then a GEMM and an output transform per band.
      EXPECT_EQ(info.kernels.size(), size_t(1 + stagingLaunches(mode) + 2 * bands)) << c.name;
    });
    if (!ran) return;
  }
}

TEST_P(ConvTest, AutoSelection) {
  Layer l3 = layer(8, 8, k3, 50), l1x1 = layer(8, 8, Conv2dParams::square(1), 51), odd = layer(4, 3, k3, 52);
  Expr x = input({1, 4, 4, 8}, 53), x3 = input({1, 4, 4, 3}, 54);
  TensorView out8 = output({1, 4, 4, 8}), out4 = output({1, 4, 4, 4});
  CommandSequence seq(ctx());
  auto o = options(ConvAlgo::Auto);
  if (ops::gemmCoopSupported(ctx().info()) && dt() == DType::F16) {
    // Tensor cores (fp16 weights): coop wherever Cin and Cout are multiples of 8, listed first when skipped.
    EXPECT_EQ(ops::conv2d(ctx(), seq, x, *l3.gpu, bufferSink(out8), o).algo, ConvAlgo::Coop);
    EXPECT_EQ(ops::conv2d(ctx(), seq, x, *l1x1.gpu, bufferSink(out8), o).algo, ConvAlgo::Coop);
    auto info = ops::conv2d(ctx(), seq, x3, *odd.gpu, bufferSink(out4), o);
    EXPECT_EQ(info.algo, ConvAlgo::General);
    ASSERT_EQ(info.skipped.size(), 3u);
    EXPECT_NE(info.skipped[0].find("coop: Cin = 3 is not a multiple of 8"), std::string::npos) << info.skipped[0];
    return;
  }
  EXPECT_EQ(ops::conv2d(ctx(), seq, x, *l3.gpu, bufferSink(out8), o).algo, ConvAlgo::Winograd);
  auto info = ops::conv2d(ctx(), seq, x, *l1x1.gpu, bufferSink(out8), o);
  EXPECT_EQ(info.algo, ConvAlgo::GemmV2);
  ASSERT_EQ(info.skipped.size(), 1u);
  EXPECT_NE(info.skipped[0].find("not 3x3 s1 p1 d1"), std::string::npos) << info.skipped[0];
  info = ops::conv2d(ctx(), seq, x3, *odd.gpu, bufferSink(out4), o);
  EXPECT_EQ(info.algo, ConvAlgo::General);
  EXPECT_EQ(info.skipped.size(), 2u);
  o.scratch = nullptr;
  info = ops::conv2d(ctx(), seq, x, *l3.gpu, bufferSink(out8), o);
  EXPECT_EQ(info.algo, ConvAlgo::GemmV2);
  EXPECT_NE(info.skipped.at(0).find("no scratch"), std::string::npos);
  EXPECT_EQ(info.kernels.size(), 1u);

  // Weights packed for Winograd only: Auto still runs (Winograd), the gemm algorithms refuse.
  ops::Conv2dWeightsOptions winogradOnly;
  winogradOnly.storage = dt();
  winogradOnly.packGemm = false;
  ops::Conv2dWeights w(ctx(), 8, 8, k3, l3.w, l3.b, winogradOnly);
  EXPECT_FALSE(w.hasGemm());
  o = options(ConvAlgo::Auto);
  info = ops::conv2d(ctx(), seq, x, w, bufferSink(out8), o);
  EXPECT_EQ(info.algo, ConvAlgo::Winograd);
  EXPECT_EQ(info.kernels.size(), 3u);
  EXPECT_GT(info.scratchBytes, 0u);
  expectError([&] { ops::conv2d(ctx(), seq, x, w, bufferSink(out8), options(ConvAlgo::General)); },
              {"packed without the gemm layout"});
}

TEST_P(ConvTest, ForcedAlgorithmWithViolatedContractThrows) {
  Layer odd = layer(4, 3, k3, 60), s2 = layer(4, 4, Conv2dParams::square(3, 2), 61), ok = layer(4, 4, k3, 62);
  Expr x3 = input({1, 4, 4, 3}, 63), x4 = input({1, 4, 4, 4}, 64);
  TensorView o44 = output({1, 4, 4, 4}), o22 = output({1, 2, 2, 4});
  CommandSequence seq(ctx());
  expectError([&] { ops::conv2d(ctx(), seq, x3, *odd.gpu, bufferSink(o44), options(ConvAlgo::GemmV2)); },
              {"gemm-v2", "Cin = 3 is not a multiple of 4"});
  expectError([&] { ops::conv2d(ctx(), seq, x3, *odd.gpu, bufferSink(o44), options(ConvAlgo::Winograd)); },
              {"winograd", "Cin = 3"});
  expectError([&] { ops::conv2d(ctx(), seq, x4, *s2.gpu, bufferSink(o22), options(ConvAlgo::Winograd)); },
              {"3x3 s2 p1 d1 is not 3x3 s1 p1 d1"});
  auto noScratch = options(ConvAlgo::Winograd);
  noScratch.scratch = nullptr;
  expectError([&] { ops::conv2d(ctx(), seq, x4, *ok.gpu, bufferSink(o44), noScratch); }, {"no scratch"});
  auto badTile = options(ConvAlgo::GemmV2);
  badTile.tileM = 32, badTile.tileN = 32;
  expectError([&] { ops::conv2d(ctx(), seq, x4, *ok.gpu, bufferSink(o44), badTile); }, {"no GEMM tile 32x32"});
  EXPECT_EQ(seq.dispatchCount(), 0u);
}

TEST_P(ConvTest, MisshapedWeightsAndSinksThrow) {
  std::vector<float> w(4 * 4 * 9), b(4);
  ops::Conv2dWeightsOptions o;
  o.storage = dt();
  o.name = "unet.conv_in";
  expectError([&] { ops::Conv2dWeights(ctx(), 4, 4, k3, std::span(w).first(30), b, o); },
              {"unet.conv_in", "expected 144 weights", "[4,4,3,3]", "got 30"});
  expectError([&] { ops::Conv2dWeights(ctx(), 4, 4, k3, w, std::span(b).first(3), o); }, {"bias", "got 3"});
  ops::Conv2dWeights good(ctx(), 4, 4, k3, w, b, o);
  Expr x = input({1, 5, 6, 4}, 70), x8 = input({1, 5, 6, 8}, 71);
  TensorView wrong = output({1, 5, 5, 4}), right = output({1, 5, 6, 4});
  CommandSequence seq(ctx());
  expectError([&] { ops::conv2d(ctx(), seq, x, good, bufferSink(wrong)); },
              {"output sink has shape [1,5,5,4], expected [1,5,6,4]", "input [1,5,6,4]"});
  expectError([&] { ops::conv2d(ctx(), seq, x8, good, bufferSink(right)); },
              {"input [1,5,6,8] has 8 channels", "Cin = 4"});
  expectError([&] { ops::conv2d(ctx(), seq, reshape(x, {30, 4}), good, bufferSink(right)); }, {"NHWC", "[30,4]"});
  expectError([&] { ops::conv2d(ctx(), seq, buffer(right), good, bufferSink(right)); }, {"in-place"});
  expectError([&] { ops::conv2dOutputShape({1, 1, 1, 4}, ops::Conv2dWeights(ctx(), 4, 4, geometry(3, 3, 1, 1, 0, 0), w, b, o)); },
              {"smaller than the (dilated) kernel"});
  EXPECT_EQ(seq.dispatchCount(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Conv, ConvTest, ::testing::Values(DType::F32, DType::F16),
                         [](const auto& info) { return std::string(dtypeName(info.param)); });

}  // namespace
}  // namespace sdgen
