// The samplers of issue 21 end to end on tests/data/tiny-sd1 against diffusers' StableDiffusionPipeline with
// Class.from_config(pipe.scheduler.config, **overrides) (tests/data/fixtures/samplerpipes_sd1.*, written by
// tests/reference/sampler_fixtures.py): the same image within 1/255 mean absolute difference, with one progress
// call per step however many UNet evaluations a step takes.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/pipeline/text_to_image.h"
#include "models/safetensors.h"
#include "tests/models/diffusers_request.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

class SamplerPipelineParity : public test::VulkanTest {};

TEST_F(SamplerPipelineParity, EveryNewSamplerMatchesDiffusers) {
  const std::string json = test::dataPath("fixtures/samplerpipes_sd1.json");
  const std::string tensors = test::dataPath("fixtures/samplerpipes_sd1.safetensors");
  ASSERT_TRUE(std::filesystem::exists(json) && std::filesystem::exists(tensors))
      << json << " missing: written by tests/reference/make_fixtures.py --only samplerpipes";
  const nlohmann::json meta = nlohmann::json::parse(std::ifstream(json));
  auto fx = models::SafetensorsFile::open(tensors);
  const auto& args = meta.at("args");
  pipeline::TextToImage t2i(ctx(), {.modelPath = test::dataPath("tiny-sd1")});
  ASSERT_FALSE(meta.at("runs").empty());
  for (const auto& run : meta.at("runs")) {
    std::string name = run.at("sampler");
    SCOPED_TRACE(name);
    pipeline::GenerationRequest req = test::diffusersRequest(args);
    if (name.ends_with("_karras")) {
      req.karras = true;
      name.resize(name.size() - 7);
    } else if (name.ends_with("_exp")) {
      req.exponential = true;
      name.resize(name.size() - 4);
    }
    req.sampler = *sampling::parseSamplerKind(name);
    int progressCalls = 0;
    pipeline::Image img = t2i.generate(req, [&](int step, int steps) {
      EXPECT_EQ(step, ++progressCalls);
      EXPECT_EQ(steps, req.steps);
    });
    EXPECT_EQ(progressCalls, req.steps);
    const std::vector<float> want = fx.readAsF32(run.at("image").get<std::string>());
    ASSERT_EQ(img.pixels.size(), want.size());
    double sum = 0;
    for (size_t i = 0; i < want.size(); ++i) sum += std::abs(double(img.pixels[i]) - want[i]);
    EXPECT_LE(sum / want.size(), 1.0 / 255);
    std::printf("    %-22s MAE %.3g\n", run.at("sampler").get<std::string>().c_str(), sum / want.size());
  }
}

// No diffusers fixture has an init image for these samplers: image to image and inpainting must run from the
// step strength selects (progress counts the steps run), keep the latents finite and, with an all-black mask
// (keep everything), give back the init image's own reconstruction whatever the sampler.
TEST_F(SamplerPipelineParity, ImageToImageAndInpaintingStartMidSchedule) {
  pipeline::TextToImage t2i(ctx(), {.modelPath = test::dataPath("tiny-sd1")});
  pipeline::GenerationRequest req;
  req.prompt = "a red circle";
  req.steps = 4;
  req.width = req.height = 16;
  req.seed = 9;
  pipeline::RgbImage init{16, 16, std::vector<uint8_t>(16 * 16 * 3)};
  for (size_t i = 0; i < init.rgb.size(); ++i) init.rgb[i] = uint8_t((i * 37) % 251);
  req.initImage = init;
  req.strength = 0.5f;  // int(4 * 0.5) = 2 steps run, from step 2
  std::vector<float> kept;
  for (auto kind : {sampling::SamplerKind::Euler, sampling::SamplerKind::Heun, sampling::SamplerKind::DpmPPSde,
                    sampling::SamplerKind::UniPC}) {
    SCOPED_TRACE(sampling::samplerFlagName(kind));
    req.sampler = kind;
    req.mask.reset();
    int calls = 0;
    pipeline::Image img = t2i.generate(req, [&](int step, int steps) {
      EXPECT_EQ(step, ++calls);
      EXPECT_EQ(steps, 2);
    });
    EXPECT_EQ(calls, 2);
    for (float v : img.pixels) ASSERT_TRUE(std::isfinite(v));
    req.mask = pipeline::RgbImage{16, 16, std::vector<uint8_t>(16 * 16 * 3, 0)};
    const pipeline::Image inpainted = t2i.generate(req);
    if (kept.empty()) kept = inpainted.pixels;
    ASSERT_EQ(inpainted.pixels.size(), kept.size());
    for (size_t i = 0; i < kept.size(); ++i) ASSERT_NEAR(inpainted.pixels[i], kept[i], 1e-5) << i;
  }
}

}  // namespace
}  // namespace sdgen
