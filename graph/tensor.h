#pragma once
// A view of device memory as a tensor: address, element type, shape and strides (in elements).
// Shapes have rank 1..4; the innermost axis is last (NHWC for images).
#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/dtype.h"
#include "engine/memory.h"

namespace sdgen::graph {

using Shape = std::vector<int64_t>;

std::string shapeString(const Shape& s);
int64_t numel(const Shape& s);
// Row-major strides of a dense tensor.
Shape denseStrides(const Shape& s);

struct TensorView {
  VkDeviceAddress address = 0;
  DType dtype = DType::F32;
  Shape shape;
  Shape strides;  // elements; 0 broadcasts along that axis
  bool isInt32 = false;  // index tensors (gather); dtype is ignored then

  bool dense() const { return strides == denseStrides(shape); }
  uint32_t elementSize() const { return isInt32 ? 4 : dtypeSize(dtype); }
  // Bytes from `address` to one past the last element any coordinate can reach.
  uint64_t extentBytes() const;
};

// A dense view of an allocation (checks that it fits).
TensorView view(const Allocation& a, DType dtype, Shape shape, uint64_t byteOffset = 0);
TensorView indexView(const Allocation& a, Shape shape);  // int32 indices

}  // namespace sdgen::graph
