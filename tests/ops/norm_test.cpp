// Group norm, layer norm, softmax, timestep embedding and classifier-free guidance against float64 references,
// fp32 and fp16 storage, shapes whose channel counts are not multiples of 4.
#include <cmath>
#include <cstdlib>

#include "engine/command_sequence.h"
#include "ops/elementwise.h"
#include "ops/group_norm_rows.h"
#include "ops/group_norm_tiles.h"
#include "ops/guidance.h"
#include "ops/layer_norm_rows.h"
#include "ops/norm.h"
#include "ops/softmax.h"
#include "ops/timestep_embedding.h"
#include "tests/graph/tensor_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using namespace graph;

// float64 group norm of x * scale + offset (NHWC, `s` = [N, H, W, C], eps 1e-5) with gamma * gammaScale and beta,
// then SiLU where `silu`.
std::vector<double> groupNormReference(const std::vector<double>& x, const Shape& s, int groups, double scale,
                                       double offset, const std::vector<double>& gamma, double gammaScale,
                                       const std::vector<double>& beta, bool silu) {
  const int64_t n = s[0], p = s[1] * s[2], c = s[3], cg = c / groups;
  std::vector<double> ref(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int g = 0; g < groups; ++g) {
      double m = 0, v = 0;
      auto at = [&](int64_t i, int64_t j) { return (b * p + i) * c + g * cg + j; };
      for (int64_t i = 0; i < p; ++i)
        for (int64_t j = 0; j < cg; ++j) m += x[at(i, j)] * scale + offset;
      m /= double(p * cg);
      for (int64_t i = 0; i < p; ++i)
        for (int64_t j = 0; j < cg; ++j) v += std::pow(x[at(i, j)] * scale + offset - m, 2);
      const double rstd = 1 / std::sqrt(v / double(p * cg) + 1e-5);
      for (int64_t i = 0; i < p; ++i)
        for (int64_t j = 0; j < cg; ++j) {
          const double y =
              (x[at(i, j)] * scale + offset - m) * rstd * gammaScale * gamma[g * cg + j] + beta[g * cg + j];
          ref[at(i, j)] = silu ? y / (1 + std::exp(-y)) : y;
        }
    }
  return ref;
}

class NormOps : public test::TensorTest {
 protected:
  double tol() const { return tolerance(); }
  // Uploads values rounded to the storage type (dt(), or `t` when !useParam); `seen` gets what the GPU holds.
  Expr input(const Shape& s, uint32_t seed, std::vector<double>* seen, float lo = -2, float hi = 2, DType t = DType::F32,
             bool useParam = true) {
    DType d = useParam ? dt() : t;
    auto v = test::randomFloats(numel(s), seed, lo, hi);
    keep_.push_back(test::uploadFloats(ctx(), v, d));
    seen->clear();
    for (float x : v) seen->push_back(test::roundTo(d, x));
    return buffer(view(keep_.back(), d, s));
  }
  void compare(const std::vector<float>& got, const std::vector<double>& ref, double tolerance) {
    ASSERT_EQ(got.size(), ref.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_FALSE(std::isnan(got[i])) << i;
      ASSERT_LE(std::abs(got[i] - ref[i]), tolerance * std::max(1.0, std::abs(ref[i])))
          << "element " << i << ": got " << got[i] << " reference " << ref[i];
      maxError_ = std::max(maxError_, std::abs(got[i] - ref[i]) / std::max(1.0, std::abs(ref[i])));
    }
  }
};

TEST_P(NormOps, GroupNormWithSiluInTheConsumer) {
  struct Case {
    int n, h, w, c, g;
  };
  for (Case k : {Case{2, 3, 5, 12, 4}, Case{1, 4, 4, 64, 32}, Case{2, 2, 3, 40, 4}}) {
    std::vector<double> x, gamma, beta;
    Expr ex = input({k.n, k.h, k.w, k.c}, 1 + k.c, &x, -3, 5);
    Expr eg = input({k.c}, 2, &gamma, 0.5, 1.5, DType::F32, false);
    Expr eb = input({k.c}, 3, &beta, -0.5, 0.5, DType::F32, false);
    TensorView stats = output({k.n * k.g * 2}, DType::F32);
    TensorView out = output({k.n, k.h, k.w, k.c}, dt());
    CommandSequence seq(ctx());
    Expr normalized = ops::groupNorm(ctx(), seq, ex, k.g, 1e-5f, eg, eb, stats);
    ops::elementwise(ctx(), seq, silu(normalized), bufferSink(out));
    seq.run();
    compare(read(out), groupNormReference(x, {k.n, k.h, k.w, k.c}, k.g, 1, 0, gamma, 1, beta, true), tol());
  }
}

