#include "models/pipeline/decoded_image.h"

#include <algorithm>
#include <cstring>
#include <future>
#include <thread>

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
  float v = x * 0.5f + 0.5f;  // x / 2 exactly
  v = v > 0.f ? v : 0.f;      // two plain selects (the nested form kept a branch in the loop)
  return v < 1.f ? v : 1.f;
}

// Written so that the compiler vectorizes it (measured 0.85 ms for a 512^2 image on three threads of the H200
// machine when the finiteness was a bool folded per element): the finiteness is an integer OR of "exponent all
// ones" over the raw bits, every other step a plain per-element map.
// kPixels: the clamped floats are stored too (px), else only the bytes.
template <bool kPixels>
bool convertRange(const float* __restrict src, float* __restrict px, uint8_t* __restrict rgb, size_t n) {
  uint32_t nonFinite = 0;
  for (size_t i = 0; i < n; ++i) {
    const float x = src[i];
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    nonFinite |= uint32_t((bits & 0x7f800000u) == 0x7f800000u);  // inf or NaN
    const float v = clampHalf(x);
    if constexpr (kPixels) px[i] = v;
    rgb[i] = toByte(v);
  }
  return nonFinite == 0;
}

}  // namespace

bool postprocessDecoded(std::span<const float> decoded, std::vector<float>* pixels, std::vector<uint8_t>& rgb) {
  const size_t n = decoded.size();
  if (pixels) pixels->resize(n);
  rgb.resize(n);
  const auto convert = pixels ? convertRange<true> : convertRange<false>;
  float* px = pixels ? pixels->data() : nullptr;
  constexpr size_t kChunk = size_t(1) << 16;  // 64 k values per task: a 512^2 RGB image in 12, on up to 8 threads
  const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  const size_t per = std::max(kChunk, (n + threads - 1) / threads);
  const float* src = decoded.data();
  if (n <= per) return convert(src, px, rgb.data(), n);
  std::vector<std::future<bool>> parts;
  for (size_t first = per; first < n; first += per)
    parts.push_back(std::async(std::launch::async, convert, src + first, px ? px + first : nullptr, rgb.data() + first,
                               std::min(per, n - first)));
  bool finite = convert(src, px, rgb.data(), per);
  for (auto& p : parts) finite = p.get() && finite;
  return finite;
}

std::string nonFiniteDecodeMessage(const std::string& model, bool fp16Decode) {
  return "the VAE decode of '" + model + "' produced non-finite values (inf/NaN)" +
         (fp16Decode ? std::string(": an fp16 overflow, as the original SDXL VAE has (its config's force_upcast makes "
                                   "sdgen decode in fp32); run with --precision fp32 or use a VAE fixed for fp16")
                     : std::string(""));
}

std::vector<uint8_t> decodedToRgb8(const std::vector<float>& decoded) {
  std::vector<uint8_t> rgb;
  postprocessDecoded(decoded, nullptr, rgb);
  return rgb;
}

}  // namespace sdgen::pipeline
