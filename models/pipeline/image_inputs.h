#pragma once
// The host side of image to image and inpainting, as diffusers' StableDiffusionImg2ImgPipeline and
// StableDiffusionInpaintPipeline (0.42) prepare their inputs: pixels to [-1, 1], the mask binarized and
// downsampled, the masked image, the number of steps `strength` skips, and the encoder's sampled latents. No
// device work here, so every rule is testable on its own (tests/models/image_inputs_test.cpp).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sdgen::pipeline {

// 8-bit RGB pixels, row-major, top row first (what app/image_decode.h gives).
struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // width * height * 3
};

// Throws sdgen::Error naming `what` unless the image holds width * height * 3 bytes of a positive size.
void checkRgbImage(const RgbImage& image, const std::string& what);

// The init image and mask against the output size (docs/img2img.md: no resizing; width/height, when not 0, must
// equal the init image's size). Returns the output size; throws sdgen::Error naming the mismatch.
std::pair<int, int> checkImageInputSizes(const RgbImage& init, const std::optional<RgbImage>& mask, int width,
                                         int height);

// A mask for `what` (e.g. latents to refine) of a width x height image: throws sdgen::Error naming the sizes.
void checkMaskSize(const RgbImage& mask, int width, int height, const std::string& what);

// VaeImageProcessor.preprocess of an RGB image: v / 255 (float32) then 2x - 1; NHWC [H, W, 3].
std::vector<float> normalizedPixels(const RgbImage& image);

// PIL's convert("L"): (19595 R + 38470 G + 7471 B + 0x8000) >> 16, per pixel; [H, W].
std::vector<uint8_t> luma(const RgbImage& image);

// The mask processor (convert to L, / 255, binarize at 0.5): 1 = repaint, 0 = keep; [H, W].
std::vector<float> binaryMask(const RgbImage& mask);

// torch.nn.functional.interpolate(mask, size=(h / factor, w / factor)) in its default 'nearest' mode: output
// pixel (y, x) is input pixel (floor(y * H / h'), floor(x * W / w')). [H / factor, W / factor].
std::vector<float> downsampleNearest(const std::vector<float>& mask, int height, int width, int factor);

// init * (mask < 0.5) on the normalized pixels: repainted pixels become 0 (grey). NHWC [H, W, 3].
std::vector<float> maskedPixels(const std::vector<float>& pixels, const std::vector<float>& mask);

// Inpainting with an ordinary UNet, after a scheduler step (diffusers' 4-channel branch): latents = (1 - mask) *
// kept + mask * latents, kept = signal * imageLatents + noise * noise (add_noise), or the image latents themselves
// after the last step (`unnoised`). latents, imageLatents and noise NHWC [h, w, C]; mask [h, w] (1 = repaint).
void blendKeptRegion(std::vector<float>& latents, const std::vector<float>& mask, const std::vector<float>& imageLatents,
                     const std::vector<float>& noise, double signal, double noiseScale, bool unnoised);

// diffusers' get_timesteps: init_timestep = min(int(steps * strength), steps); the first step run is
// steps - init_timestep. Throws sdgen::Error when strength is outside [0, 1] or no step would run.
int firstStepForStrength(int steps, float strength);

// DiagonalGaussianDistribution(moments).sample(noise) * scalingFactor, in float32 as torch computes it:
// (mean + exp(0.5 * clamp(logvar, -30, 20)) * noise) * scalingFactor. `moments` NHWC [h, w, 2C] (mean, then
// log-variance), `noise` NCHW [C, h, w] (torch.randn's order); the result is NCHW [C, h, w].
std::vector<float> sampleLatents(const std::vector<float>& moments, const std::vector<float>& noise, int channels,
                                 int height, int width, float scalingFactor);

// NCHW [C, h, w] <-> NHWC [h, w, C] (the engine's latents are NHWC; torch draws in NCHW order).
std::vector<float> nchwToNhwc(const std::vector<float>& v, int channels, int height, int width);
std::vector<float> nhwcToNchw(const std::vector<float>& v, int channels, int height, int width);

}  // namespace sdgen::pipeline
