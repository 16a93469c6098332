#include "tests/ops/conv2d_reference.h"

#include <stdexcept>

namespace sdgen::test {

std::vector<double> conv2dReference(std::span<const double> input, const graph::Shape& in,
                                    std::span<const float> weights, std::span<const float> bias, int cout,
                                    const ops::Conv2dParams& p) {
  const int64_t N = in[0], H = in[1], W = in[2], C = in[3];
  const int64_t Ho = (H + 2 * p.padH - p.dilationH * (p.kh - 1) - 1) / p.strideH + 1;
  const int64_t Wo = (W + 2 * p.padW - p.dilationW * (p.kw - 1) - 1) / p.strideW + 1;
  if (int64_t(input.size()) != N * H * W * C || int64_t(weights.size()) != cout * C * p.kh * p.kw)
    throw std::runtime_error("conv2dReference: sizes do not match");
  std::vector<double> out(size_t(N * Ho * Wo * cout));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oy = 0; oy < Ho; ++oy)
      for (int64_t ox = 0; ox < Wo; ++ox)
        for (int64_t co = 0; co < cout; ++co) {
          double s = bias.empty() ? 0.0 : bias[co];
          for (int ky = 0; ky < p.kh; ++ky) {
            int64_t iy = oy * p.strideH - p.padH + ky * p.dilationH;
            if (iy < 0 || iy >= H) continue;
            for (int kx = 0; kx < p.kw; ++kx) {
              int64_t ix = ox * p.strideW - p.padW + kx * p.dilationW;
              if (ix < 0 || ix >= W) continue;
              const double* x = &input[size_t(((n * H + iy) * W + ix) * C)];
              for (int64_t ci = 0; ci < C; ++ci) s += x[ci] * weights[size_t(((co * C + ci) * p.kh + ky) * p.kw + kx)];
            }
          }
          out[size_t(((n * Ho + oy) * Wo + ox) * cout + co)] = s;
        }
  return out;
}

}  // namespace sdgen::test
