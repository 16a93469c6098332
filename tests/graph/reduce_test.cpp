// The reduction kernel (sum and sum of squares over axes 1 and 3) against a float64 reference.
#include <cmath>

#include "engine/command_sequence.h"
#include "ops/reduce.h"
#include "tests/graph/reference_eval.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using namespace graph;

class ReduceTest : public test::VulkanTest, public ::testing::WithParamInterface<DType> {};

TEST_P(ReduceTest, RowsAndGroupsMatchReference) {
  DType dt = GetParam();
  test::HostMemory mem;
  struct Case {
    Shape shape;       // [A, B, C, D]
    bool throughExpr;  // reduce silu(x) instead of x
    int parts = 1;
    bool wholeRows = false;  // the kernel that reads whole rows of C * D, then the tree combine
  };
  // parts > 1: the split reduction (partials, then the ordered combine), including more parts than rows.
  for (Case k : {Case{{5, 1, 1, 37}, false}, Case{{2, 30, 3, 4}, false}, Case{{2, 16, 4, 10}, true},
                 Case{{1, 300, 2, 8}, true}, Case{{1, 300, 2, 8}, true, 7}, Case{{2, 30, 3, 4}, false, 16},
                 Case{{2, 45, 3, 10}, true, 4}, Case{{1, 3, 2, 4}, false, 5},
                 // D 30 and 300: a pass of 8 rows by 30 invocations (16 idle), and D over the workgroup.
                 Case{{2, 70, 2, 30}, true}, Case{{2, 70, 2, 30}, false, 3}, Case{{1, 3, 2, 300}, true, 2},
                 // Whole rows: Q = C * D / 4 words per row of 8 (32 rows per pass), 32 (the VAE's 128 channels in
                 // 32 groups), 128 and 256 (one row per pass); rows not a multiple of the 4-row loop step, parts
                 // of unequal length, empty parts (more parts than rows), one part.
                 Case{{1, 301, 8, 4}, true, 7, true}, Case{{2, 1000, 32, 4}, false, 16, true},
                 Case{{1, 50, 32, 16}, true, 3, true}, Case{{2, 9, 32, 32}, false, 4, true},
                 Case{{1, 5, 2, 4}, false, 8, true}, Case{{2, 37, 4, 8}, true, 1, true}}) {
    Shape s = k.shape;
    Allocation in = mem.upload(ctx(), test::randomFloats(numel(s), uint32_t(numel(s)), -1.f, 3.f), dt);
    Expr x = buffer(view(in, dt, s));
    if (k.throughExpr) x = silu(x);
    Allocation out = ctx().allocate(s[0] * s[2] * 2 * 4, "stats");
    test::poison(ctx(), out);
    Allocation partials = ctx().allocate(s[0] * s[2] * k.parts * 2 * 4, "partials");
    test::poison(ctx(), partials);
    CommandSequence seq(ctx());
    auto info = ops::sumAndSumOfSquares(ctx(), seq, x, view(out, DType::F32, {s[0] * s[2] * 2}), "reduce",
                                        {k.parts, view(partials, DType::F32, {s[0] * s[2] * k.parts * 2}),
                                         k.wholeRows});
    seq.run();
    EXPECT_EQ(info.vector, s[3] % 4 == 0);
    auto got = test::downloadFloats(ctx(), out, s[0] * s[2] * 2, DType::F32);
    for (int64_t a = 0; a < s[0]; ++a)
      for (int64_t c = 0; c < s[2]; ++c) {
        double sum = 0, sq = 0, mag = 0;
        for (int64_t b = 0; b < s[1]; ++b)
          for (int64_t d = 0; d < s[3]; ++d) {
            double v = test::evalReference(x, {a, b, c, d}, mem);
            sum += v;
            sq += v * v;
            mag += std::abs(v);
          }
        size_t o = size_t(a * s[2] + c) * 2;
        EXPECT_NEAR(got[o], sum, 1e-5 * mag + 1e-6) << shapeString(s) << " parts " << k.parts << " rows " << k.wholeRows;
        EXPECT_NEAR(got[o + 1], sq, 1e-5 * sq + 1e-6) << shapeString(s) << " parts " << k.parts << " rows " << k.wholeRows;
      }
  }
}

TEST_P(ReduceTest, WrongOutputIsAnError) {
  DType dt = GetParam();
  Allocation in = ctx().allocate(64 * 4, "in"), out = ctx().allocate(64, "out");
  CommandSequence seq(ctx());
  EXPECT_THROW(ops::sumAndSumOfSquares(ctx(), seq, buffer(view(in, dt, {2, 2, 2, 2})),
                                       view(out, DType::F32, {3})),
               Error);
  EXPECT_THROW(ops::sumAndSumOfSquares(ctx(), seq, buffer(view(in, dt, {4, 4})), view(out, DType::F32, {8})),
               Error);
}

