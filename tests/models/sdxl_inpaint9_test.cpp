// SDXL inpainting UNets (9 input channels, as diffusers/stable-diffusion-xl-1.0-inpainting-0.1) on
// tests/data/tiny-sdxl-inpaint against diffusers 0.42.1's StableDiffusionXLInpaintPipeline
// (tests/reference/sdxl_inpaint9_fixtures.py, `make_fixtures.py --only sdxlinpaint9`, fixtures/inpaint9_sdxl.*):
// the UNet reads cat([scale_model_input(latents), mask, masked image latents]) (no blending); Euler a 1.0, DDIM
// 0.75, DPM++ 2M 1.0 on the grey mask, every image within 1/255 mean absolute difference, from the diffusers folder
// (tiny-sdxl-inpaint's unet/, scheduler/ and model_index.json with tiny-sdxl's other components) and from a single
// file (tiny-sdxl's map with this UNet: conv_in [C, 9, 3, 3] tells the loader). The refiner after this base:
// tests/models/sdxl_refiner_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/formats/ldm_checkpoint.h"
#include "models/formats/model_files.h"
#include "models/pipeline/text_to_image.h"
#include "models/safetensors.h"
#include "tests/models/diffusers_request.h"
#include "tests/models/network_fixture.h"
#include "tests/models/sdxl_single_file.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using nlohmann::json;

// A PNG's pixels as the fixture stores them (int64): RGB [h, w, 3], or grey [h, w] as R = G = B.
pipeline::RgbImage fixturePixels(const json& args, const models::SafetensorsFile& fx, const std::string& name) {
  pipeline::RgbImage image{args.at("width"), args.at("height"), {}};
  const models::TensorInfo& t = fx.get(name);
  const auto bytes = fx.bytes(t);
  const int copies = t.elementCount() == size_t(image.width) * image.height ? 3 : 1;
  for (size_t i = 0; i < t.elementCount(); ++i) {
    int64_t v;
    std::memcpy(&v, bytes.data() + 8 * i, 8);
    image.rgb.insert(image.rgb.end(), copies, uint8_t(v));
  }
  return image;
}

TEST(SdxlInpaintFormats, FolderAndSingleFileOpenAsNineChannelSdxl) {
  const models::ModelFiles folder = models::openModel(test::tinySdxlInpaintFolder());
  EXPECT_TRUE(folder.isSdxl());
  EXPECT_FALSE(folder.isSdxlRefiner());
  EXPECT_EQ(folder.unetConfig.inChannels, 9);
  const models::LdmCheckpoint ckpt = models::openLdmCheckpoint(test::tinySdxlInpaintSingleFile());
  EXPECT_EQ(ckpt.family, models::LdmFamily::SDXL);
  EXPECT_EQ(ckpt.unetConfig.inChannels, 9);  // from conv_in's shape
  // The folder's configs must agree with the file: tiny-sdxl's (4 channels) do not.
  test::expectErrorContaining(
      [] { models::openModel(test::tinySdxlInpaintSingleFile(), {.configPath = test::dataPath("tiny-sdxl")}); },
      "in_channels");
}

class SdxlInpaint9Parity : public test::VulkanTest, public testing::WithParamInterface<bool> {};

TEST_P(SdxlInpaint9Parity, StableDiffusionXLInpaintPipelineWithANineChannelUNet) {
  const json meta = json::parse(std::ifstream(test::dataPath("fixtures/inpaint9_sdxl.json")));
  const models::SafetensorsFile fx = models::SafetensorsFile::open(test::dataPath("fixtures/inpaint9_sdxl.safetensors"));
  ASSERT_EQ(meta.at("unet_in_channels"), 9);
  const bool single = GetParam();
  pipeline::TextToImage t2i(ctx(), {.modelPath = single ? test::tinySdxlInpaintSingleFile() : test::tinySdxlInpaintFolder(),
                                    .configPath = single ? test::tinySdxlInpaintFolder() : ""});
  ASSERT_TRUE(t2i.isInpaintingModel());
  ASSERT_TRUE(t2i.isSdxlModel());
  const json& args = meta.at("args");
  const pipeline::RgbImage init = fixturePixels(args, fx, "init_rgb"), mask = fixturePixels(args, fx, "mask_as_l");
  for (const json& run : meta.at("runs")) {
    const std::string id = run.at("id");
    pipeline::GenerationRequest req = test::diffusersRequest(args);
    req.sampler = *sampling::parseSamplerKind(run.at("sampler").get<std::string>());
    req.strength = run.at("strength").get<float>();
    req.initImage = init;
    req.mask = mask;
    const pipeline::Image image = t2i.generate(req);
    const std::vector<float> want = fx.readAsF32(id + ".image");
    ASSERT_EQ(image.pixels.size(), want.size()) << id;
    double sum = 0, sumU8 = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      sum += std::abs(double(image.pixels[i]) - want[i]);
      sumU8 += std::abs(double(image.rgb[i]) - std::nearbyint(want[i] * 255.0)) / 255.0;
    }
    std::printf("[parity] inpaint9_sdxl %-12s %-16s mean |difference| x 255: %.3g\n", single ? "single file" : "folder",
                id.c_str(), 255 * sum / want.size());
    EXPECT_LE(sum / want.size(), 1.0 / 255) << id;
    EXPECT_LE(sumU8 / want.size(), 1.0 / 255) << id;
  }
  pipeline::GenerationRequest req = test::diffusersRequest(args);
  req.initImage = init;
  test::expectErrorContaining([&] { t2i.generate(req); }, "it needs an init image and a mask");
}

INSTANTIATE_TEST_SUITE_P(Tiny, SdxlInpaint9Parity, testing::Values(false, true),
                         [](const testing::TestParamInfo<bool>& info) { return info.param ? "single_file" : "folder"; });

}  // namespace
}  // namespace sdgen
