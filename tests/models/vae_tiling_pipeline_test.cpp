// When the pipeline tiles the VAE (docs/vae-tiling.md), on the tiny SD1 model (16-pixel tiles): --vae-tiling tiles
// images larger than one tile, decoding and image-to-image encoding, and leaves one-tile images as they were;
// --no-vae-tiling never tiles; Auto tiles nothing whose untiled decode fits (every tiny decode does). The tiles
// themselves are checked against diffusers in vae_tiling_parity_test.cpp.
#include <algorithm>

#include <gtest/gtest.h>

#include "models/pipeline/text_to_image.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using pipeline::VaeTilingMode;

class VaeTilingPipeline : public test::VulkanTest {
 protected:
  pipeline::GenerationRequest request(int width, int height, VaeTilingMode mode) {
    pipeline::GenerationRequest req;
    req.prompt = "a red circle on a blue background";
    req.steps = 2;
    req.width = width;
    req.height = height;
    req.seed = 21;
    req.sampler = sampling::SamplerKind::Euler;
    req.vaeTiling = mode;
    return req;
  }
};

TEST_F(VaeTilingPipeline, ModesDecideAsDiffusersUseTiling) {
  pipeline::TextToImage t2i(ctx(), {.modelPath = test::dataPath("tiny-sd1")});
  const pipeline::Image off = t2i.generate(request(48, 32, VaeTilingMode::Off));
  const pipeline::Image on = t2i.generate(request(48, 32, VaeTilingMode::On));
  const pipeline::Image automatic = t2i.generate(request(48, 32, VaeTilingMode::Auto));
  EXPECT_FALSE(off.vaeTiled);
  EXPECT_TRUE(on.vaeTiled);
  EXPECT_FALSE(automatic.vaeTiled);
  ASSERT_EQ(on.pixels.size(), off.pixels.size());
  EXPECT_NE(on.pixels, off.pixels);  // the same latents decoded in blended tiles
  EXPECT_EQ(automatic.pixels, off.pixels);
  // One tile (16x16 pixels = 8x8 latents, the tile size): diffusers decodes it whole even with tiling on.
  const pipeline::Image small = t2i.generate(request(16, 16, VaeTilingMode::On));
  EXPECT_FALSE(small.vaeTiled);
  EXPECT_EQ(small.pixels, t2i.generate(request(16, 16, VaeTilingMode::Off)).pixels);
}

TEST_F(VaeTilingPipeline, ImageToImageEncodesInTiles) {
  pipeline::TextToImage t2i(ctx(), {.modelPath = test::dataPath("tiny-sd1")});
  pipeline::RgbImage init{40, 24, {}};
  for (int i = 0; i < init.width * init.height * 3; ++i) init.rgb.push_back(uint8_t((i * 37) % 251));
  auto req = [&](VaeTilingMode mode) {
    pipeline::GenerationRequest r = request(0, 0, mode);
    r.initImage = init;
    r.strength = 0.5f;
    return r;
  };
  const pipeline::Image on = t2i.generate(req(VaeTilingMode::On)), off = t2i.generate(req(VaeTilingMode::Off));
  EXPECT_TRUE(on.vaeTiled);
  EXPECT_EQ(on.width, 40);
  EXPECT_NE(on.pixels, off.pixels);
}

// The untiled decode written to device memory and copied into the host-visible image by its own submission
// (discrete GPUs' default, LoadOptions::decodeThroughDeviceMemory) gives the image the direct write gives, on
// its first run (recorded) and on a replay; a tiled decode of the same pipeline is unaffected.
TEST_F(VaeTilingPipeline, DecodeThroughDeviceMemoryEqualsTheDirectWrite) {
  pipeline::TextToImage direct(ctx(), {.modelPath = test::dataPath("tiny-sd1"), .decodeThroughDeviceMemory = false});
  pipeline::TextToImage staged(ctx(), {.modelPath = test::dataPath("tiny-sd1"), .decodeThroughDeviceMemory = true});
  const pipeline::Image want = direct.generate(request(48, 32, VaeTilingMode::Off));
  ASSERT_EQ(want.pixels.size(), size_t(48 * 32 * 3));
  EXPECT_NE(*std::min_element(want.pixels.begin(), want.pixels.end()),
            *std::max_element(want.pixels.begin(), want.pixels.end()));
  for (int run = 0; run < 2; ++run) {
    const pipeline::Image got = staged.generate(request(48, 32, VaeTilingMode::Off));
    EXPECT_FALSE(got.vaeTiled);
    EXPECT_EQ(got.pixels, want.pixels) << "run " << run;
    EXPECT_EQ(got.rgb, want.rgb) << "run " << run;
  }
  EXPECT_EQ(staged.generate(request(48, 32, VaeTilingMode::On)).pixels,
            direct.generate(request(48, 32, VaeTilingMode::On)).pixels);
  // The frontends' request: the bytes alone (GenerationRequest::floatPixels off), the same bytes; also where the
  // latent-preview fit needs the floats for a moment.
  pipeline::GenerationRequest bytesOnly = request(48, 32, VaeTilingMode::Off);
  bytesOnly.floatPixels = false;
  const pipeline::Image bytes = staged.generate(bytesOnly);
  EXPECT_TRUE(bytes.pixels.empty());
  EXPECT_EQ(bytes.rgb, want.rgb);
  pipeline::GenerationHooks hooks;
  int previews = 0;
  hooks.preview = [&](const pipeline::LatentPreview&) { ++previews; };
  const pipeline::Image withPreview = staged.generate(bytesOnly, hooks);
  EXPECT_GT(previews, 0);
  EXPECT_TRUE(withPreview.pixels.empty());
  EXPECT_EQ(withPreview.rgb, want.rgb);
}

}  // namespace
}  // namespace sdgen
