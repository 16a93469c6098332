#pragma once
// The convolution tests' fixture (conv2d_test.cpp, conv2d_direct_test.cpp): layers with host copies of their
// weights, float64 references, the error bookkeeping, and the tensor-core case runner. A named namespace: the
// parameterized suite ConvTest is defined in two files and instantiated once (conv2d_test.cpp).
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

namespace sdgen::conv_test {

using namespace graph;
using ops::Conv2dParams;
using ops::ConvAlgo;

// Largest error seen per "algorithm dtype" (the first word of a check's description), printed after the tests
// (conv2d_test.cpp registers the report).
inline std::map<std::string, double>& maxErrors() {
  static std::map<std::string, double> m;
  return m;
}

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
inline void expectError(F&& f, std::initializer_list<const char*> parts) {
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
  // The reference of the conv of `in` into a residual-add sink: conv(in) + residual.
  std::vector<double> referencePlusResidual(const Expr& in, const Layer& l, const Expr& residual) {
    std::vector<double> ref = reference(in, l);
    const std::vector<double> res = test::evalReference(residual, mem_);
    for (size_t i = 0; i < ref.size(); ++i) ref[i] += res[i];
    return ref;
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

  // For the kernels that round a computed input to fp16 before their products where the weights are fp16 (the
  // tensor-core ones, tensorCoreCase below; the direct one's halo): with fp16 weights, a bar relative to the
  // output's scale, max |got - ref| / max |ref| <= 5e-3, recorded as "<algo> f16 (of max |ref|)"; with fp32
  // weights, compare's.
  double compareRoundedInput(const std::vector<float>& got, const std::vector<double>& ref, const std::string& what) {
    if (dt() != DType::F16) return compare(got, ref, what);
    const double err = test::errorOfScale(got, ref);
    EXPECT_LE(err, 5e-3) << what;
    double& worst = maxErrors()[what.substr(0, what.find(' ')) + " f16 (of max |ref|)"];
    worst = std::max(worst, err);
    return err;
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
      auto ref = referencePlusResidual(in, l, residual);
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
      compareRoundedInput(read(out), ref, what);
    }
    return true;
  }

  ops::Conv2dScratch scratch_{test::context()};
};

inline Conv2dParams geometry(int kh, int kw, int sh, int sw, int ph, int pw, int dh = 1, int dw = 1) {
  return {kh, kw, sh, sw, ph, pw, dh, dw};
}
inline const Conv2dParams k3 = Conv2dParams::square(3);

}  // namespace sdgen::conv_test
