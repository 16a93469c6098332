#include "ops/basic_kernels.h"

#include <cmath>

#include "engine/command_sequence.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using test::downloadFloats;
using test::poison;
using test::randomFloats;
using test::roundTo;
using test::uploadFloats;

class BasicKernels : public test::VulkanTest, public ::testing::WithParamInterface<DType> {};

// Odd sizes: not a multiple of the workgroup (256) nor of 4.
constexpr uint32_t kCounts[] = {1, 255, 1000, 4099};

TEST_P(BasicKernels, FillWritesEveryElement) {
  DType dt = GetParam();
  for (uint32_t n : kCounts) {
    Allocation out = ctx().allocate(n * dtypeSize(dt), "out");
    poison(ctx(), out);
    CommandSequence seq(ctx());
    ops::fill(ctx(), seq, out, dt, n, 1.25f);
    seq.run();
    auto got = downloadFloats(ctx(), out, n, dt);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(got[i], 1.25f) << "n=" << n << " i=" << i;
  }
}

TEST_P(BasicKernels, CopyAddMultiplyMatchCpu) {
  DType dt = GetParam();
  for (uint32_t n : kCounts) {
    auto a = randomFloats(n, 1 + n), b = randomFloats(n, 2 + n);
    Allocation da = uploadFloats(ctx(), a, dt), db = uploadFloats(ctx(), b, dt);
    Allocation copied = ctx().allocate(n * dtypeSize(dt), "copy"), sum = ctx().allocate(n * dtypeSize(dt), "sum"),
               prod = ctx().allocate(n * dtypeSize(dt), "prod");
    poison(ctx(), copied);
    poison(ctx(), sum);
    poison(ctx(), prod);
    CommandSequence seq(ctx());
    ops::copy(ctx(), seq, da, copied, dt, n);
    ops::add(ctx(), seq, da, db, sum, dt, n);
    ops::multiply(ctx(), seq, da, db, prod, dt, n);
    seq.run();
    auto gc = downloadFloats(ctx(), copied, n, dt), gs = downloadFloats(ctx(), sum, n, dt),
         gp = downloadFloats(ctx(), prod, n, dt);
    for (uint32_t i = 0; i < n; ++i) {
      float ra = roundTo(dt, a[i]), rb = roundTo(dt, b[i]);
      ASSERT_EQ(gc[i], ra) << i;
      // The GPU computes in fp32 and rounds once on store.
      ASSERT_EQ(gs[i], roundTo(dt, ra + rb)) << "n=" << n << " i=" << i;
      ASSERT_EQ(gp[i], roundTo(dt, ra * rb)) << "n=" << n << " i=" << i;
    }
  }
}

TEST_P(BasicKernels, RowSumMatchesFloat64Reference) {
  DType dt = GetParam();
  struct Shape {
    uint32_t rows, cols;
  };
  for (Shape s : {Shape{1, 1}, Shape{3, 7}, Shape{17, 257}, Shape{64, 4096}, Shape{2, 100000}}) {
    auto in = randomFloats(size_t(s.rows) * s.cols, s.rows * 31 + s.cols);
    Allocation din = uploadFloats(ctx(), in, dt);
    Allocation dout = ctx().allocate(s.rows * 4, "sums");
    poison(ctx(), dout);
    CommandSequence seq(ctx());
    ops::rowSum(ctx(), seq, din, dout, dt, s.rows, s.cols);
    seq.run();
    auto got = downloadFloats(ctx(), dout, s.rows, DType::F32);
    for (uint32_t r = 0; r < s.rows; ++r) {
      double ref = 0, mag = 0;
      for (uint32_t c = 0; c < s.cols; ++c) {
        ref += roundTo(dt, in[size_t(r) * s.cols + c]);
        mag += std::abs(in[size_t(r) * s.cols + c]);
      }
      ASSERT_FALSE(std::isnan(got[r])) << "row " << r << " not written";
      EXPECT_LE(std::abs(got[r] - ref), 1e-6 * mag + 1e-6) << s.rows << "x" << s.cols << " row " << r;
    }
  }
}

TEST_P(BasicKernels, TooSmallAllocationIsAnError) {
  DType dt = GetParam();
  Allocation small = ctx().allocate(16, "small");
  CommandSequence seq(ctx());
  EXPECT_THROW(ops::fill(ctx(), seq, small, dt, 1000, 0.f), Error);
}

INSTANTIATE_TEST_SUITE_P(DTypes, BasicKernels, ::testing::Values(DType::F32, DType::F16),
                         [](const auto& info) { return std::string(dtypeName(info.param)); });

}  // namespace
}  // namespace sdgen
