#pragma once
// The float64 CPU convolution the conv kernels are tested against (and the benchmark's host check).
#include <span>
#include <vector>

#include "graph/tensor.h"
#include "ops/conv2d_weights.h"

namespace sdgen::test {

// out[n, oy, ox, co] = bias[co] + sum in[n, iy, ix, ci] * w[co, ci, ky, kx] (zero padding), NHWC row-major.
// `input` has shape `in` = [N, H, W, Cin]; weights are [Cout, Cin, kh, kw]; bias is [Cout] or empty.
std::vector<double> conv2dReference(std::span<const double> input, const graph::Shape& in,
                                    std::span<const float> weights, std::span<const float> bias, int cout,
                                    const ops::Conv2dParams& p);

}  // namespace sdgen::test
