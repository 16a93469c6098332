#include "models/sampling/exact_float.h"  // first: the roundings below are the point of this file
// Scalar emulation of the AVX2 lanes: each multiply-add that torch's compiled code fuses is a std::fma here,
// every other operation rounds to float on its own (exact_float.h keeps the compiler from fusing more).
#include "models/sampling/torch_vector_math.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace sdgen::sampling::detail {

namespace {

float fromBits(uint32_t u) { return std::bit_cast<float>(u); }
uint32_t toBits(float f) { return std::bit_cast<uint32_t>(f); }

// Cephes logf: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), log(x) = log(m) + e*log(2), log(m) from a degree-9
// polynomial in m - 1, log(2) split into a short exact part (0.693359375) and a small correction.
constexpr float kLogPoly[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                               -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                               2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
constexpr float kLn2Low = -2.12194440e-4f, kLn2High = 0.693359375f;
constexpr float kSqrtHalf = 0.707106781186547524f;

// Cephes sinf/cosf: reduce by multiples of pi/4 (pi/4 split in three parts for an extended-precision
// subtraction), then one of two polynomials on [-pi/4, pi/4].
constexpr float kFourOverPi = 1.27323954473516f;
constexpr float kPiOver4Parts[3] = {-0.78515625f, -2.4187564849853515625e-4f, -3.77489497744594108e-8f};
constexpr float kCosPoly[3] = {2.443315711809948E-005f, -1.388731625493765E-003f, 4.166664568298827E-002f};
constexpr float kSinPoly[3] = {-1.9515295891E-4f, 8.3321608736E-3f, -1.6666654611E-1f};

}  // namespace

float cephesLog(float x) {
  const bool invalid = x <= 0.0f;
  x = std::max(x, fromBits(0x00800000u));  // denormals are treated as the smallest normal number
  const int32_t biasedExponent = static_cast<int32_t>(toBits(x) >> 23);
  x = fromBits((toBits(x) & ~0x7f800000u) | toBits(0.5f));  // mantissa in [0.5, 1)
  float e = static_cast<float>(biasedExponent - 0x7f) + 1.0f;
  // m < sqrt(1/2): use 2m - 1 and one exponent less, else m - 1.
  const bool small = x < kSqrtHalf;
  const float addBack = small ? x : 0.0f;
  x = x - 1.0f;
  e = e - (small ? 1.0f : 0.0f);
  x = x + addBack;

  const float z = x * x;
  float y = kLogPoly[0];
  for (int i = 1; i < 9; ++i) y = std::fma(y, x, kLogPoly[i]);
  y = y * x;
  y = std::fma(y, z, e * kLn2Low);
  y = std::fma(-z, 0.5f, y);
  x = x + y;
  x = std::fma(e, kLn2High, x);
  return invalid ? std::nanf("") : x;
}

void cephesSinCos(float x, float* sine, float* cosine) {
  uint32_t sineSign = toBits(x) & 0x80000000u;
  x = std::fabs(x);
  // Octant j (rounded up to even), the reduced argument x - j*pi/4 and the signs it implies.
  int32_t j = static_cast<int32_t>(x * kFourOverPi);
  j = (j + 1) & ~1;
  const float octant = static_cast<float>(j);
  sineSign ^= static_cast<uint32_t>(j & 4) << 29;
  const uint32_t cosineSign = static_cast<uint32_t>(~(j - 2) & 4) << 29;
  const bool sineUsesSinPoly = (j & 2) == 0;
  for (float part : kPiOver4Parts) x = std::fma(octant, part, x);

  const float z = x * x;
  float c = kCosPoly[0];
  c = std::fma(c, z, kCosPoly[1]);
  c = std::fma(c, z, kCosPoly[2]);
  c = c * z;
  c = std::fma(c, z, -(z * 0.5f));
  c = c + 1.0f;

  float s = kSinPoly[0];
  s = std::fma(s, z, kSinPoly[1]);
  s = std::fma(s, z, kSinPoly[2]);
  s = s * z;
  s = std::fma(s, x, x);

  const float sinValue = sineUsesSinPoly ? s : c;
  const float cosValue = sineUsesSinPoly ? c : s;
  *sine = fromBits(toBits(sinValue) ^ sineSign);
  *cosine = fromBits(toBits(cosValue) ^ cosineSign);
}

}  // namespace sdgen::sampling::detail
