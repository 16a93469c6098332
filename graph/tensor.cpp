#include "graph/tensor.h"

#include "engine/error.h"

namespace sdgen::graph {

std::string shapeString(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

Shape denseStrides(const Shape& s) {
  Shape st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

uint64_t TensorView::extentBytes() const {
  int64_t last = 0;
  for (size_t i = 0; i < shape.size(); ++i) last += (shape[i] - 1) * strides[i];
  return uint64_t(last + 1) * elementSize();
}

static void checkShape(const Shape& shape) {
  if (shape.empty() || shape.size() > 4) throw Error("tensor rank must be 1..4, got shape " + shapeString(shape));
  for (auto d : shape)
    if (d <= 0) throw Error("tensor dimensions must be positive, got shape " + shapeString(shape));
}

TensorView view(const Allocation& a, DType dtype, Shape shape, uint64_t byteOffset) {
  checkShape(shape);
  TensorView v{a.address() + byteOffset, dtype, shape, denseStrides(shape)};
  if (byteOffset + v.extentBytes() > a.size())
    throw Error("tensor view " + shapeString(shape) + " " + dtypeName(dtype) + " at offset " +
                std::to_string(byteOffset) + " does not fit its allocation of " + std::to_string(a.size()) + " bytes");
  return v;
}

TensorView indexView(const Allocation& a, Shape shape) {
  checkShape(shape);
  TensorView v{a.address(), DType::F32, shape, denseStrides(shape), true};
  if (v.extentBytes() > a.size()) throw Error("index tensor " + shapeString(shape) + " does not fit its allocation");
  return v;
}

}  // namespace sdgen::graph
