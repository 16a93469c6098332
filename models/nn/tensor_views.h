#pragma once
// Views of graph tensors under another shape, for layers that address one buffer in two layouts (a
// [B, S, H*D] projection read as [B, S, H, D] heads).
#include "graph/tensor.h"

namespace sdgen::nn {

// The same dense memory under `shape` (same element count); throws naming both shapes otherwise.
graph::TensorView reshaped(const graph::TensorView& t, const graph::Shape& shape);

}  // namespace sdgen::nn