TEST_P(ReduceTest, SplitNeedsEnoughPartials) {
  DType dt = GetParam();
  Allocation in = ctx().allocate(64 * 4, "in"), out = ctx().allocate(64, "out"), partials = ctx().allocate(64, "p");
  CommandSequence seq(ctx());
  EXPECT_THROW(ops::sumAndSumOfSquares(ctx(), seq, buffer(view(in, dt, {2, 4, 2, 2})), view(out, DType::F32, {8}),
                                       "reduce", {4, view(partials, DType::F32, {16})}),
               Error) << "4 outputs x 4 parts x 2 need 32 partials";
}

TEST(ReduceParts, FillTheGpuNotTheCpu) {
  DeviceInfo gpu;
  gpu.type = "discrete";
  gpu.subgroupSize = 32;
  EXPECT_EQ(ops::chooseReduceParts(gpu, 32, 512 * 512, 4), 16) << "VAE 512^2 group norm, one image";
  EXPECT_EQ(ops::chooseReduceParts(gpu, 64, 64 * 64, 20), 5) << "UNet 64^2 x 640: 81920 elements per group";
  // Groups of D % 4 != 0 load one element at a time: parts of at least 4096 elements.
  EXPECT_EQ(ops::chooseReduceParts(gpu, 64, 64 * 64, 10), 8) << "UNet 64^2 x 320: 40960 elements per group";
  EXPECT_EQ(ops::chooseReduceParts(gpu, 64, 32 * 32, 30), 7) << "UNet 32^2 x 960: 30720 elements per group";
  EXPECT_EQ(ops::chooseReduceParts(gpu, 64, 8 * 8, 40), 1) << "8^2: too little work to split";
  EXPECT_EQ(ops::chooseReduceParts(gpu, 4096, 1, 768), 1) << "layer-norm-like: enough outputs";
  DeviceInfo cpu;
  cpu.type = "cpu";
  cpu.subgroupSize = 8;
  EXPECT_EQ(ops::chooseReduceParts(cpu, 32, 512 * 512, 4), 1) << "lavapipe keeps one launch";
}

TEST_P(ReduceTest, WholeRowsNeedWordsDividingTheWorkgroup) {
  DType dt = GetParam();
  Allocation in = ctx().allocate(4096 * 4, "in"), out = ctx().allocate(4096, "out"), partials = ctx().allocate(4096, "p");
  for (Shape s : {Shape{1, 4, 3, 4}, Shape{1, 4, 2, 6}, Shape{1, 2, 1, 8}, Shape{1, 1, 2, 1024}}) {
    CommandSequence seq(ctx());
    EXPECT_THROW(ops::sumAndSumOfSquares(ctx(), seq, buffer(view(in, dt, s)), view(out, DType::F32, {s[2] * 2}),
                                         "reduce", {2, view(partials, DType::F32, {s[2] * 4}), true}),
                 Error) << shapeString(s) << ": C * D / 4 must divide 256 with D % 4 == 0 and C >= 2";
  }
}

TEST(ReduceParts, WholeRowsForTheVaeGroupNorms) {
  DeviceInfo gpu;
  gpu.type = "discrete";
  gpu.subgroupSize = 32;
  // VAE 512^2 x 128 channels, one image: 1024 workgroups wanted, at most 256 parts.
  ops::ReduceSplit p = ops::chooseReducePlan(gpu, 1, 512 * 512, 32, 4);
  EXPECT_TRUE(p.wholeRows);
  EXPECT_EQ(p.parts, 256);
  // 64^2 x 512 (2 M elements): 64 parts of 32768.
  p = ops::chooseReducePlan(gpu, 1, 64 * 64, 32, 16);
  EXPECT_TRUE(p.wholeRows);
  EXPECT_EQ(p.parts, 64);
  // The UNet's 320 and 1280 channels (groups of 10; 320 words a row) keep the per-group kernel.
  EXPECT_FALSE(ops::chooseReducePlan(gpu, 2, 64 * 64, 32, 10).wholeRows);
  EXPECT_FALSE(ops::chooseReducePlan(gpu, 2, 16 * 16, 32, 40).wholeRows);
  // Too little to split: one launch of the per-group kernel.
  p = ops::chooseReducePlan(gpu, 2, 8 * 8, 32, 4);
  EXPECT_FALSE(p.wholeRows);
  EXPECT_EQ(p.parts, 1);
  DeviceInfo cpu;
  cpu.type = "cpu";
  cpu.subgroupSize = 8;
  EXPECT_FALSE(ops::chooseReducePlan(cpu, 1, 512 * 512, 32, 4).wholeRows) << "lavapipe keeps one launch";
}

INSTANTIATE_TEST_SUITE_P(DTypes, ReduceTest, ::testing::Values(DType::F32, DType::F16),
                         [](const auto& info) { return std::string(dtypeName(info.param)); });

}  // namespace
}  // namespace sdgen
