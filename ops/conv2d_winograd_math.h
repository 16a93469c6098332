#pragma once
// Winograd F(4,3) with interpolation points 0, 1, -1, 2, -2 and infinity: 4 outputs of a 3-tap correlation
// from a 6-element input tile,  y = A^T [ (G g) .* (B^T d) ].  In 2-D: Y = A^T [ (G g G^T) .* (B^T d B) ] A.
// The matrices are exact rationals; the filter transform runs in double at load time. The kernels in
// shaders/conv/winograd.slang hard-code B^T and A^T (small integers, exact in fp32).
#include <array>
#include <span>
#include <vector>

namespace sdgen::ops::winograd {

constexpr int kTile = 6;    // input tile (alpha = m + r - 1)
constexpr int kOut = 4;     // outputs per tile and axis (m)
constexpr int kTaps = 3;    // filter size (r)

extern const std::array<std::array<double, 3>, 6> G;    // 6x3
extern const std::array<std::array<double, 6>, 6> BT;   // 6x6
extern const std::array<std::array<double, 6>, 4> AT;   // 4x6

// U = G g G^T for one 3x3 filter g (row-major), as 36 values row-major.
std::array<double, 36> filterTransform(std::span<const float, 9> g);

// Packs [Cout, Cin, 3, 3] weights into U[36][Cin][Cout] (double results rounded once to float).
std::vector<float> packFilters(std::span<const float> weights, int cout, int cin);

}  // namespace sdgen::ops::winograd
