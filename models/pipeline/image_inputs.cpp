#include "models/pipeline/image_inputs.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cmath>
#include <sstream>

#include "engine/error.h"

namespace sdgen::pipeline {

void checkRgbImage(const RgbImage& image, const std::string& what) {
  if (image.width <= 0 || image.height <= 0)
    throw Error(what + ": the image size " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                " is not positive");
  if (image.rgb.size() != size_t(image.width) * size_t(image.height) * 3)
    throw Error(what + ": " + std::to_string(image.rgb.size()) + " bytes of pixels for a " +
                std::to_string(image.width) + "x" + std::to_string(image.height) + " RGB image");
}

namespace {
std::string sizeString(int width, int height) { return std::to_string(width) + "x" + std::to_string(height); }
}  // namespace

std::pair<int, int> checkImageInputSizes(const RgbImage& init, const std::optional<RgbImage>& mask, int width,
                                         int height) {
  checkRgbImage(init, "the init image");
  if ((width && width != init.width) || (height && height != init.height))
    throw Error("the init image is " + sizeString(init.width, init.height) + " but the output size asked for is " +
                sizeString(width ? width : init.width, height ? height : init.height) +
                "; sdgen does not resize: give an init image of the output size, or leave the size out");
  if (mask) {
    checkRgbImage(*mask, "the mask");
    if (mask->width != init.width || mask->height != init.height)
      throw Error("the mask is " + sizeString(mask->width, mask->height) + " but the init image is " +
                  sizeString(init.width, init.height) + "; they must be the same size");
  }
  return {init.width, init.height};
}

void checkMaskSize(const RgbImage& mask, int width, int height, const std::string& what) {
  checkRgbImage(mask, "the mask");
  if (mask.width != width || mask.height != height)
    throw Error("the mask is " + sizeString(mask.width, mask.height) + " but " + what + " are of a " +
                sizeString(width, height) + " image; they must be the same size");
}

std::vector<float> normalizedPixels(const RgbImage& image) {
  std::vector<float> out(image.rgb.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const float unit = float(image.rgb[i]) / 255.0f;  // numpy: float32 array / 255.0 stays float32
    out[i] = 2.0f * unit - 1.0f;
  }
  return out;
}

std::vector<uint8_t> luma(const RgbImage& image) {
  const size_t n = size_t(image.width) * size_t(image.height);
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t r = image.rgb[3 * i], g = image.rgb[3 * i + 1], b = image.rgb[3 * i + 2];
    out[i] = static_cast<uint8_t>((r * 19595u + g * 38470u + b * 7471u + 0x8000u) >> 16);
  }
  return out;
}

std::vector<float> binaryMask(const RgbImage& mask) {
  std::vector<uint8_t> l = luma(mask);
  std::vector<float> out(l.size());
  for (size_t i = 0; i < l.size(); ++i) out[i] = float(l[i]) / 255.0f >= 0.5f ? 1.0f : 0.0f;
  return out;
}

std::vector<float> downsampleNearest(const std::vector<float>& mask, int height, int width, int factor) {
  if (factor <= 0 || height % factor || width % factor || mask.size() != size_t(height) * size_t(width))
    throw Error("downsampleNearest: a " + std::to_string(width) + "x" + std::to_string(height) + " mask of " +
                std::to_string(mask.size()) + " values cannot be reduced by " + std::to_string(factor));
  const int h = height / factor, w = width / factor;
  std::vector<float> out(size_t(h) * size_t(w));
  // torch's nearest: src = floor(dst * (in / out)) with the scale in float; for an integer factor that is
  // dst * factor exactly.
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) out[size_t(y) * w + x] = mask[size_t(y) * factor * width + size_t(x) * factor];
  return out;
}

std::vector<float> maskedPixels(const std::vector<float>& pixels, const std::vector<float>& mask) {
  if (pixels.size() != mask.size() * 3)
    throw Error("maskedPixels: " + std::to_string(pixels.size()) + " pixel values for a mask of " +
                std::to_string(mask.size()));
  std::vector<float> out(pixels.size());
  for (size_t i = 0; i < mask.size(); ++i)
    for (int c = 0; c < 3; ++c) out[3 * i + c] = mask[i] < 0.5f ? pixels[3 * i + c] : 0.0f;
  return out;
}

