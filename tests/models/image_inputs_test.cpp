// The host-side rules of image to image and inpainting (models/pipeline/image_inputs.h), worked out by hand from
// diffusers' and PIL's code; the parity fixtures (tests/app/img2img_parity_test.cpp) check them against the real
// thing as well.
#include <gtest/gtest.h>

#include "engine/error.h"
#include "models/pipeline/image_inputs.h"
#include "models/sampling/sampler.h"
#include "tests/test_support.h"

namespace sdgen::pipeline {
namespace {

RgbImage pixels(int w, int h, std::vector<uint8_t> rgb) { return {w, h, std::move(rgb)}; }

TEST(ImageInputs, LumaIsPilsConvertL) {
  // (19595 R + 38470 G + 7471 B + 0x8000) >> 16
  EXPECT_EQ(luma(pixels(1, 1, {127, 128, 128}))[0], 128);  // 128.2
  EXPECT_EQ(luma(pixels(1, 1, {130, 126, 127}))[0], 127);  // 127.8
  EXPECT_EQ(luma(pixels(1, 1, {255, 0, 255}))[0], 105);
  for (int v : {0, 1, 127, 128, 254, 255})  // grey stays itself
    EXPECT_EQ(luma(pixels(1, 1, {uint8_t(v), uint8_t(v), uint8_t(v)}))[0], v);
}

TEST(ImageInputs, MaskIsBinarizedAtHalfAndDownsampledNearest) {
  // 127/255 < 0.5 <= 128/255
  EXPECT_EQ(binaryMask(pixels(2, 1, {127, 127, 127, 128, 128, 128})), (std::vector<float>{0, 1}));
  // 4x4 -> 2x2 takes the top-left pixel of each 2x2 block
  const std::vector<float> m = {1, 0, 0, 0,  //
                                0, 0, 0, 0,  //
                                0, 1, 1, 0,  //
                                1, 1, 1, 0};
  EXPECT_EQ(downsampleNearest(m, 4, 4, 2), (std::vector<float>{1, 0, 0, 1}));
  test::expectErrorContaining([&] { downsampleNearest(m, 4, 4, 3); }, "cannot be reduced by 3");
}

TEST(ImageInputs, PixelsAndMaskedPixels) {
  const std::vector<float> p = normalizedPixels(pixels(2, 1, {0, 255, 51, 128, 128, 128}));
  EXPECT_EQ(p[0], -1.0f);
  EXPECT_EQ(p[1], 1.0f);
  EXPECT_EQ(p[2], 2.0f * (51.0f / 255.0f) - 1.0f);
  const std::vector<float> masked = maskedPixels(p, {0, 1});  // the second pixel is repainted: 0 (grey)
  EXPECT_EQ(masked, (std::vector<float>{p[0], p[1], p[2], 0, 0, 0}));
}

TEST(ImageInputs, StrengthSelectsTheFirstStepAsDiffusers) {
  EXPECT_EQ(firstStepForStrength(6, 0.75f), 2);  // int(4.5) = 4 steps run
  EXPECT_EQ(firstStepForStrength(6, 0.5f), 3);
  EXPECT_EQ(firstStepForStrength(6, 1.0f), 0);
  EXPECT_EQ(firstStepForStrength(10, 0.7f), 3);  // Python: int(10 * 0.7) = int(7.000000000000001) = 7
  EXPECT_EQ(firstStepForStrength(20, 0.3f), 14);  // int(6.000000000000001) = 6
  test::expectErrorContaining([] { firstStepForStrength(6, 0.1f); }, "leaves no denoising step");
  test::expectErrorContaining([] { firstStepForStrength(6, 0.0f); }, "leaves no denoising step");
  test::expectErrorContaining([] { firstStepForStrength(6, 1.5f); }, "strength must be in [0, 1]");
}

TEST(ImageInputs, SampledLatentsAreMeanPlusStdTimesNoiseScaled) {
  // one pixel, 2 channels: moments NHWC (mean0, mean1, logvar0, logvar1); logvar clamped to [-30, 20]
  const std::vector<float> moments = {0.5f, -1.0f, std::log(4.0f), 100.0f};
  const std::vector<float> z = sampleLatents(moments, {1.0f, 0.0f}, 2, 1, 1, 0.5f);
  EXPECT_FLOAT_EQ(z[0], 0.5f * (0.5f + 2.0f * 1.0f));
  EXPECT_FLOAT_EQ(z[1], 0.5f * -1.0f);
  const std::vector<float> nchw = {1, 2, 3, 4, 5, 6};  // C=2, H=1, W=3
  EXPECT_EQ(nchwToNhwc(nchw, 2, 1, 3), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(nhwcToNchw(nchwToNhwc(nchw, 2, 1, 3), 2, 1, 3), nchw);
}

TEST(ImageInputs, BadImagesAreNamed) {
  test::expectErrorContaining([] { checkRgbImage(pixels(2, 2, {1, 2, 3}), "the init image"); },
                              "the init image: 3 bytes of pixels for a 2x2 RGB image");
  test::expectErrorContaining([] { checkRgbImage(pixels(0, 2, {}), "the mask"); }, "the mask: the image size 0x2");
}

// diffusers' 4-channel inpainting blend: (1 - mask) * add_noise(image latents, noise) + mask * latents, the image
// latents as they are after the last step; the mask [h, w] covers every channel of the NHWC latents.
TEST(ImageInputs, KeptRegionBlendsImageLatentsOutsideTheMask) {
  std::vector<float> latents = {1, 2, 3, 4};  // h = 1, w = 2, C = 2
  const std::vector<float> mask = {0, 1}, image = {10, 20, 30, 40}, noise = {-1, -2, -3, -4};
  blendKeptRegion(latents, mask, image, noise, 0.5, 2.0, false);
  EXPECT_EQ(latents, (std::vector<float>{0.5f * 10 - 2, 0.5f * 20 - 4, 3, 4}));
  latents = {1, 2, 3, 4};
  blendKeptRegion(latents, mask, image, {}, 0.5, 2.0, true);  // unnoised: no noise needed
  EXPECT_EQ(latents, (std::vector<float>{10, 20, 3, 4}));
  test::expectErrorContaining([&] { blendKeptRegion(latents, {0, 1, 1}, image, noise, 1, 0, false); },
                              "blendKeptRegion: 4 latents");
  // The refiner's mask must be of the image the latents were made at.
  test::expectErrorContaining([] { checkMaskSize(pixels(2, 1, std::vector<uint8_t>(6)), 4, 2, "the latents"); },
                              "the mask is 2x1 but the latents are of a 4x2 image; they must be the same size");
  checkMaskSize(pixels(4, 2, std::vector<uint8_t>(24)), 4, 2, "the latents");
}

}  // namespace
}  // namespace sdgen::pipeline
