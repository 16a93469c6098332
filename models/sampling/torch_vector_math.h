#pragma once
// The logarithm and sine/cosine approximations PyTorch's AVX2 normal fill uses (avx_mathfun: Cephes
// polynomials, 8 lanes), evaluated one lane at a time with the same float roundings, including the fused
// multiply-adds the compiler forms in torch's builds. Accurate to about 1 ulp for the arguments Box-Muller
// gives them (log on (0, 1], sin/cos on [0, 2*pi)); the point is to be identical to torch, not more accurate.
namespace sdgen::sampling::detail {

float cephesLog(float x);                              // NaN for x <= 0
void cephesSinCos(float x, float* sine, float* cosine);

}  // namespace sdgen::sampling::detail
