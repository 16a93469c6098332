#pragma once
// Host floats to and from device memory in a storage type: fp16 is rounded to nearest even once, on upload.
#include <span>
#include <string>
#include <vector>

#include "engine/context.h"
#include "engine/dtype.h"

namespace sdgen {

Allocation uploadFloats(Context& ctx, std::span<const float> values, DType dtype, const std::string& what);
// Writes values into the start of an existing allocation, stored as `dtype`.
void writeFloats(Context& ctx, const Allocation& a, std::span<const float> values, DType dtype);
std::vector<float> downloadFloats(Context& ctx, const Allocation& a, size_t count, DType dtype);

}  // namespace sdgen
