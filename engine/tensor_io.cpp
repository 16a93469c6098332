#include "engine/tensor_io.h"

#include <algorithm>

namespace sdgen {

Allocation uploadFloats(Context& ctx, std::span<const float> values, DType dtype, const std::string& what) {
  Allocation a = ctx.allocate(std::max<size_t>(values.size(), 1) * dtypeSize(dtype), what);
  writeFloats(ctx, a, values, dtype);
  return a;
}

void writeFloats(Context& ctx, const Allocation& a, std::span<const float> values, DType dtype) {
  if (dtype == DType::F32) {
    ctx.upload(a, 0, {reinterpret_cast<const uint8_t*>(values.data()), values.size() * 4});
  } else {
    std::vector<uint16_t> h(values.size());
    for (size_t i = 0; i < values.size(); ++i) h[i] = floatToHalf(values[i]);
    ctx.upload(a, 0, {reinterpret_cast<const uint8_t*>(h.data()), h.size() * 2});
  }
}

std::vector<float> downloadFloats(Context& ctx, const Allocation& a, size_t count, DType dtype) {
  std::vector<float> out(count);
  if (dtype == DType::F32) {
    ctx.download(a, 0, {reinterpret_cast<uint8_t*>(out.data()), count * 4});
  } else {
    std::vector<uint16_t> h(count);
    ctx.download(a, 0, {reinterpret_cast<uint8_t*>(h.data()), count * 2});
    for (size_t i = 0; i < count; ++i) out[i] = halfToFloat(h[i]);
  }
  return out;
}

}  // namespace sdgen
