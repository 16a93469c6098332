// Text to image end to end against diffusers' StableDiffusionPipeline (fp32, CPU) on the tiny models: the same
// prompt, negative prompt, seed, steps and guidance give the same image within 1/255 mean absolute pixel
// difference, for every scheduler (tests/data/fixtures/pipeline_sd{1,2}.*). Bad sizes are clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/pipeline/text_to_image.h"
#include "models/safetensors.h"
#include "tests/models/diffusers_request.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

struct SchedulerCase {
  const char* fixtureName;
  sampling::SamplerKind kind;
  bool karras;
};

constexpr SchedulerCase kSchedulers[] = {{"ddim", sampling::SamplerKind::Ddim, false},
                                         {"euler", sampling::SamplerKind::Euler, false},
                                         {"euler_a", sampling::SamplerKind::EulerAncestral, false},
                                         {"dpmpp_2m", sampling::SamplerKind::DpmPP2M, false},
                                         {"dpmpp_2m_karras", sampling::SamplerKind::DpmPP2M, true}};

class PipelineParity : public test::VulkanTest, public testing::WithParamInterface<const char*> {};

TEST_P(PipelineParity, EverySchedulerMatchesDiffusers) {
  const std::string which = GetParam();
  nlohmann::json meta =
      nlohmann::json::parse(std::ifstream(test::dataPath("fixtures/pipeline_" + which + ".json")));
  auto fx = models::SafetensorsFile::open(test::dataPath("fixtures/pipeline_" + which + ".safetensors"));
  const auto& args = meta.at("args");
  pipeline::TextToImage t2i(ctx(), {.modelPath = test::dataPath("tiny-" + which)});
  for (const SchedulerCase& s : kSchedulers) {
    pipeline::GenerationRequest req = test::diffusersRequest(args);
    req.sampler = s.kind;
    req.karras = s.karras;
    int progressCalls = 0;
    pipeline::Image img = t2i.generate(req, [&](int step, int steps) {
      EXPECT_EQ(step, ++progressCalls);
      EXPECT_EQ(steps, req.steps);
    });
    EXPECT_EQ(progressCalls, req.steps);
    ASSERT_EQ(img.width, req.width);
    ASSERT_EQ(img.height, req.height);
    std::vector<float> want = fx.readAsF32(std::string(s.fixtureName) + ".image");
    ASSERT_EQ(img.pixels.size(), want.size());
    double sum = 0, sumU8 = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      sum += std::abs(double(img.pixels[i]) - want[i]);
      sumU8 += std::abs(double(img.rgb[i]) - std::nearbyint(want[i] * 255.0)) / 255.0;
    }
    EXPECT_LE(sum / want.size(), 1.0 / 255) << s.fixtureName;
    EXPECT_LE(sumU8 / want.size(), 1.0 / 255) << s.fixtureName;
    EXPECT_EQ(t2i.timings().stepMs.size(), size_t(req.steps));
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, PipelineParity, testing::Values("sd1", "sd2"));

class PipelineErrors : public test::VulkanTest {};

TEST_F(PipelineErrors, SizesThatAreNotMultiplesOfTheVaeScaleAreRefused) {
  pipeline::TextToImage t2i(ctx(), {.modelPath = test::dataPath("tiny-sd1")});
  pipeline::GenerationRequest req;
  req.prompt = "x";
  req.steps = 1;
  req.width = 15;  // the tiny VAE's scale factor is 2
  req.height = 16;
  test::expectErrorContaining([&] { t2i.generate(req); }, "15x16 is not a positive multiple of 2");
  req.width = 16;
  req.steps = 0;
  test::expectErrorContaining([&] { t2i.generate(req); }, "steps must be at least 1");
}

TEST_F(PipelineErrors, OddLatentSizesWorkAsInDiffusers) {
  // 18x14 pixels: latents 9x7, whose halves are rounded up and upsampled back to the skips' sizes.
  pipeline::TextToImage t2i(ctx(), {.modelPath = test::dataPath("tiny-sd1")});
  pipeline::GenerationRequest req;
  req.prompt = "a red circle";
  req.steps = 2;
  req.width = 14;
  req.height = 18;
  pipeline::Image img = t2i.generate(req);
  EXPECT_EQ(img.width, 14);
  EXPECT_EQ(img.height, 18);
  for (float v : img.pixels) ASSERT_TRUE(std::isfinite(v));
}

}  // namespace
}  // namespace sdgen

namespace sdgen {
namespace {

class PipelineReuse : public test::VulkanTest {};

TEST_F(PipelineReuse, RecordedStagesFollowTheRequest) {
  // One loaded pipeline, several requests: recorded encoders and steps are reused, and each generation must
  // still see its own clip skip, guidance and seed.
  pipeline::TextToImage t2i(ctx(), {.modelPath = test::dataPath("tiny-sd1")});
  pipeline::GenerationRequest req;
  req.prompt = "a red circle on a blue background";
  req.negativePrompt = "blurry";
  req.steps = 2;
  req.width = req.height = 16;
  req.seed = 5;
  req.sampler = sampling::SamplerKind::Euler;
  const pipeline::Image first = t2i.generate(req);
  req.clipSkip = 1;
  const pipeline::Image skipped = t2i.generate(req);
  req.clipSkip = 0;
  const pipeline::Image again = t2i.generate(req);
  EXPECT_EQ(first.pixels, again.pixels);
  EXPECT_NE(first.pixels, skipped.pixels);
  req.seed = 6;
  EXPECT_NE(t2i.generate(req).pixels, first.pixels);
}

}  // namespace
}  // namespace sdgen