TEST_P(NormOps, LayerNorm) {
  for (Shape s : {Shape{2, 7, 33}, Shape{3, 768}, Shape{1, 5, 40}}) {
    std::vector<double> x, gamma, beta;
    int64_t d = s.back(), rows = numel(s) / d;
    Expr ex = input(s, uint32_t(d), &x, -1, 3);
    Expr eg = input({d}, 5, &gamma, 0.5, 1.5, DType::F32, false);
    Expr eb = input({d}, 6, &beta, -0.5, 0.5, DType::F32, false);
    TensorView stats = output({rows * 2}, DType::F32), out = output(s, dt());
    CommandSequence seq(ctx());
    ops::elementwise(ctx(), seq, ops::layerNorm(ctx(), seq, ex, 1e-5f, eg, eb, stats), bufferSink(out));
    seq.run();
    std::vector<double> ref(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      double m = 0, v = 0;
      for (int64_t i = 0; i < d; ++i) m += x[r * d + i];
      m /= d;
      for (int64_t i = 0; i < d; ++i) v += std::pow(x[r * d + i] - m, 2);
      double rstd = 1 / std::sqrt(v / d + 1e-5);
      for (int64_t i = 0; i < d; ++i) ref[r * d + i] = (x[r * d + i] - m) * rstd * gamma[i] + beta[i];
    }
    compare(read(out), ref, tol());
  }
}

// The one-launch layer norm (statistics and normalization together; what the UNet's transformer blocks use on
// tensor-core devices): rows as wide as the kernel takes (2048), the UNet's widths, a computed input and gamma,
// rows past one grid axis' worth of the register words (D 40: most invocations idle), against float64.
TEST_P(NormOps, LayerNormRowsInOneLaunch) {
  // Both kernels: one subgroup per row where the lanes hold the row (here: lavapipe's 8 lanes, D <= 512; the
  // layouts of other subgroup sizes below) and one workgroup per row (SDGEN_LAYER_NORM_ROWS=workgroup).
  DeviceInfo info;
  info.minSubgroupSize = info.maxSubgroupSize = info.subgroupSize = 32;  // NVIDIA
  EXPECT_EQ(ops::layerNormRowsLayout(info, 320).rows, 8);
  EXPECT_EQ(ops::layerNormRowsLayout(info, 320).quadsPerLane, 3);
  EXPECT_EQ(ops::layerNormRowsLayout(info, 2048).quadsPerLane, 16);
  info.maxSubgroupSize = 64;  // a device that may run 32 or 64 lanes: rows for 64, words for 32
  EXPECT_EQ(ops::layerNormRowsLayout(info, 1280).rows, 4);
  EXPECT_EQ(ops::layerNormRowsLayout(info, 1280).quadsPerLane, 10);
  info.minSubgroupSize = info.maxSubgroupSize = info.subgroupSize = 8;
  EXPECT_EQ(ops::layerNormRowsLayout(info, 512).quadsPerLane, 16);
  EXPECT_EQ(ops::layerNormRowsLayout(info, 516).rows, 0);  // 17 words per lane: the workgroup kernel
  info.minSubgroupSize = info.maxSubgroupSize = info.subgroupSize = 0;
  EXPECT_EQ(ops::layerNormRowsLayout(info, 320).rows, 0);
  for (bool workgroup : {false, true})
    for (Shape s : {Shape{2, 7, 320}, Shape{3, 2048}, Shape{5, 40}, Shape{1, 9, 1280}, Shape{37, 512}}) {
      SCOPED_TRACE(shapeString(s) + (workgroup ? " workgroup per row" : ""));
      if (workgroup) setenv("SDGEN_LAYER_NORM_ROWS", "workgroup", 1);
      std::vector<double> x, gamma, beta;
      int64_t d = s.back(), rows = numel(s) / d;
      Expr ex = input(s, uint32_t(d) + 7, &x, -1, 3);
      Expr eg = input({d}, 8, &gamma, 0.5, 1.5, DType::F32, false);
      Expr eb = input({d}, 9, &beta, -0.5, 0.5, DType::F32, false);
      TensorView out = output(s, dt());
      CommandSequence seq(ctx());
      // x * 0.5 + 1 and gamma * 2: expressions, not only buffers, are read.
      ops::layerNormRows(ctx(), seq, ex * constant(0.5f) + constant(1.f), eg * constant(2.f), eb, 1e-5f, out,
                         "ln rows");
      unsetenv("SDGEN_LAYER_NORM_ROWS");
      seq.run();
      std::vector<double> ref(x.size());
      for (int64_t r = 0; r < rows; ++r) {
        double m = 0, v = 0;
        for (int64_t i = 0; i < d; ++i) m += x[r * d + i] * 0.5 + 1;
        m /= d;
        for (int64_t i = 0; i < d; ++i) v += std::pow(x[r * d + i] * 0.5 + 1 - m, 2);
        double rstd = 1 / std::sqrt(v / d + 1e-5);
        for (int64_t i = 0; i < d; ++i) ref[r * d + i] = (x[r * d + i] * 0.5 + 1 - m) * rstd * 2 * gamma[i] + beta[i];
      }
      compare(read(out), ref, tol());
    }
  // Rows the kernel cannot hold: an error naming the op and the shape, nothing recorded.
  std::vector<double> x, g;
  for (Shape s : {Shape{2, 30}, Shape{2, 4096}}) {
    Expr ex = input(s, 3, &x), eg = input({s[1]}, 4, &g, 0.5, 1.5, DType::F32, false);
    TensorView out = output(s, dt());
    CommandSequence seq(ctx());
    test::expectErrorContaining([&] { ops::layerNormRows(ctx(), seq, ex, eg, eg, 1e-5f, out, "ln rows"); },
                                "ln rows: the one-launch layer norm needs rows of a multiple of 4 elements up to 2048");
  }
}

