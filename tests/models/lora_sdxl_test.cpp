// SDXL LoRAs (issue 22) on tests/data/tiny-sdxl. Kohya's sd-scripts names SDXL's UNet modules by the LDM UNet
// ("lora_unet_input_blocks_4_1_transformer_blocks_0_attn1_to_q") and its text encoders lora_te1_ / lora_te2_;
// PEFT files say text_encoder_2. for the second encoder. References: the LDM names of fixtures/ldm_map_sdxl.json
// (the map whose single file diffusers' from_single_file loads back to the folder's weights), and the float64
// merge of lora_pipeline_test.cpp: the pipeline with the LoRAs must render what it renders from a copy of the
// model whose three components carry W + scale * alpha / rank * up . down computed in double.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>

#include "models/formats/model_files.h"
#include "models/lora/ldm_unet_names.h"
#include "models/lora/lora_file.h"
#include "models/lora/lora_targets.h"
#include "models/pipeline/text_to_image.h"
#include "tests/models/lora_test_support.h"
#include "tests/models/models_test_util.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The UNet's weights by their LDM module name, as the single-file map spells them ("input_blocks.4.0.in_layers.2"
// -> "down_blocks.1.resnets.0.conv1.weight").
std::map<std::string, std::string> ldmUnetWeightsOfTheMap() {
  const json map = json::parse(std::ifstream(test::dataPath("fixtures/ldm_map_sdxl.json")));
  const std::string prefix = "model.diffusion_model.";
  std::map<std::string, std::string> out;
  for (const json& t : map.at("tensors")) {
    const std::string key = t.at("key");
    if (key.rfind(prefix, 0) != 0 || key.size() < 7 || key.compare(key.size() - 7, 7, ".weight") != 0) continue;
    EXPECT_EQ(t.at("op"), "copy") << key;
    const json& src = t.at("sources").at(0);
    EXPECT_EQ(src.at(0), "unet") << key;
    out[key.substr(prefix.size(), key.size() - prefix.size() - 7)] = src.at(1);
  }
  return out;
}

TEST(LoraSdxlNames, LdmUnetModulesAreTheSingleFileMap) {
  models::ModelFiles m = models::openModel(test::dataPath("tiny-sdxl"));
  const std::map<std::string, std::string> want = ldmUnetWeightsOfTheMap();
  ASSERT_GT(want.size(), 100u);
  std::map<std::string, std::string> got;
  for (const auto& [module, weight] : lora::ldmUnetModules(m.unetWeights->names())) got[module] = weight;
  EXPECT_EQ(got, want);
}

// SD 1.x and 2.x levels (an up block without attention has its upsampler at ".1.conv"): the names are the keys
// the single-file checkpoints of tests/data store each diffusers weight under (models/formats/ldm_unet.cpp reads
// them so; diffusers' from_single_file loads those files to the folders' weights, tests/reference/ldm_names.py).
TEST(LoraSdxlNames, LdmUnetModulesAreTheSd1AndSd2SingleFilesKeys) {
  for (const char* model : {"tiny-sd1", "tiny-sd2"}) {
    models::ModelFiles folder = models::openModel(test::dataPath(model));
    models::OpenOptions o;
    o.configPath = test::dataPath(model);  // the tiny widths are no multiple of CLIP's 64-channel heads
    models::ModelFiles single = models::openModel(test::dataPath(std::string(model) + "-ldm.safetensors"), o);
    const std::vector<std::pair<std::string, std::string>> got = lora::ldmUnetModules(folder.unetWeights->names());
    size_t weights = 0;
    for (const std::string& n : folder.unetWeights->names()) weights += n.size() > 7 && n.ends_with(".weight");
    EXPECT_EQ(got.size(), weights) << model << ": every UNet weight has an LDM name";
    for (const auto& [module, weight] : got) {
      const std::vector<int64_t> shape = single.unetWeights->shape(weight);
      std::optional<models::RawWeight> raw = single.unetWeights->raw(weight, shape);
      ASSERT_TRUE(raw) << weight;
      EXPECT_EQ(raw->tensor->name, "model.diffusion_model." + module + ".weight") << model << " " << weight;
    }
  }
}

pipeline::GenerationRequest request() {
  pipeline::GenerationRequest req;
  req.prompt = "a red circle on a blue background";
  req.negativePrompt = "blurry";
  req.steps = 3;
  req.cfgScale = 5.f;
  req.seed = 1234;
  req.width = 24;
  req.height = 16;
  req.sampler = sampling::SamplerKind::Euler;
  return req;
}