void blendKeptRegion(std::vector<float>& latents, const std::vector<float>& mask, const std::vector<float>& imageLatents,
                     const std::vector<float>& noise, double signal, double noiseScale, bool unnoised) {
  const size_t n = latents.size(), c = mask.empty() ? 0 : n / mask.size();
  if (c == 0 || c * mask.size() != n || imageLatents.size() != n || (!unnoised && noise.size() != n))
    throw Error("blendKeptRegion: " + std::to_string(n) + " latents, " + std::to_string(imageLatents.size()) +
                " image latents and " + std::to_string(noise.size()) + " noise values for a mask of " +
                std::to_string(mask.size()));
  for (size_t i = 0; i < n; ++i) {
    const float m = mask[i / c];
    const float kept = unnoised ? imageLatents[i] : float(signal) * imageLatents[i] + float(noiseScale) * noise[i];
    latents[i] = (1.0f - m) * kept + m * latents[i];
  }
}

int firstStepForStrength(int steps, float strength) {
  if (!(strength >= 0.0f && strength <= 1.0f)) {
    std::ostringstream s;
    s << "strength must be in [0, 1], got " << strength;
    throw Error(s.str());
  }
  // Python: int(num_inference_steps * strength), the product in double (strength is a Python float; sdgen's
  // strength is the float32 nearest the decimal the user wrote, so that product is taken on that decimal).
  char decimal[32];
  auto [end, ec] = std::to_chars(decimal, decimal + sizeof decimal, strength);  // shortest: 0.7f -> "0.7"
  const double exact = ec == std::errc() ? std::strtod(std::string(decimal, end).c_str(), nullptr) : strength;
  const int initTimestep = std::min(static_cast<int>(steps * exact), steps);
  const int first = std::max(steps - initTimestep, 0);
  if (first >= steps) {
    std::ostringstream s;
    s << "strength " << strength << " with " << steps << " steps leaves no denoising step (steps x strength must "
      << "be at least 1)";
    throw Error(s.str());
  }
  return first;
}

std::vector<float> sampleLatents(const std::vector<float>& moments, const std::vector<float>& noise, int channels,
                                 int height, int width, float scalingFactor) {
  const size_t hw = size_t(height) * size_t(width);
  if (moments.size() != hw * 2 * channels || noise.size() != hw * channels)
    throw Error("sampleLatents: " + std::to_string(moments.size()) + " moments and " + std::to_string(noise.size()) +
                " noise values for " + std::to_string(channels) + " channels of " + std::to_string(width) + "x" +
                std::to_string(height));
  std::vector<float> out(hw * channels);
  for (int c = 0; c < channels; ++c)
    for (size_t i = 0; i < hw; ++i) {
      const float mean = moments[i * 2 * channels + c];
      const float logvar = std::clamp(moments[i * 2 * channels + channels + c], -30.0f, 20.0f);
      const float stdev = std::exp(0.5f * logvar);
      const float x = mean + stdev * noise[size_t(c) * hw + i];
      out[size_t(c) * hw + i] = scalingFactor * x;
    }
  return out;
}

std::vector<float> nchwToNhwc(const std::vector<float>& v, int channels, int height, int width) {
  const size_t hw = size_t(height) * size_t(width);
  std::vector<float> out(v.size());
  for (int c = 0; c < channels; ++c)
    for (size_t i = 0; i < hw; ++i) out[i * channels + c] = v[size_t(c) * hw + i];
  return out;
}

std::vector<float> nhwcToNchw(const std::vector<float>& v, int channels, int height, int width) {
  const size_t hw = size_t(height) * size_t(width);
  std::vector<float> out(v.size());
  for (int c = 0; c < channels; ++c)
    for (size_t i = 0; i < hw; ++i) out[size_t(c) * hw + i] = v[i * channels + c];
  return out;
}

}  // namespace sdgen::pipeline