TEST_P(NormOps, GroupNormRowsInOneLaunch) {
  // Groups of 4 channels and more (read 4 at a time), of 10, 3 and 2 (one at a time, some sharing a 16-byte
  // word with their neighbours), the widest group the kernel takes (256 channels: every invocation a column),
  // SiLU on and off; workgroups of 256 invocations and, past 4096 elements per group (272 x 40, 1600 x 3), of 1024.
  // Each case read raw and as the expression x * 0.5 + 1, both ways against float64: with each invocation's
  // pixels held in registers where they fit (all but the last case, 4096 pixels of 12 channels: 52 values per
  // invocation) and with SDGEN_GROUP_NORM_HELD=0 (the two-pass loop). The two add the same terms in the same
  // order, but a driver may contract them into FMAs differently (the H200's did: 1 ulp apart), so they are not
  // compared bit for bit.
  EXPECT_EQ(ops::groupNormRowsHeld(1024, 30, 1, 1024), 31);  // SD 1.x's 32^2 level, 960 channels: 31 pixels held
  EXPECT_EQ(ops::groupNormRowsHeld(4096, 10, 1, 1024), 0);   // its 64^2 level: 41 pixels, over the cap of 32
  EXPECT_EQ(ops::groupNormRowsHeld(4096, 12, 4, 1024), 0);   // 52 fp32 values
  EXPECT_EQ(ops::groupNormRowsHeld(16, 4, 4, 256), 1);
  struct Case {
    Shape s;
    int groups;
    bool silu;
  };
  for (const Case& k : {Case{{2, 4, 4, 32}, 8, true}, Case{{1, 3, 5, 30}, 3, false}, Case{{2, 8, 8, 64}, 32, true},
                        Case{{1, 2, 3, 1024}, 4, false}, Case{{2, 9, 7, 24}, 8, true}, Case{{1, 17, 16, 160}, 4, true},
                        Case{{1, 40, 40, 24}, 8, false}, Case{{2, 6, 5, 40}, 4, true}, Case{{1, 4, 4, 12}, 6, false},
                        Case{{1, 64, 64, 24}, 2, true}})
    for (bool raw : {true, false}) {
      SCOPED_TRACE(shapeString(k.s) + (raw ? " raw" : " computed"));
      std::vector<double> x, gamma, beta;
      const int64_t c = k.s[3];
      Expr ex = input(k.s, uint32_t(c) + 11, &x, -1, 3);
      Expr eg = input({c}, 12, &gamma, 0.5, 1.5, DType::F32, false);
      Expr eb = input({c}, 13, &beta, -0.5, 0.5, DType::F32, false);
      TensorView out = output(k.s, dt()), loopOut = output(k.s, dt());
      // x * 0.5 + 1 and gamma * 2: expressions, not only buffers, are read.
      const double scale = raw ? 1 : 0.5, offset = raw ? 0 : 1;
      const Expr xe = raw ? ex : ex * constant(0.5f) + constant(1.f);
      auto record = [&](const TensorView& o) {
        CommandSequence seq(ctx());
        ops::groupNormRows(ctx(), seq, xe, eg * constant(2.f), eb, k.groups, 1e-5f, k.silu, o, "gn rows");
        seq.run();
      };
      record(out);
      setenv("SDGEN_GROUP_NORM_HELD", "0", 1);
      record(loopOut);
      unsetenv("SDGEN_GROUP_NORM_HELD");
      const std::vector<float> got = read(out), loop = read(loopOut);
      const std::vector<double> ref = groupNormReference(x, k.s, k.groups, scale, offset, gamma, 2, beta, k.silu);
      compare(got, ref, tol());
      compare(loop, ref, tol());
    }
  // Groups wider than the kernel's invocations: an error naming the op and the shape, nothing recorded.
  std::vector<double> x, g;
  Expr ex = input({1, 2, 2, 1028}, 3, &x), eg = input({1028}, 4, &g, 0.5, 1.5, DType::F32, false);
  TensorView out = output({1, 2, 2, 1028}, dt());
  CommandSequence seq(ctx());
  test::expectErrorContaining([&] { ops::groupNormRows(ctx(), seq, ex, eg, eg, 4, 1e-5f, false, out, "gn rows"); },
                              "gn rows: the one-launch group norm needs NHWC [N, H, W, C] with C divisible by 4 groups "
                              "of at most 256 channels, got [1,2,2,1028]");
}

