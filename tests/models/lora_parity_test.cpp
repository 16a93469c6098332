// LoRA against diffusers: tests/data/fixtures/lora_sd1.* hold the images diffusers' StableDiffusionPipeline
// renders on tiny-sd1 after load_lora_weights + fuse_lora (tests/reference/lora_fixtures.py: a kohya LoRA with
// LoCon and alpha, a kohya LoRA without alpha, a PEFT LoRA, two at once with a negative scale). sdgen with the
// same files and scales must render each within 1/255 mean absolute difference. The fixtures are made on the
// device machine (scripts/device/make-fixtures.sh --only lora); without them this test fails.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/pipeline/text_to_image.h"
#include "models/safetensors.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

class LoraParity : public test::VulkanTest {};

TEST_F(LoraParity, DiffusersFusedLorasRenderTheSameImages) {
  const std::string json = test::dataPath("fixtures/lora_sd1.json");
  ASSERT_TRUE(std::filesystem::exists(json))
      << json << " is missing: make it with scripts/device/make-fixtures.sh --only lora (docs/reference-fixtures.md)";
  const nlohmann::json meta = nlohmann::json::parse(std::ifstream(json));
  auto fx = models::SafetensorsFile::open(test::dataPath("fixtures/lora_sd1.safetensors"));
  ASSERT_EQ(meta.at("scheduler"), "euler");
  const auto& a = meta.at("args");
  pipeline::GenerationRequest req;
  req.prompt = a.at("prompt");
  req.negativePrompt = a.at("negative_prompt");
  req.steps = a.at("num_inference_steps");
  req.cfgScale = a.at("guidance_scale");
  req.seed = a.at("seed");
  req.width = a.at("width");
  req.height = a.at("height");
  req.sampler = sampling::SamplerKind::Euler;
  int runs = 0;
  for (const auto& run : meta.at("runs")) {
    const std::string id = run.at("id");
    pipeline::LoadOptions o{.modelPath = test::dataPath("tiny-sd1")};
    for (const auto& l : run.at("loras")) {
      const float scale = l.at("scale");
      o.loras.push_back({test::dataPath("fixtures/" + l.at("file").get<std::string>()), scale, scale});
    }
    pipeline::TextToImage t2i(ctx(), o);
    pipeline::Image img = t2i.generate(req);
    const std::vector<float> want = fx.readAsF32(run.at("tensors").at("image").get<std::string>());
    ASSERT_EQ(img.pixels.size(), want.size()) << id;
    double sum = 0, sumU8 = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      sum += std::abs(double(img.pixels[i]) - want[i]);
      sumU8 += std::abs(double(img.rgb[i]) - std::nearbyint(want[i] * 255.0)) / 255.0;
    }
    std::printf("    %-6s mean |sdgen - diffusers| = %.2e\n", id.c_str(), sum / double(want.size()));
    EXPECT_LE(sum / double(want.size()), 1.0 / 255) << id;
    EXPECT_LE(sumU8 / double(want.size()), 1.0 / 255) << id;
    if (id == "both") {  // the same two LoRAs as webui prompt tags, found in --lora-dir: the same image
      pipeline::TextToImage tagged(ctx(), {.modelPath = test::dataPath("tiny-sd1"),
                                           .loraDir = test::dataPath("fixtures")});
      pipeline::GenerationRequest withTags = req;
      withTags.prompt += " <lora:lora_sd1_kohya_locon:0.6> <lora:lora_sd1_peft:-0.5>";
      EXPECT_EQ(tagged.generate(withTags).pixels, img.pixels);
    }
    ++runs;
  }
  EXPECT_EQ(runs, 5);  // kohya, peft, plain, both, none
}

}  // namespace
}  // namespace sdgen