class LoraSdxl : public test::VulkanTest {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir;
    models::ModelFiles m = models::openModel(test::dataPath("tiny-sdxl"));
    // kohya: the UNet under LDM names (the map's), both text encoders; PEFT: the UNet and text_encoder_2.
    std::map<std::string, std::string> ldmOf;  // diffusers module -> LDM module
    for (const auto& [ldm, weight] : ldmUnetWeightsOfTheMap()) ldmOf[weight.substr(0, weight.size() - 7)] = ldm;
    std::mt19937 rng(22);
    {
      test::SafetensorsWriter w;
      kohya_ = new test::LoraWeights;
      test::addLoraComponent(*m.unetWeights, "unet",
                             [&](const std::string& module) { return test::kohyaKey("lora_unet_", ldmOf.at(module)); },
                             4, 2.f, rng, w, *kohya_);
      test::addLoraComponent(*m.textEncoderWeights, "text_encoder",
                             [](const std::string& module) { return test::kohyaKey("lora_te1_", module); }, 4, 2.f, rng,
                             w, *kohya_);
      test::addLoraComponent(*m.textEncoder2Weights, "text_encoder_2",
                             [](const std::string& module) { return test::kohyaKey("lora_te2_", module); }, 4, 2.f, rng,
                             w, *kohya_);
      w.write(kohyaPath());
    }
    {
      test::SafetensorsWriter w;
      peft_ = new test::LoraWeights;
      test::addLoraComponent(*m.unetWeights, "unet", {}, 4, 4.f, rng, w, *peft_);
      test::addLoraComponent(*m.textEncoder2Weights, "text_encoder_2", {}, 4, 4.f, rng, w, *peft_);
      w.write(peftPath());
    }
  }
  static void TearDownTestSuite() {
    delete kohya_;
    delete peft_;
    delete dir_;
  }
  static std::string kohyaPath() { return dir_->file("sdxl_kohya.safetensors"); }
  static std::string peftPath() { return dir_->file("sdxl_peft.safetensors"); }
  static std::string mergedModel(const std::vector<std::pair<const test::LoraWeights*, float>>& loras) {
    const fs::path dst = dir_->file("merged");
    fs::copy(test::dataPath("tiny-sdxl"), dst, fs::copy_options::recursive);
    test::writeMergedLoras((dst / "unet" / "diffusion_pytorch_model.safetensors").string(), "unet", loras);
    test::writeMergedLoras((dst / "text_encoder" / "model.safetensors").string(), "text_encoder", loras);
    test::writeMergedLoras((dst / "text_encoder_2" / "model.safetensors").string(), "text_encoder_2", loras);
    return dst.string();
  }
  static test::TempDir* dir_;
  static test::LoraWeights *kohya_, *peft_;
};
test::TempDir* LoraSdxl::dir_ = nullptr;
test::LoraWeights* LoraSdxl::kohya_ = nullptr;
test::LoraWeights* LoraSdxl::peft_ = nullptr;

TEST_F(LoraSdxl, KohyaLdmNamesAndBothTextEncodersMatchTheirFloat64Merge) {
  // Every module of both files resolves, the second text encoder's included.
  models::ModelFiles m = models::openModel(test::dataPath("tiny-sdxl"));
  lora::LoraTargets t = lora::resolveLoras({{lora::readLoraFile(kohyaPath()), 0.7f, 0.7f},
                                            {lora::readLoraFile(peftPath()), -0.4f, -0.4f}},
                                           *m.unetWeights, m.textEncoderWeights.get(), m.textEncoder2Weights.get());
  EXPECT_FALSE(t.of(lora::Component::TextEncoder2).empty());
  EXPECT_EQ(t.size(), kohya_->size());  // the PEFT file adapts a subset of the kohya file's weights

  pipeline::TextToImage reference(ctx(), {.modelPath = mergedModel({{kohya_, 0.7f}, {peft_, -0.4f}})});
  const pipeline::Image want = reference.generate(request());
  pipeline::TextToImage plain(ctx(), {.modelPath = test::dataPath("tiny-sdxl")});
  const pipeline::Image none = plain.generate(request());
  pipeline::TextToImage withLoras(ctx(), {.modelPath = test::dataPath("tiny-sdxl"),
                                          .loras = {{kohyaPath(), 0.7f, 0.7f}, {peftPath(), -0.4f, -0.4f}}});
  const pipeline::Image got = withLoras.generate(request());
  ASSERT_EQ(got.pixels.size(), want.pixels.size());
  EXPECT_GT(test::meanAbs(none.pixels, want.pixels), 5.0 / 255) << "the LoRAs must change the image for this to test";
  EXPECT_LE(test::meanAbs(got.pixels, want.pixels), 1e-4);
  EXPECT_LE(test::relativeError(got.pixels, want.pixels), 2e-3);
}

TEST_F(LoraSdxl, TheSecondTextEncoderAloneChangesTheImage) {
  // A LoRA of text_encoder_2 only: its merge is what moves the image (the plumbing of the third component).
  models::ModelFiles m = models::openModel(test::dataPath("tiny-sdxl"));
  std::mt19937 rng(23);
  test::SafetensorsWriter w;
  test::LoraWeights te2;
  test::addLoraComponent(*m.textEncoder2Weights, "text_encoder_2", {}, 4, 4.f, rng, w, te2);
  const std::string path = dir_->file("te2_only.safetensors");
  w.write(path);
  const fs::path dst = dir_->file("merged_te2");
  fs::copy(test::dataPath("tiny-sdxl"), dst, fs::copy_options::recursive);
  test::writeMergedLoras((dst / "text_encoder_2" / "model.safetensors").string(), "text_encoder_2", {{&te2, 1.f}});
  pipeline::TextToImage reference(ctx(), {.modelPath = dst.string()});
  pipeline::TextToImage withLora(ctx(), {.modelPath = test::dataPath("tiny-sdxl"), .loras = {{path, 1.f, 1.f}}});
  pipeline::TextToImage plain(ctx(), {.modelPath = test::dataPath("tiny-sdxl")});
  const pipeline::Image want = reference.generate(request()), got = withLora.generate(request()),
                        none = plain.generate(request());
  EXPECT_GT(test::meanAbs(none.pixels, want.pixels), 1.0 / 255);
  EXPECT_LE(test::meanAbs(got.pixels, want.pixels), 1e-4);
}