TEST_P(NormOps, GroupNormOverPixelBlocks) {
  // The two-launch group norm of ops::groupNormTiles against float64: columns of 4 channels inside one group
  // (cg 4, 8) and shared by two (cg 10 and 30, SD's 320 and 960 channels in 32 groups), one channel at a time
  // (C % 4 != 0, or groups of 2), several columns per invocation (1032 channels: 258 columns; 4096: 1024), one
  // and 256 groups, SiLU on and off; x read raw and as x * 0.5 + 1. Each case with the blocks of the default
  // target (mostly one pixel per invocation at these sizes) and with 3 workgroups in all
  // (SDGEN_GROUP_NORM_WORKGROUPS: one to three blocks per image, many pixels per invocation).
  const ops::GroupNormTilesPlan sd = ops::groupNormTilesPlan({2, 64, 64, 320}, 32);
  EXPECT_EQ(sd.vec, 4);
  EXPECT_EQ(sd.columnsPerRow, 80);
  EXPECT_EQ(sd.rows, 3);
  EXPECT_EQ(sd.columnsPerThread, 1);
  EXPECT_EQ(sd.pixelsPerBlock, 18);  // 4096 pixels in 264 blocks per image (16), rounded up to whole rows of 3
  EXPECT_EQ(sd.blocks, 228);
  EXPECT_EQ(ops::groupNormTilesPlan({1, 2, 2, 4096}, 32).columnsPerThread, 4);
  EXPECT_EQ(ops::groupNormTilesPlan({1, 3, 5, 30}, 3).vec, 1);
  EXPECT_EQ(ops::groupNormTilesPlan({1, 4, 4, 12}, 6).vec, 1);  // groups of 2: a column would span 3 groups
  struct Case {
    Shape s;
    int groups;
    bool silu;
  };
  for (const Case& k : {Case{{2, 16, 16, 320}, 32, true}, Case{{1, 8, 8, 120}, 4, false}, Case{{2, 4, 4, 32}, 8, true},
                        Case{{1, 3, 5, 30}, 3, false}, Case{{1, 4, 4, 12}, 6, true}, Case{{1, 3, 2, 1032}, 4, true},
                        Case{{1, 2, 2, 4096}, 32, false}, Case{{1, 40, 40, 24}, 1, true},
                        Case{{2, 5, 3, 1024}, 256, false}, Case{{3, 7, 9, 64}, 16, true}})
    for (bool raw : {true, false})
      for (bool few : {false, true}) {
        SCOPED_TRACE(shapeString(k.s) + " in " + std::to_string(k.groups) + (raw ? " raw" : " computed") +
                     (few ? ", 3 workgroups" : ""));
        if (few) setenv("SDGEN_GROUP_NORM_WORKGROUPS", "3", 1);
        const ops::GroupNormTilesPlan plan = ops::groupNormTilesPlan(k.s, k.groups);
        unsetenv("SDGEN_GROUP_NORM_WORKGROUPS");
        if (few) {
          EXPECT_LE(plan.blocks, (3 + k.s[0] - 1) / k.s[0]);
        }
        std::vector<double> x, gamma, beta;
        const int64_t c = k.s[3];
        Expr ex = input(k.s, uint32_t(c) + 17, &x, -1, 3);
        Expr eg = input({c}, 12, &gamma, 0.5, 1.5, DType::F32, false);
        Expr eb = input({c}, 13, &beta, -0.5, 0.5, DType::F32, false);
        TensorView out = output(k.s, dt());
        TensorView partials = output({k.s[0], plan.blocks, k.groups, 2}, DType::F32);
        const double scale = raw ? 1 : 0.5, offset = raw ? 0 : 1;
        const Expr xe = raw ? ex : ex * constant(0.5f) + constant(1.f);
        // The computed input is also stored beside the result (what an up block's shortcut reads).
        TensorView copy = output(k.s, dt());
        CommandSequence seq(ctx());
        if (few) setenv("SDGEN_GROUP_NORM_WORKGROUPS", "3", 1);
        ops::groupNormTiles(ctx(), seq, xe, eg * constant(2.f), eb, k.groups, 1e-5f, k.silu, partials, out, "gn tiles",
                            raw ? nullptr : &copy);
        unsetenv("SDGEN_GROUP_NORM_WORKGROUPS");
        seq.run();
        const std::vector<double> ref =
            groupNormReference(x, k.s, k.groups, scale, offset, gamma, 2, beta, k.silu);
        compare(read(out), ref, tol());
        if (!raw) {
          std::vector<double> input(x.size());
          for (size_t i = 0; i < x.size(); ++i) input[i] = x[i] * scale + offset;
          compare(read(copy), input, tol());
        }
      }
  // Shapes the kernel does not take, a partials buffer too small, a copy of another shape: errors naming the op,
  // nothing recorded.
  std::vector<double> x, g;
  Expr ex = input({1, 2, 2, 1028}, 3, &x), eg = input({1028}, 4, &g, 0.5, 1.5, DType::F32, false);
  TensorView out = output({1, 2, 2, 1028}, dt()), small = output({2}, DType::F32);
  CommandSequence seq(ctx());
  EXPECT_FALSE(ops::groupNormTilesFit({1, 2, 2, 1028}, 1028));  // more groups than invocations
  EXPECT_FALSE(ops::groupNormTilesFit({1, 2, 2, 4100}, 4));     // 1025 columns
  EXPECT_FALSE(ops::groupNormTilesFit({2, 2, 1028}, 4));        // not NHWC
  test::expectErrorContaining(
      [&] { ops::groupNormTiles(ctx(), seq, ex, eg, eg, 1028, 1e-5f, false, small, out, "gn tiles"); },
      "gn tiles: the tiled group norm needs NHWC [N, H, W, C] (N <= 65535, under 2^31 elements) with C divisible by "
      "1 to 256 groups and at most 1024 columns, got [1,2,2,1028] in 1028 groups");
  test::expectErrorContaining(
      [&] { ops::groupNormTiles(ctx(), seq, ex, eg, eg, 4, 1e-5f, false, small, out, "gn tiles"); },
      "gn tiles: the partial sums need a dense fp32 tensor of at least 32 elements, got [2]");
  test::expectErrorContaining(
      [&] { ops::groupNormTiles(ctx(), seq, ex, eg, eg, 4, 1e-5f, false, small, out, "gn tiles", &small); },
      "gn tiles: the copy of the input must be a dense tensor of the output's dtype and shape [1,2,2,1028], got [2]");
  EXPECT_EQ(seq.dispatchCount(), 0u);
}

