#pragma once
// A float64 CPU interpreter of expression and sink trees: the reference the GPU kernels are tested against.
// Tensor contents come from a HostMemory that mirrors what the test uploaded, keyed by device address.
#include <cstdint>
#include <map>
#include <vector>

#include "engine/context.h"
#include "graph/expr.h"

namespace sdgen::test {

class HostMemory {
 public:
  // Uploads values (rounded to dtype) and remembers them; returns the allocation.
  Allocation upload(Context& ctx, const std::vector<float>& values, DType dtype);
  Allocation uploadIndices(Context& ctx, const std::vector<int32_t>& values);
  double read(const graph::TensorView& t, int64_t elementOffset) const;

 private:
  struct Region {
    uint64_t bytes;
    DType dtype;
    bool isInt;
    std::vector<double> values;
  };
  std::map<VkDeviceAddress, Region> regions_;
};

using Coord = std::vector<int64_t>;  // in the node's own rank

double evalReference(const graph::Expr& e, const Coord& c, const HostMemory& mem, double kernelValue = 0);
// All elements of an expression, row-major.
std::vector<double> evalReference(const graph::Expr& e, const HostMemory& mem);

}  // namespace sdgen::test
