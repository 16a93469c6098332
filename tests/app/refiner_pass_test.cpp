// app::RefinerPass, what `sdgen -m BASE --refiner REFINER --refiner-start F -i IMG --mask MASK` runs per image (and
// the server and the GUI through the generation worker), after inpainting: the fixture's init image and mask read
// by sdgen's own PNG decoder, tiny-sdxl inpainting to the switch (baseRequest) and the refiner continuing with the
// mask (refine), against diffusers 0.42.1's StableDiffusionXLInpaintPipeline base + refiner
// (fixtures/refiner_inpaint_sdxl.*, tests/reference/sdxl_refiner_inpaint_fixtures.py): every run within 1/255
// mean absolute difference, in floats and in the 8-bit pixels the PNG gets. A missing fixture fails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "app/image_decode.h"
#include "app/refiner_pass.h"
#include "models/safetensors.h"
#include "tests/models/diffusers_request.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using nlohmann::json;

std::string dataPath(const std::string& relative) { return std::string(SDGEN_SOURCE_DIR) + "/tests/data/" + relative; }

class RefinerPassInpaint : public test::VulkanTest {};

TEST_F(RefinerPassInpaint, BaseInpaintsAndTheRefinerKeepsTheMaskAsDiffusers) {
  const std::string metaPath = dataPath("fixtures/refiner_inpaint_sdxl.json");
  ASSERT_TRUE(std::filesystem::exists(metaPath))
      << "missing " << metaPath << ": make_fixtures.py --only sdxlrefinerinpaint (docs/reference-fixtures.md)";
  const json meta = json::parse(std::ifstream(metaPath));
  const models::SafetensorsFile fx = models::SafetensorsFile::open(dataPath("fixtures/refiner_inpaint_sdxl.safetensors"));
  const json& args = meta.at("args");
  const pipeline::RgbImage init = app::readImageFile(dataPath(args.at("init_image")));
  const pipeline::RgbImage mask = app::readImageFile(dataPath(args.at("mask_image")));

  pipeline::TextToImage base(ctx(), {.modelPath = dataPath("tiny-sdxl")});
  pipeline::TextToImage refiner(ctx(), {.modelPath = dataPath("tiny-sdxl-refiner")});
  const app::RefinerNames names{"--refiner 'tiny-sdxl-refiner'", "--refiner needs an SDXL base model"};
  for (const json& run : meta.at("runs")) {
    const std::string id = run.at("id");
    app::RefinerPass pass(refiner, names, run.at("switch").get<double>(), base);
    pipeline::GenerationRequest req = test::diffusersRequest(args);
    req.width = req.height = 0;  // the init image's size, as the CLI leaves -W/-H out
    req.sampler = *sampling::parseSamplerKind(run.at("sampler").get<std::string>());
    req.initImage = init;
    req.mask = mask;
    req.strength = run.at("strength").get<float>();
    const pipeline::Image latents = base.generate(pass.baseRequest(req));
    ASSERT_FALSE(latents.latents.empty()) << id;
    const pipeline::Image image = pass.refine(req, latents, {});
    const std::vector<float> want = fx.readAsF32(id + ".image");
    ASSERT_EQ(image.pixels.size(), want.size()) << id;
    double sum = 0, sumU8 = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      sum += std::abs(double(image.pixels[i]) - want[i]);
      sumU8 += std::abs(double(image.rgb[i]) - std::nearbyint(want[i] * 255.0)) / 255.0;
    }
    std::printf("[parity] RefinerPass inpaint %-20s mean |difference| x 255: %.3g (8-bit %.3g)\n", id.c_str(),
                255 * sum / want.size(), 255 * sumU8 / want.size());
    EXPECT_LE(sum / want.size(), 1.0 / 255) << id;
    EXPECT_LE(sumU8 / want.size(), 1.0 / 255) << id;
    // The refiner without the mask (the pass dropping it) would be 0.7-22.8/255 away: sdgen's is far nearer.
    const std::vector<float> unmasked = fx.readAsF32(id + ".unmasked_image");
    double fromUnmasked = 0;
    for (size_t i = 0; i < want.size(); ++i) fromUnmasked += std::abs(double(image.pixels[i]) - unmasked[i]);
    EXPECT_LT(4 * sum, fromUnmasked) << id << ": the refiner did not keep the mask";
  }
}

}  // namespace
}  // namespace sdgen
