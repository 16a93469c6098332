#pragma once
// A fixture for op tests parameterized over the storage type: uploads random inputs (mirrored on the host for
// the float64 reference), allocates poisoned outputs, and reads results back. Allocations live until the
// test ends, so recorded sequences can reference them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <optional>
#include <vector>

#include "graph/expr.h"
#include "tests/graph/reference_eval.h"
#include "tests/test_support.h"

namespace sdgen::test {

class TensorTest : public VulkanTest, public ::testing::WithParamInterface<DType> {
 protected:
  DType dt() const { return GetParam(); }
  // The bars: relative error <= 1e-4 in fp32, <= 5e-3 with fp16 storage.
  virtual double tolerance() const { return dt() == DType::F16 ? 5e-3 : 1e-4; }

  graph::Expr input(const graph::Shape& s, uint32_t seed, float lo = -1.f, float hi = 1.f) {
    return input(s, seed, dt(), lo, hi);
  }
  graph::Expr input(const graph::Shape& s, uint32_t seed, DType dtype, float lo = -1.f, float hi = 1.f) {
    keep_.push_back(mem_.upload(ctx(), randomFloats(graph::numel(s), seed, lo, hi), dtype));
    return graph::buffer(graph::view(keep_.back(), dtype, s));
  }
  graph::TensorView output(const graph::Shape& s, std::optional<DType> dtype = std::nullopt) {
    DType d = dtype.value_or(dt());
    keep_.push_back(ctx().allocate(graph::numel(s) * dtypeSize(d), "output"));
    poison(ctx(), keep_.back());
    return graph::view(keep_.back(), d, s);
  }
  // Checks every element against the float64 reference (rounded to fp16 first for fp16 outputs) with the error
  // max |gpu - ref| / max(1, |ref|) <= tolerance(); NaN (an unwritten, poisoned element) fails. Returns the
  // worst error and keeps the test's maximum, printed at the end of the test.
  double compare(const std::vector<float>& got, const std::vector<double>& ref, const std::string& what) {
    EXPECT_EQ(got.size(), ref.size()) << what;
    double worst = 0;
    for (size_t i = 0; i < std::min(got.size(), ref.size()); ++i) {
      double expected = dt() == DType::F16 ? roundTo(DType::F16, float(ref[i])) : ref[i];
      if (std::isnan(got[i])) {
        ADD_FAILURE() << what << ": element " << i << " not written (or NaN), expected " << ref[i];
        return 1;
      }
      double err = std::abs(got[i] - expected) / std::max(1.0, std::abs(ref[i]));
      worst = std::max(worst, err);
      if (err > tolerance()) {
        ADD_FAILURE() << what << ": element " << i << " got " << got[i] << ", reference " << ref[i];
        return err;
      }
    }
    maxError_ = std::max(maxError_, worst);
    return worst;
  }
  void TearDown() override {
    RecordProperty("max_error", std::to_string(maxError_));
    std::printf("    [%s] max |gpu-ref|/max(1,|ref|) = %.3g\n", dtypeName(dt()), maxError_);
    VulkanTest::TearDown();
  }

  // Poisons an output again (NaN), so that a second run of a recorded sequence must write every element anew.
  void repoison(const graph::TensorView& t) {
    auto it = std::find_if(keep_.begin(), keep_.end(), [&](auto& a) { return a.address() == t.address; });
    ASSERT_NE(it, keep_.end());
    poison(ctx(), *it);
  }
  std::vector<float> read(const graph::TensorView& t) {
    auto it = std::find_if(keep_.begin(), keep_.end(), [&](auto& a) { return a.address() == t.address; });
    return downloadFloats(ctx(), *it, graph::numel(t.shape), t.dtype);
  }

  HostMemory mem_;
  std::vector<Allocation> keep_;
  double maxError_ = 0;
};

}  // namespace sdgen::test