// The SDXL refiner takes LoRAs of its own (sdgen --refiner-lora; app::RefinerPass::refinerLoadOptions): its UNet
// and its one text encoder, text_encoder_2 (PEFT names here). The ensemble (tiny-sdxl to the switch, then
// tiny-sdxl-refiner) must render what it renders with a copy of the refiner whose weights carry the float64 merge;
// a LoRA of a first text encoder is refused, naming the refiner's one encoder.
TEST_F(LoraSdxl, TheRefinerTakesItsOwnLoras) {
  models::ModelFiles r = models::openModel(test::dataPath("tiny-sdxl-refiner"));
  ASSERT_FALSE(r.textEncoderWeights);
  ASSERT_TRUE(r.textEncoder2Weights);
  std::mt19937 rng(24);
  test::SafetensorsWriter w;
  test::LoraWeights refinerLora;
  test::addLoraComponent(*r.unetWeights, "unet", {}, 4, 4.f, rng, w, refinerLora);
  test::addLoraComponent(*r.textEncoder2Weights, "text_encoder_2", {}, 4, 4.f, rng, w, refinerLora);
  const std::string path = dir_->file("refiner_peft.safetensors");
  w.write(path);
  const fs::path dst = dir_->file("merged_refiner");
  fs::copy(test::dataPath("tiny-sdxl-refiner"), dst, fs::copy_options::recursive);
  test::writeMergedLoras((dst / "unet" / "diffusion_pytorch_model.safetensors").string(), "unet", {{&refinerLora, 0.8f}});
  test::writeMergedLoras((dst / "text_encoder_2" / "model.safetensors").string(), "text_encoder_2",
                         {{&refinerLora, 0.8f}});

  pipeline::TextToImage base(ctx(), {.modelPath = test::dataPath("tiny-sdxl")});
  pipeline::GenerationRequest req = request();
  req.steps = 6;
  req.denoisingEnd = 0.5;
  const pipeline::Image baseOut = base.generate(req);
  req.denoisingEnd.reset();
  req.denoisingStart = 0.5;
  req.startLatents = baseOut.latents;
  auto refine = [&](const pipeline::LoadOptions& o) { return pipeline::TextToImage(ctx(), o).generate(req); };
  const pipeline::Image want = refine({.modelPath = dst.string()});
  const pipeline::Image got = refine({.modelPath = test::dataPath("tiny-sdxl-refiner"), .loras = {{path, 0.8f, 0.8f}}});
  const pipeline::Image none = refine({.modelPath = test::dataPath("tiny-sdxl-refiner")});
  ASSERT_EQ(got.pixels.size(), want.pixels.size());
  EXPECT_GT(test::meanAbs(none.pixels, want.pixels), 1.0 / 255) << "the LoRA must change the image for this to test";
  EXPECT_LE(test::meanAbs(got.pixels, want.pixels), 1e-4);
  // The base's kohya file adapts the first text encoder too: not a LoRA for the refiner.
  test::expectErrorContaining(
      [&] { pipeline::TextToImage(ctx(), {.modelPath = test::dataPath("tiny-sdxl-refiner"), .loras = {{kohyaPath(), 1.f, 1.f}}}); },
      "adapts a first text encoder (CLIP ViT-L), which this model does not have: the SDXL refiner has only the second");
}

TEST(LoraSdxlNames, ASecondTextEncoderLoraIsRefusedOnAModelWithOne) {
  models::ModelFiles sd1 = models::openModel(test::dataPath("tiny-sd1"));
  test::TempDir dir;
  test::SafetensorsWriter w;
  w.add("lora_te2_text_model_encoder_layers_0_self_attn_q_proj.lora_down.weight", {4, 32}, std::vector<float>(128, 0.f),
        "F16");
  w.add("lora_te2_text_model_encoder_layers_0_self_attn_q_proj.lora_up.weight", {32, 4}, std::vector<float>(128, 0.f),
        "F16");
  const std::string path = dir.file("te2.safetensors");
  w.write(path);
  test::expectErrorContaining(
      [&] { lora::resolveLoras({{lora::readLoraFile(path), 1.f, 1.f}}, *sd1.unetWeights, sd1.textEncoderWeights.get()); },
      "adapts a second text encoder (SDXL's), which this model does not have");
}

}  // namespace
}  // namespace sdgen
