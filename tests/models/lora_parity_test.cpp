// LoRA against diffusers: tests/data/fixtures/lora_sd1.* hold the images diffusers' StableDiffusionPipeline
// renders on tiny-sd1 after load_lora_weights + fuse_lora (tests/reference/lora_fixtures.py: a kohya LoRA with
// LoCon and alpha, a kohya LoRA without alpha, a PEFT LoRA, two at once with a negative scale); lora_sdxl.* those
// of StableDiffusionXLPipeline on tiny-sdxl (lora_sdxl_fixtures.py: kohya sd-scripts' SDXL layout — LDM-named
// UNet modules, lora_te1_, lora_te2_ — and PEFT's unet./text_encoder./text_encoder_2., alone and together). sdgen
// with the same files and scales must render each within 1/255 mean absolute difference. The fixtures are made
// by scripts/device/make-fixtures.sh --only lora,lorasdxl; without them this test fails.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/pipeline/text_to_image.h"
#include "models/safetensors.h"
#include "tests/models/diffusers_request.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

class LoraParity : public test::VulkanTest {
 protected:
  // Renders every run of fixtures/<stem>.json on `model` with its LoRA files and scales and compares with
  // diffusers' image; returns the runs' ids.
  std::vector<std::string> expectDiffusersImages(const std::string& stem, const std::string& model,
                                                 const std::function<void(const std::string&, const pipeline::Image&,
                                                                          const pipeline::GenerationRequest&)>& more = {}) {
    const std::string json = test::dataPath("fixtures/" + stem + ".json");
    EXPECT_TRUE(std::filesystem::exists(json))
        << json << " is missing: make it with scripts/device/make-fixtures.sh (docs/reference-fixtures.md)";
    if (!std::filesystem::exists(json)) return {};
    const nlohmann::json meta = nlohmann::json::parse(std::ifstream(json));
    auto fx = models::SafetensorsFile::open(test::dataPath("fixtures/" + stem + ".safetensors"));
    EXPECT_EQ(meta.at("scheduler"), "euler");
    const auto& a = meta.at("args");
    pipeline::GenerationRequest req = test::diffusersRequest(a);
    req.sampler = sampling::SamplerKind::Euler;
    std::vector<std::string> ids;
    for (const auto& run : meta.at("runs")) {
      const std::string id = run.at("id");
      pipeline::LoadOptions o{.modelPath = test::dataPath(model)};
      for (const auto& l : run.at("loras")) {
        const float scale = l.at("scale");
        o.loras.push_back({test::dataPath("fixtures/" + l.at("file").get<std::string>()), scale, scale});
      }
      pipeline::TextToImage t2i(ctx(), o);
      pipeline::Image img = t2i.generate(req);
      const std::vector<float> want = fx.readAsF32(run.at("tensors").at("image").get<std::string>());
      EXPECT_EQ(img.pixels.size(), want.size()) << stem << " " << id;
      if (img.pixels.size() != want.size()) continue;
      double sum = 0, sumU8 = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        sum += std::abs(double(img.pixels[i]) - want[i]);
        sumU8 += std::abs(double(img.rgb[i]) - std::nearbyint(want[i] * 255.0)) / 255.0;
      }
      std::printf("    %-10s %-6s mean |sdgen - diffusers| = %.2e\n", stem.c_str(), id.c_str(), sum / double(want.size()));
      EXPECT_LE(sum / double(want.size()), 1.0 / 255) << stem << " " << id;
      EXPECT_LE(sumU8 / double(want.size()), 1.0 / 255) << stem << " " << id;
      if (more) more(id, img, req);
      ids.push_back(id);
    }
    return ids;
  }
};

TEST_F(LoraParity, DiffusersFusedLorasRenderTheSameImages) {
  const auto ids = expectDiffusersImages("lora_sd1", "tiny-sd1", [&](const std::string& id, const pipeline::Image& img,
                                                                     const pipeline::GenerationRequest& req) {
    if (id != "both") return;
    // The same two LoRAs as webui prompt tags, found in --lora-dir: the same image.
    pipeline::TextToImage tagged(ctx(), {.modelPath = test::dataPath("tiny-sd1"), .loraDir = test::dataPath("fixtures")});
    pipeline::GenerationRequest withTags = req;
    withTags.prompt += " <lora:lora_sd1_kohya_locon:0.6> <lora:lora_sd1_peft:-0.5>";
    EXPECT_EQ(tagged.generate(withTags).pixels, img.pixels);
  });
  EXPECT_EQ(ids, (std::vector<std::string>{"kohya", "peft", "plain", "both", "none"}));
}

// SDXL: kohya's LDM-named UNet modules and both text encoders (lora_te1_, lora_te2_), PEFT's three components.
TEST_F(LoraParity, DiffusersFusedSdxlLorasRenderTheSameImages) {
  const auto ids = expectDiffusersImages("lora_sdxl", "tiny-sdxl");
  EXPECT_EQ(ids, (std::vector<std::string>{"kohya", "peft", "both", "none"}));
}

}  // namespace
}  // namespace sdgen
