#pragma once
// A fixture for op tests parameterized over the storage type: uploads random inputs (mirrored on the host for
// the float64 reference), allocates poisoned outputs, and reads results back. Allocations live until the
// test ends, so recorded sequences can reference them.
#include <algorithm>
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
  double tolerance() const { return dt() == DType::F16 ? 5e-3 : 1e-4; }

  graph::Expr input(const graph::Shape& s, uint32_t seed, float lo = -1.f, float hi = 1.f) {
    keep_.push_back(mem_.upload(ctx(), randomFloats(graph::numel(s), seed, lo, hi), dt()));
    return graph::buffer(graph::view(keep_.back(), dt(), s));
  }
  graph::TensorView output(const graph::Shape& s, std::optional<DType> dtype = std::nullopt) {
    DType d = dtype.value_or(dt());
    keep_.push_back(ctx().allocate(graph::numel(s) * dtypeSize(d), "output"));
    poison(ctx(), keep_.back());
    return graph::view(keep_.back(), d, s);
  }
  std::vector<float> read(const graph::TensorView& t) {
    auto it = std::find_if(keep_.begin(), keep_.end(), [&](auto& a) { return a.address() == t.address; });
    return downloadFloats(ctx(), *it, graph::numel(t.shape), t.dtype);
  }

  HostMemory mem_;
  std::vector<Allocation> keep_;
};

}  // namespace sdgen::test
