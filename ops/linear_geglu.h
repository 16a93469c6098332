#pragma once
// GEGLU in the epilogue of its projection (a transformer block's feed-forward: value * gelu(gate), the two halves
// of one [2 * inner, K] linear layer). On the tensor-core GEMM the projection's weights are stored with the
// halves interleaved in blocks of 4 columns, so that every output tile holds each value beside its gate and the
// kernel stores the gated [.., inner] result directly (shaders/linear/gemm_coop.slang GEGLU = 1): no [.., 2 inner]
// intermediate, no staging launch before the next layer. Contract: docs/kernels-linear-attention.md.
#include <cstdint>
#include <vector>

#include "engine/device_info.h"
#include "engine/dtype.h"

namespace sdgen::ops {

// Whether a GEGLU projection stored in `storage` on `device` runs with the fused epilogue (its weights must then
// be interleaved with interleaveGegluRows, and ops::linear called with LinearOptions::gegluOutput).
bool gegluEpilogueChosen(const DeviceInfo& device, DType storage);

// Reorders the rows of a [2 * inner, k] weight matrix (and its bias, when not empty) from [value; gate] to
// blocks of 4 value rows then 4 gate rows: row 8j + i <- value row 4j + i, row 8j + 4 + i <- gate row 4j + i.
// inner % 4 == 0.
void interleaveGegluRows(std::vector<float>& weight, std::vector<float>& bias, int64_t inner, int64_t k);

}  // namespace sdgen::ops
