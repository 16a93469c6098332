#include "models/pipeline/decoded_image.h"

#include <algorithm>
#include <future>

namespace sdgen::pipeline {

namespace {

// v in [0, 1] -> round-half-to-even(v * 255). Adding and subtracting 2^23 rounds a float in [0, 2^23) to an
// integer in the default rounding mode (to nearest, ties to even), as std::nearbyint does, without its libm
// call per element (the loop vectorizes: ~3x faster on a 512^2 image).
inline uint8_t toByte(float v) {
  float r = v * 255.f;
  r = (r + 8388608.f) - 8388608.f;
  return static_cast<uint8_t>(static_cast<int>(r));
}

// (x / 2 + 0.5).clamp(0, 1) with NaN -> 0 (a comparison with NaN is false), so the byte conversion is defined.
inline float clampHalf(float x) {
  const float v = x * 0.5f + 0.5f;  // x / 2 exactly
  return v > 0.f ? (v < 1.f ? v : 1.f) : 0.f;
}

bool convertRange(float* px, uint8_t* rgb, size_t n) {
  bool finite = true;
  for (size_t i = 0; i < n; ++i) {
    const float x = px[i];
    finite &= x - x == 0.f;  // false for inf and NaN
    const float v = clampHalf(x);
    px[i] = v;
    rgb[i] = toByte(v);
  }
  return finite;
}

}  // namespace

bool postprocessDecoded(std::vector<float>& pixels, std::vector<uint8_t>& rgb) {
  rgb.resize(pixels.size());
  constexpr size_t kChunk = size_t(1) << 18;  // 256 k values per task: a 512^2 RGB image in 3
  const size_t n = pixels.size();
  if (n <= kChunk) return convertRange(pixels.data(), rgb.data(), n);
  std::vector<std::future<bool>> parts;
  for (size_t first = kChunk; first < n; first += kChunk)
    parts.push_back(std::async(std::launch::async, convertRange, pixels.data() + first, rgb.data() + first,
                               std::min(kChunk, n - first)));
  bool finite = convertRange(pixels.data(), rgb.data(), kChunk);
  for (auto& p : parts) finite = p.get() && finite;
  return finite;
}

std::vector<uint8_t> decodedToRgb8(const std::vector<float>& decoded) {
  std::vector<float> pixels = decoded;
  std::vector<uint8_t> rgb;
  postprocessDecoded(pixels, rgb);
  return rgb;
}

}  // namespace sdgen::pipeline