TEST_P(NormOps, SoftmaxIsStableAndWritesEveryElement) {
  for (Shape s : {Shape{3, 5, 77}, Shape{4, 1000}, Shape{2, 2, 3, 1}}) {
    std::vector<double> x;
    Expr ex = input(s, uint32_t(numel(s)), &x, -30, 60);  // large logits: needs the max subtraction
    TensorView out = output(s, dt());
    CommandSequence seq(ctx());
    ops::softmax(ctx(), seq, ex * constant(2.f), bufferSink(out));
    seq.run();
    int64_t n = s.back();
    std::vector<double> ref(x.size());
    for (size_t r = 0; r < x.size() / n; ++r) {
      double m = -1e300, sum = 0;
      for (int64_t i = 0; i < n; ++i) m = std::max(m, 2 * x[r * n + i]);
      for (int64_t i = 0; i < n; ++i) sum += std::exp(2 * x[r * n + i] - m);
      for (int64_t i = 0; i < n; ++i) ref[r * n + i] = std::exp(2 * x[r * n + i] - m) / sum;
    }
    compare(read(out), ref, tol());
  }
}

TEST_P(NormOps, TimestepEmbeddingMatchesDiffusersFormula) {
  for (bool flip : {true, false}) {
    ops::TimestepEmbedding emb(ctx(), 320, flip, flip ? 0.f : 1.f);
    const float t = 981.f;
    TensorView out = output({2, 320}, dt());
    CommandSequence seq(ctx());
    ops::elementwise(ctx(), seq, emb(broadcast(uniform(2), {2, 1})), bufferSink(out));
    seq.setUniform(2, t);
    seq.run();
    std::vector<double> ref;
    for (int b = 0; b < 2; ++b)
      for (int j = 0; j < 320; ++j) {
        int i = j % 160;
        double f = std::exp(-std::log(10000.0) * i / (160 - (flip ? 0.0 : 1.0)));
        bool first = j < 160;
        bool useCos = flip ? first : !first;
        ref.push_back(useCos ? std::cos(t * f) : std::sin(t * f));
      }
    // |t f| reaches ~1000 rad: fp32 argument rounding alone is ~3e-5 absolute.
    compare(read(out), ref, dt() == DType::F16 ? 5e-3 : 2e-4);
  }
  EXPECT_THROW(ops::TimestepEmbedding(ctx(), 33, true, 0.f), Error);
}

