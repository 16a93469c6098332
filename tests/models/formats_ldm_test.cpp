// Single-file LDM checkpoints against diffusers folders: the same synthetic weights written in both layouts (the
// layouts enumerated independently in formats_synthetic.cpp) must give, through openModel, the same tensors under
// every diffusers name and the same configs.
#include <gtest/gtest.h>

#include "models/config/config_files.h"
#include "models/formats/ldm_checkpoint.h"
#include "models/formats/mapped_weights.h"
#include "models/formats/model_files.h"
#include "models/tokenizer/clip_tokenizer.h"
#include "tests/models/formats_synthetic.h"
#include "tests/models/models_test_util.h"
#include "tests/test_support.h"

namespace sdgen::models {
namespace {

using test::TempDir;

struct BothLayouts {
  TempDir dir;
  test::SyntheticModel model;
  std::string folder, file;
  explicit BothLayouts(bool sd2) : model(test::syntheticModel(sd2)) {
    folder = dir.file("diffusers");
    file = dir.file("model.safetensors");
    test::writeDiffusersFolder(model, folder);
    test::writeLdmCheckpoint(model, file);
  }
  OpenOptions singleFileOptions() const {
    OpenOptions o;
    o.tokenizerPath = folder + "/tokenizer";
    return o;
  }
};

class LdmVersusDiffusers : public ::testing::TestWithParam<bool> {};

TEST_P(LdmVersusDiffusers, EveryTensorAndConfigAgree) {
  const bool sd2 = GetParam();
  BothLayouts m(sd2);
  ModelFiles folder = openModel(m.folder);
  ModelFiles single = openModel(m.file, m.singleFileOptions());
  EXPECT_EQ(folder.kind, ModelSourceKind::DiffusersFolder);
  EXPECT_EQ(single.kind, ModelSourceKind::SingleFile);
  EXPECT_EQ(single.architecture, sd2 ? "SD 2.x" : "SD 1.x");
  EXPECT_EQ(single.name, "model");
  EXPECT_EQ(folder.name, "diffusers");

  // The folder holds exactly the synthetic parameters with their values...
  for (auto [source, params] : {std::pair{folder.textEncoderWeights.get(), &m.model.text},
                                {folder.unetWeights.get(), &m.model.unet},
                                {folder.vaeWeights.get(), &m.model.vae}}) {
    auto expected = test::expectedValues(*params);
    EXPECT_EQ(source->names().size(), expected.size());
    for (const auto& [name, values] : expected) ASSERT_EQ(source->read(name, source->shape(name)), values) << name;
  }
  // ... and the single file maps every diffusers name to the same shape and values.
  test::expectSameWeights(*folder.textEncoderWeights, *single.textEncoderWeights);
  test::expectSameWeights(*folder.unetWeights, *single.unetWeights);
  test::expectSameWeights(*folder.vaeWeights, *single.vaeWeights);

  test::expectSameConfig(folder.textEncoderConfig, single.textEncoderConfig);
  test::expectSameConfig(folder.unetConfig, single.unetConfig);
  test::expectSameConfig(folder.vaeConfig, single.vaeConfig);
  test::expectSameConfig(folder.scheduler, single.scheduler);
}

INSTANTIATE_TEST_SUITE_P(Sd1AndSd2, LdmVersusDiffusers, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Sd2" : "Sd1"; });

TEST(LdmCheckpoint, InfersSd1Architecture) {
  BothLayouts m(false);
  LdmCheckpoint c = openLdmCheckpoint(m.file);
  EXPECT_EQ(c.family, LdmFamily::SD1);
  EXPECT_EQ(c.unetConfig.blockOutChannels, (std::vector<int>{64, 64, 128}));
  EXPECT_EQ(c.unetConfig.downBlockTypes,
            (std::vector<std::string>{"CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"}));
  EXPECT_EQ(c.unetConfig.upBlockTypes,
            (std::vector<std::string>{"UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"}));
  EXPECT_EQ(c.unetConfig.layersPerBlock, (std::vector<int>{2, 2, 2}));
  EXPECT_EQ(c.unetConfig.attentionHeads, (std::vector<int>{8, 8, 8}));  // SD 1.x: num_heads = 8
  EXPECT_EQ(c.unetConfig.crossAttentionDim, 64);
  EXPECT_FALSE(c.unetConfig.useLinearProjection);
  EXPECT_FALSE(c.unetConfig.upcastAttention);
  EXPECT_EQ(c.unetConfig.sampleSize, 256);  // 512 pixels / VAE scale 2
  EXPECT_EQ(c.vaeConfig.blockOutChannels, (std::vector<int>{32, 64}));
  EXPECT_EQ(c.vaeConfig.layersPerBlock, 1);
  EXPECT_EQ(c.vaeConfig.sampleSize, 512);
  EXPECT_EQ(c.textEncoderConfig.numHiddenLayers, 2);
  EXPECT_EQ(c.textEncoderConfig.numAttentionHeads, 1);  // width 64 / 64
  EXPECT_EQ(c.textEncoderConfig.hiddenAct, "quick_gelu");
  EXPECT_EQ(c.textEncoderConfig.padTokenId, 49407);
  // The VAE's 1x1-conv attention weights read as linear, and (documented) also as the stored kernel.
  const WeightSource& vae = *c.vaeWeights;
  EXPECT_EQ(vae.shape("decoder.mid_block.attentions.0.to_q.weight"), (std::vector<int64_t>{64, 64}));
  std::vector<float> linear = vae.read("decoder.mid_block.attentions.0.to_q.weight", {64, 64});
  EXPECT_EQ(vae.read("decoder.mid_block.attentions.0.to_q.weight", {64, 64, 1, 1}), linear);
  test::expectErrorContaining([&] { vae.read("decoder.mid_block.attentions.0.to_q.weight", {64, 32, 2}); },
                              "stored as 'first_stage_model.decoder.mid.attn_1.q.weight'");
  // LDM-only tensors (EMA, schedules, position ids) are not offered under any name.
  for (const std::string& name : c.textEncoderWeights->names()) EXPECT_EQ(name.find("position_ids"), std::string::npos);
}

TEST(LdmCheckpoint, InfersSd2ArchitectureAndSplitsOpenClip) {
  BothLayouts m(true);
  LdmCheckpoint c = openLdmCheckpoint(m.file);
  EXPECT_EQ(c.family, LdmFamily::SD2);
  EXPECT_EQ(c.unetConfig.attentionHeads, (std::vector<int>{1, 1, 2}));  // 64-channel heads
  EXPECT_TRUE(c.unetConfig.useLinearProjection);
  EXPECT_TRUE(c.unetConfig.upcastAttention);
  EXPECT_EQ(c.unetConfig.sampleSize, 384);  // 768 pixels / 2
  EXPECT_EQ(c.vaeConfig.sampleSize, 768);
  EXPECT_EQ(c.textEncoderConfig.numHiddenLayers, 2);  // 3 resblocks, the last unused
  EXPECT_EQ(c.textEncoderConfig.hiddenAct, "gelu");
  EXPECT_EQ(c.textEncoderConfig.padTokenId, 0);
  EXPECT_FALSE(c.textEncoderWeights->contains("text_model.encoder.layers.2.mlp.fc1.weight"));
  EXPECT_FALSE(c.textEncoderWeights->contains("text_projection.weight"));
  // k_proj is the second third of the fused rows.
  const auto& ref = dynamic_cast<const MappedWeights&>(*c.textEncoderWeights)
                        .ref("text_model.encoder.layers.1.self_attn.k_proj.weight");
  EXPECT_EQ(ref.key, "cond_stage_model.model.transformer.resblocks.1.attn.in_proj_weight");
  EXPECT_EQ(ref.rowBegin, 64);
  EXPECT_EQ(ref.rowCount, 64);
  EXPECT_EQ(c.textEncoderWeights->read("text_model.encoder.layers.1.self_attn.k_proj.weight", {64, 64}),
            test::patternValues("text_model.encoder.layers.1.self_attn.k_proj.weight", 64 * 64));

  // The default, 768 pixels: v-prediction. At 512 pixels (an SD 2.x "base" model): epsilon, unless overridden.
  auto prediction = [](const ModelFiles& f) {
    return schedulerConfigFor(f.scheduler, "EulerDiscreteScheduler").predictionType;
  };
  EXPECT_EQ(prediction(openModel(m.file, m.singleFileOptions())), "v_prediction");
  OpenOptions options = m.singleFileOptions();
  options.imageSize = 512;
  ModelFiles base = openModel(m.file, options);
  EXPECT_EQ(base.unetConfig.sampleSize, 256);
  EXPECT_EQ(base.vaeConfig.sampleSize, 512);
  EXPECT_EQ(prediction(base), "epsilon");
  options.predictionType = "v_prediction";
  EXPECT_EQ(prediction(openModel(m.file, options)), "v_prediction");
  options.imageSize.reset();
  options.predictionType = "epsilon";
  EXPECT_EQ(prediction(openModel(m.file, options)), "epsilon");
}

TEST(LdmCheckpoint, Sd1TextEncoderWithoutTextModelLevel) {
  // Checkpoints saved with transformers before 4.x name the CLIP weights "embeddings.*", "encoder.*".
  BothLayouts m(false);
  test::SyntheticModel old = m.model;
  const std::string level = "cond_stage_model.transformer.text_model.";
  for (test::SyntheticParam& p : old.text) p.ldmKey = "cond_stage_model.transformer." + p.ldmKey.substr(level.size());
  const std::string file = m.dir.file("old.safetensors");
  test::writeLdmCheckpoint(old, file);
  OpenOptions options = m.singleFileOptions();
  ModelFiles folder = openModel(m.folder);
  ModelFiles single = openModel(file, options);
  test::expectSameWeights(*folder.textEncoderWeights, *single.textEncoderWeights);
  test::expectSameConfig(folder.textEncoderConfig, single.textEncoderConfig);
}

TEST(LdmCheckpoint, Bf16AndF32StorageReadTheSame) {
  test::SyntheticModel model = test::syntheticModel(false);
  TempDir dir;
  test::writeLdmCheckpoint(model, dir.file("f32.safetensors"), "F32");
  test::writeLdmCheckpoint(model, dir.file("bf16.safetensors"), "BF16");
  LdmCheckpoint a = openLdmCheckpoint(dir.file("f32.safetensors"));
  LdmCheckpoint b = openLdmCheckpoint(dir.file("bf16.safetensors"));
  // Values are multiples of 1/1024 in [-1, 1): BF16 keeps only 8 bits, so compare against its rounding.
  std::vector<float> f32 = a.unetWeights->read("conv_in.weight", {64, 4, 3, 3});
  std::vector<float> bf16 = b.unetWeights->read("conv_in.weight", {64, 4, 3, 3});
  ASSERT_EQ(f32.size(), bf16.size());
  for (size_t i = 0; i < f32.size(); ++i) EXPECT_NEAR(f32[i], bf16[i], std::abs(f32[i]) / 128 + 1e-6f) << i;
}

TEST(LdmCheckpoint, TokenizersOfSingleFiles) {
  // SD 2.x with the shipped CLIP vocabulary: OpenCLIP pads with 0.
  TempDir dir;
  test::SyntheticModel model = test::syntheticModel(true, 49408);
  test::writeLdmCheckpoint(model, dir.file("sd2.safetensors"));
  ModelFiles m = openModel(dir.file("sd2.safetensors"));
  EXPECT_EQ(m.textEncoderConfig.padTokenId, 0);
  Encoding e = m.tokenizer->encode("a photo of a cat");
  EXPECT_EQ(std::vector<int32_t>(e.ids.begin(), e.ids.begin() + 7),
            (std::vector<int32_t>{49406, 320, 1125, 539, 320, 2368, 49407}));
  EXPECT_EQ(e.ids.back(), 0);
  EXPECT_EQ(e.ids.size(), 77u);

  // SD 1.x pads with end-of-text; a tokenizer folder without special_tokens_map.json keeps the family default.
  test::SyntheticModel sd1 = test::syntheticModel(false);
  test::writeLdmCheckpoint(sd1, dir.file("sd1.safetensors"));
  test::writeTinyTokenizer(dir.file("tok"), "");
  OpenOptions options;
  options.tokenizerPath = dir.file("tok");
  m = openModel(dir.file("sd1.safetensors"), options);
  EXPECT_EQ(m.textEncoderConfig.padTokenId, 513);  // the tiny vocabulary's <|endoftext|>
  EXPECT_EQ(m.tokenizer->encode("").ids.back(), 513);
  test::expectErrorContaining([&] { openModel(dir.file("sd1.safetensors")); },
                              "produces ids up to 49407, but the text encoder");
}

}  // namespace
}  // namespace sdgen::models