TEST_P(NormOps, ClassifierFreeGuidanceWithRuntimeScale) {
  std::vector<double> eps;
  Expr e = input({4, 3, 5, 4}, 9, &eps);
  TensorView out = output({2, 3, 5, 4}, dt());
  CommandSequence seq(ctx());
  ops::elementwise(ctx(), seq, ops::classifierFreeGuidance(e, uniform(0)), bufferSink(out));
  seq.end();
  for (float scale : {7.5f, 1.f}) {
    seq.setUniform(0, scale);
    seq.run();
    std::vector<double> ref;
    size_t half = eps.size() / 2;
    for (size_t i = 0; i < half; ++i) ref.push_back(eps[i] + scale * (eps[half + i] - eps[i]));
    compare(read(out), ref, tol() * 8);  // values up to ~30 after scaling
  }
  EXPECT_THROW(ops::classifierFreeGuidance(buffer(view(keep_[0], dt(), {3, 4})), constant(1.f)), Error);
}

TEST_P(NormOps, BadShapesAreErrors) {
  std::vector<double> x;
  Expr ex = input({2, 3, 3, 10}, 11, &x);
  TensorView stats = output({2 * 4 * 2}, DType::F32);
  CommandSequence seq(ctx());
  EXPECT_THROW(ops::groupNorm(ctx(), seq, ex, 4, 1e-5f, constant(1.f), constant(0.f), stats), Error);  // 10 % 4
  EXPECT_THROW(ops::groupNorm(ctx(), seq, ex, 5, 1e-5f, constant(1.f), constant(0.f), stats), Error);  // stats size
  EXPECT_THROW(ops::softmax(ctx(), seq, ex, bufferSink(output({2, 3, 3, 9}, dt()))), Error);
}

INSTANTIATE_TEST_SUITE_P(DTypes, NormOps, ::testing::Values(DType::F32, DType::F16),
                         [](const auto& info) { return std::string(dtypeName(info.param)); });

}  // namespace
}  // namespace sdgen
