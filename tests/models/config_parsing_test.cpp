// Parsing diffusers/transformers config.json files: the released SD 1.5 / SD 2.1 configs, the defaults of the
// Python classes for absent fields, int-or-list expansion, and every refusal with a message naming the file, the
// field and the value. Scheduler configs: scheduler_config_test.cpp.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "models/config/config_files.h"
#include "tests/models/models_test_util.h"
#include "tests/test_support.h"

namespace sdgen::models {
namespace {

using nlohmann::json;
using test::errorOf;

// runwayml/stable-diffusion-v1-5 unet/config.json.
const json kSd15UNet = json::parse(R"({
  "_class_name": "UNet2DConditionModel", "_diffusers_version": "0.6.0", "act_fn": "silu",
  "attention_head_dim": 8, "block_out_channels": [320, 640, 1280, 1280], "center_input_sample": false,
  "cross_attention_dim": 768,
  "down_block_types": ["CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"],
  "downsample_padding": 1, "flip_sin_to_cos": true, "freq_shift": 0, "in_channels": 4, "layers_per_block": 2,
  "mid_block_scale_factor": 1, "norm_eps": 1e-05, "norm_num_groups": 32, "out_channels": 4, "sample_size": 64,
  "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"]
})");

// stabilityai/stable-diffusion-2-1 unet/config.json (the fields that differ from 1.5 included).
const json kSd21UNet = json::parse(R"({
  "_class_name": "UNet2DConditionModel", "_diffusers_version": "0.10.0.dev0", "act_fn": "silu",
  "attention_head_dim": [5, 10, 20, 20], "block_out_channels": [320, 640, 1280, 1280],
  "center_input_sample": false, "cross_attention_dim": 1024,
  "down_block_types": ["CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"],
  "downsample_padding": 1, "dual_cross_attention": false, "flip_sin_to_cos": true, "freq_shift": 0,
  "in_channels": 4, "layers_per_block": 2, "mid_block_scale_factor": 1, "norm_eps": 1e-05, "norm_num_groups": 32,
  "num_class_embeds": null, "only_cross_attention": false, "out_channels": 4, "sample_size": 96,
  "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"],
  "upcast_attention": true, "use_linear_projection": true
})");

const json kSd15Vae = json::parse(R"({
  "_class_name": "AutoencoderKL", "_diffusers_version": "0.6.0", "act_fn": "silu",
  "block_out_channels": [128, 256, 512, 512],
  "down_block_types": ["DownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D"],
  "in_channels": 3, "latent_channels": 4, "layers_per_block": 2, "norm_num_groups": 32, "out_channels": 3,
  "sample_size": 512,
  "up_block_types": ["UpDecoderBlock2D", "UpDecoderBlock2D", "UpDecoderBlock2D", "UpDecoderBlock2D"]
})");

const json kSd15Text = json::parse(R"({
  "_name_or_path": "openai/clip-vit-large-patch14", "architectures": ["CLIPTextModel"], "attention_dropout": 0.0,
  "bos_token_id": 0, "dropout": 0.0, "eos_token_id": 2, "hidden_act": "quick_gelu", "hidden_size": 768,
  "initializer_factor": 1.0, "initializer_range": 0.02, "intermediate_size": 3072, "layer_norm_eps": 1e-05,
  "max_position_embeddings": 77, "model_type": "clip_text_model", "num_attention_heads": 12,
  "num_hidden_layers": 12, "pad_token_id": 1, "projection_dim": 768, "torch_dtype": "float32",
  "transformers_version": "4.22.0.dev0", "vocab_size": 49408
})");

json with(json base, const std::string& field, const json& value) {
  base[field] = value;
  return base;
}
json without(json base, const std::string& field) {
  base.erase(field);
  return base;
}

TEST(ConfigParsing, Sd15UNet) {
  UNetConfig c = parseUNetConfig(kSd15UNet.dump(), "sd15/unet/config.json");
  EXPECT_EQ(c.source, "sd15/unet/config.json");
  EXPECT_EQ(c.inChannels, 4);
  EXPECT_EQ(c.outChannels, 4);
  EXPECT_EQ(c.sampleSize, 64);
  EXPECT_EQ(c.blockOutChannels, (std::vector<int>{320, 640, 1280, 1280}));
  EXPECT_EQ(c.downBlockTypes[0], "CrossAttnDownBlock2D");
  EXPECT_EQ(c.downBlockTypes[3], "DownBlock2D");
  EXPECT_EQ(c.upBlockTypes[0], "UpBlock2D");
  EXPECT_EQ(c.midBlockType, "UNetMidBlock2DCrossAttn");
  EXPECT_EQ(c.layersPerBlock, (std::vector<int>{2, 2, 2, 2}));
  EXPECT_EQ(c.attentionHeads, (std::vector<int>{8, 8, 8, 8}));  // attention_head_dim 8 counts heads
  EXPECT_EQ(c.transformerLayersPerBlock, (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(c.crossAttentionDim, 768);
  EXPECT_FALSE(c.useLinearProjection);
  EXPECT_FALSE(c.upcastAttention);
  EXPECT_EQ(c.normNumGroups, 32);
  EXPECT_FLOAT_EQ(c.normEps, 1e-5f);
  EXPECT_TRUE(c.flipSinToCos);
  EXPECT_EQ(c.freqShift, 0.f);
  EXPECT_EQ(c.convInKernel, 3);
}

TEST(ConfigParsing, Sd21UNetHeadsPerBlock) {
  UNetConfig c = parseUNetConfig(kSd21UNet.dump(), "sd21/unet/config.json");
  EXPECT_EQ(c.attentionHeads, (std::vector<int>{5, 10, 20, 20}));
  EXPECT_EQ(c.crossAttentionDim, 1024);
  EXPECT_TRUE(c.useLinearProjection);
  EXPECT_TRUE(c.upcastAttention);
  EXPECT_EQ(c.sampleSize, 96);
}

TEST(ConfigParsing, UNetDefaultsAreDiffusers) {
  // Only sample_size given: everything else is UNet2DConditionModel.__init__'s default.
  UNetConfig c = parseUNetConfig(R"({"sample_size": 32})", "u.json");
  EXPECT_EQ(c.blockOutChannels, (std::vector<int>{320, 640, 1280, 1280}));
  EXPECT_EQ(c.downBlockTypes, (std::vector<std::string>{"CrossAttnDownBlock2D", "CrossAttnDownBlock2D",
                                                        "CrossAttnDownBlock2D", "DownBlock2D"}));
  EXPECT_EQ(c.upBlockTypes,
            (std::vector<std::string>{"UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"}));
  EXPECT_EQ(c.layersPerBlock, (std::vector<int>{2, 2, 2, 2}));
  EXPECT_EQ(c.attentionHeads, (std::vector<int>{8, 8, 8, 8}));
  EXPECT_EQ(c.crossAttentionDim, 1280);
  EXPECT_EQ(c.inChannels, 4);
  EXPECT_EQ(c.normNumGroups, 32);
  EXPECT_EQ(c.downsamplePadding, 1);
  EXPECT_EQ(c.midBlockType, "UNetMidBlock2DCrossAttn");
}

TEST(ConfigParsing, UNetIntOrListFields) {
  json j = with(kSd15UNet, "layers_per_block", {1, 2, 3, 2});
  j["transformer_layers_per_block"] = {1, 2, 2, 1};
  j["num_attention_heads"] = {4, 8, 16, 16};  // wins over attention_head_dim
  j["cross_attention_dim"] = {768, 768, 768, 768};
  UNetConfig c = parseUNetConfig(j.dump(), "u.json");
  EXPECT_EQ(c.layersPerBlock, (std::vector<int>{1, 2, 3, 2}));
  EXPECT_EQ(c.transformerLayersPerBlock, (std::vector<int>{1, 2, 2, 1}));
  EXPECT_EQ(c.attentionHeads, (std::vector<int>{4, 8, 16, 16}));
  EXPECT_EQ(c.crossAttentionDim, 768);
  // num_attention_heads as one integer, attention_head_dim ignored then.
  c = parseUNetConfig(with(with(kSd15UNet, "num_attention_heads", 5), "attention_head_dim", 64).dump(), "u.json");
  EXPECT_EQ(c.attentionHeads, (std::vector<int>{5, 5, 5, 5}));
  // mid_block_type null: no mid block.
  c = parseUNetConfig(with(kSd15UNet, "mid_block_type", nullptr).dump(), "u.json");
  EXPECT_EQ(c.midBlockType, "");
  c = parseUNetConfig(with(kSd15UNet, "sample_size", {64, 64}).dump(), "u.json");
  EXPECT_EQ(c.sampleSize, 64);
}

struct Refusal {
  const char* field;
  json value;
  const char* shown;  // how the value appears in the message
};

class UNetRefusal : public ::testing::TestWithParam<Refusal> {};

TEST_P(UNetRefusal, NamesFileFieldAndValue) {
  const Refusal& r = GetParam();
  std::string msg = errorOf([&] { parseUNetConfig(with(kSd15UNet, r.field, r.value).dump(), "model/unet/config.json"); });
  EXPECT_NE(msg.find("model/unet/config.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find(r.field), std::string::npos) << msg;
  EXPECT_NE(msg.find(r.shown), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    Unsupported, UNetRefusal,
    ::testing::Values(Refusal{"class_embed_type", "projection", "\"projection\""},
                      Refusal{"addition_embed_type", "image", "\"image\""},
                      Refusal{"time_cond_proj_dim", 256, "256"},
                      Refusal{"num_class_embeds", 1000, "1000"},
                      Refusal{"resnet_time_scale_shift", "scale_shift", "\"scale_shift\""},
                      Refusal{"dual_cross_attention", true, "true"},
                      Refusal{"only_cross_attention", true, "true"},
                      Refusal{"only_cross_attention", {false, true, false, false}, "[false,true,false,false]"},
                      Refusal{"act_fn", "gelu", "\"gelu\""},
                      Refusal{"conv_in_kernel", 4, "4"},
                      Refusal{"conv_out_kernel", 2, "2"},
                      Refusal{"down_block_types",
                              {"CrossAttnDownBlock2D", "SimpleCrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"},
                              "SimpleCrossAttnDownBlock2D"},
                      Refusal{"up_block_types", {"UpBlock2D", "AttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"},
                              "AttnUpBlock2D"},
                      Refusal{"mid_block_type", "UNetMidBlock2DSimpleCrossAttn", "UNetMidBlock2DSimpleCrossAttn"},
                      Refusal{"time_embedding_type", "fourier", "\"fourier\""},
                      Refusal{"encoder_hid_dim", 1024, "1024"},
                      Refusal{"time_embedding_act_fn", "silu", "\"silu\""},
                      Refusal{"timestep_post_act", "silu", "\"silu\""},
                      Refusal{"center_input_sample", true, "true"},
                      Refusal{"mid_block_scale_factor", 2, "2"},
                      Refusal{"resnet_skip_time_act", true, "true"},
                      Refusal{"resnet_out_scale_factor", 0.5, "0.5"},
                      Refusal{"attention_type", "gated", "\"gated\""},
                      Refusal{"class_embeddings_concat", true, "true"},
                      Refusal{"cross_attention_norm", "group_norm", "\"group_norm\""},
                      Refusal{"transformer_layers_per_block", {{1, 2}, 1, 1, 1}, "[[1,2],1,1,1]"},
                      Refusal{"cross_attention_dim", {768, 1024, 768, 768}, "[768,1024,768,768]"},
                      Refusal{"downsample_padding", 0, "0"},
                      Refusal{"_class_name", "UNet2DModel", "\"UNet2DModel\""},
                      Refusal{"norm_num_groups", nullptr, "null"},
                      Refusal{"sample_size", {64, 96}, "[64,96]"},
                      Refusal{"time_embedding_dim", 512, "512"}));

class UNetBadValue : public ::testing::TestWithParam<Refusal> {};

TEST_P(UNetBadValue, NamesFileAndField) {
  const Refusal& r = GetParam();
  std::string msg = errorOf([&] { parseUNetConfig(with(kSd15UNet, r.field, r.value).dump(), "m/unet/config.json"); });
  EXPECT_NE(msg.find("m/unet/config.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find(r.field), std::string::npos) << msg;
  EXPECT_NE(msg.find(r.shown), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    WrongTypesAndSizes, UNetBadValue,
    ::testing::Values(Refusal{"layers_per_block", "two", "\"two\""},
                      Refusal{"layers_per_block", {2, 2}, "2 entries"},
                      Refusal{"attention_head_dim", {8, 8, 8}, "3 entries"},
                      Refusal{"in_channels", 4.5, "4.5"},
                      Refusal{"block_out_channels", {320, 640, 1280}, "3 entries"},
                      Refusal{"block_out_channels", "320", "\"320\""},
                      Refusal{"use_linear_projection", "yes", "\"yes\""},
                      Refusal{"down_block_types", {1, 2, 3, 4}, "[1,2,3,4]"},
                      Refusal{"up_block_types", {"UpBlock2D"}, "1 entries"},
                      Refusal{"cross_attention_dim", nullptr, "null"},
                      Refusal{"norm_eps", "small", "\"small\""}));

TEST(ConfigParsing, UNetInconsistentSizes) {
  // Channels not divisible by the norm groups or the heads.
  test::expectErrorContaining(
      [] { parseUNetConfig(with(kSd15UNet, "block_out_channels", {320, 640, 1280, 1000}).dump(), "u.json"); },
      "1000 channels are not divisible by norm_num_groups 32");
  test::expectErrorContaining(
      [] { parseUNetConfig(with(kSd15UNet, "attention_head_dim", 7).dump(), "u.json"); },
      "320 channels are not divisible into 7 attention heads");
  std::string msg = errorOf([] { parseUNetConfig(without(kSd15UNet, "sample_size").dump(), "m/unet/config.json"); });
  EXPECT_NE(msg.find("m/unet/config.json"), std::string::npos);
  EXPECT_NE(msg.find("sample_size"), std::string::npos);
}

TEST(ConfigParsing, InvalidJsonAndFileErrors) {
  std::string msg = errorOf([] { parseUNetConfig("{\"sample_size\": 64,", "m/unet/config.json"); });
  EXPECT_NE(msg.find("'m/unet/config.json' is not valid JSON"), std::string::npos) << msg;
  msg = errorOf([] { parseVaeConfig("[1, 2]", "m/vae/config.json"); });
  EXPECT_NE(msg.find("'m/vae/config.json' is not a JSON object"), std::string::npos) << msg;
  msg = errorOf([] { loadClipTextConfig("/nonexistent/text_encoder/config.json"); });
  EXPECT_NE(msg.find("/nonexistent/text_encoder/config.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not exist"), std::string::npos) << msg;
}

TEST(ConfigParsing, ClipTextConfigs) {
  ClipTextConfig c = parseClipTextConfig(kSd15Text.dump(), "t.json");
  EXPECT_EQ(c.vocabSize, 49408);
  EXPECT_EQ(c.hiddenSize, 768);
  EXPECT_EQ(c.intermediateSize, 3072);
  EXPECT_EQ(c.numHiddenLayers, 12);
  EXPECT_EQ(c.numAttentionHeads, 12);
  EXPECT_EQ(c.maxPositionEmbeddings, 77);
  EXPECT_EQ(c.hiddenAct, "quick_gelu");
  EXPECT_FLOAT_EQ(c.layerNormEps, 1e-5f);
  // transformers' CLIPTextConfig defaults (clip-vit-base-patch32 sizes) for absent fields.
  c = parseClipTextConfig("{}", "t.json");
  EXPECT_EQ(c.hiddenSize, 512);
  EXPECT_EQ(c.intermediateSize, 2048);
  EXPECT_EQ(c.numAttentionHeads, 8);
  EXPECT_EQ(c.numHiddenLayers, 12);
  EXPECT_EQ(c.vocabSize, 49408);
  EXPECT_EQ(c.hiddenAct, "quick_gelu");
  // SD 2.x: OpenCLIP ViT-H.
  c = parseClipTextConfig(R"({"hidden_act": "gelu", "hidden_size": 1024, "intermediate_size": 4096,
                              "num_attention_heads": 16, "num_hidden_layers": 23})",
                          "t.json");
  EXPECT_EQ(c.hiddenAct, "gelu");
  EXPECT_EQ(c.numHiddenLayers, 23);
}

TEST(ConfigParsing, ClipTextRefusals) {
  std::string msg = errorOf([] { parseClipTextConfig(with(kSd15Text, "hidden_act", "gelu_new").dump(), "m/te/config.json"); });
  EXPECT_NE(msg.find("m/te/config.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("hidden_act = \"gelu_new\""), std::string::npos) << msg;
  msg = errorOf([] { parseClipTextConfig(with(kSd15Text, "model_type", "t5").dump(), "m/te/config.json"); });
  EXPECT_NE(msg.find("model_type = \"t5\""), std::string::npos) << msg;
  msg = errorOf([] { parseClipTextConfig(with(kSd15Text, "architectures", {"T5EncoderModel"}).dump(), "m/te/config.json"); });
  EXPECT_NE(msg.find("architectures"), std::string::npos) << msg;
  msg = errorOf([] { parseClipTextConfig(with(kSd15Text, "num_attention_heads", 7).dump(), "m/te/config.json"); });
  EXPECT_NE(msg.find("hidden_size 768 is not divisible by num_attention_heads 7"), std::string::npos) << msg;
  msg = errorOf([] { parseClipTextConfig(with(kSd15Text, "hidden_size", "768").dump(), "m/te/config.json"); });
  EXPECT_NE(msg.find("field 'hidden_size' must be an integer"), std::string::npos) << msg;
}

TEST(ConfigParsing, VaeConfigs) {
  VaeConfig c = parseVaeConfig(kSd15Vae.dump(), "v.json");
  EXPECT_EQ(c.blockOutChannels, (std::vector<int>{128, 256, 512, 512}));
  EXPECT_EQ(c.layersPerBlock, 2);
  EXPECT_EQ(c.latentChannels, 4);
  EXPECT_EQ(c.sampleSize, 512);
  EXPECT_FLOAT_EQ(c.scalingFactor, 0.18215f);
  EXPECT_FALSE(c.shiftFactor.has_value());
  EXPECT_TRUE(c.useQuantConv);
  EXPECT_TRUE(c.midBlockAddAttention);
  // AutoencoderKL.__init__ defaults.
  c = parseVaeConfig("{}", "v.json");
  EXPECT_EQ(c.blockOutChannels, (std::vector<int>{64}));
  EXPECT_EQ(c.layersPerBlock, 1);
  EXPECT_EQ(c.sampleSize, 32);
  EXPECT_EQ(c.inChannels, 3);
  c = parseVaeConfig(with(with(with(kSd15Vae, "scaling_factor", 0.13025), "shift_factor", 0.0609), "use_quant_conv", false).dump(),
                     "v.json");
  EXPECT_FLOAT_EQ(c.scalingFactor, 0.13025f);
  EXPECT_FLOAT_EQ(*c.shiftFactor, 0.0609f);
  EXPECT_FALSE(c.useQuantConv);
}

TEST(ConfigParsing, VaeRefusals) {
  for (const Refusal& r : {Refusal{"latents_mean", {0.1, 0.2, 0.3, 0.4}, "[0.1,0.2,0.3,0.4]"},
                           Refusal{"act_fn", "relu", "\"relu\""},
                           Refusal{"_class_name", "AutoencoderTiny", "\"AutoencoderTiny\""},
                           Refusal{"down_block_types",
                                   {"DownEncoderBlock2D", "AttnDownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D"},
                                   "AttnDownEncoderBlock2D"},
                           Refusal{"up_block_types", {"UpDecoderBlock2D"}, "1 entries"},
                           Refusal{"layers_per_block", {2, 2, 2, 2}, "[2,2,2,2]"}}) {
    std::string msg = errorOf([&] { parseVaeConfig(with(kSd15Vae, r.field, r.value).dump(), "m/vae/config.json"); });
    EXPECT_NE(msg.find("m/vae/config.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find(r.field), std::string::npos) << msg;
    EXPECT_NE(msg.find(r.shown), std::string::npos) << msg;
  }
  test::expectErrorContaining([] { parseVaeConfig(with(kSd15Vae, "block_out_channels", {128, 256, 500, 512}).dump(), "v.json"); },
                              "500 channels are not a positive multiple of norm_num_groups 32");
}

TEST(ConfigParsing, ModelIndex) {
  json index = json::parse(R"({
    "_class_name": "StableDiffusionPipeline", "_diffusers_version": "0.6.0",
    "feature_extractor": ["transformers", "CLIPImageProcessor"], "safety_checker": [null, null],
    "scheduler": ["diffusers", "PNDMScheduler"], "text_encoder": ["transformers", "CLIPTextModel"],
    "tokenizer": ["transformers", "CLIPTokenizer"], "unet": ["diffusers", "UNet2DConditionModel"],
    "vae": ["diffusers", "AutoencoderKL"], "requires_safety_checker": false})");
  ModelIndex m = parseModelIndex(index.dump(), "m/model_index.json");
  EXPECT_EQ(m.className, "StableDiffusionPipeline");
  EXPECT_EQ(m.components.at("unet").second, "UNet2DConditionModel");
  EXPECT_EQ(m.components.count("safety_checker"), 0u);
  // SDXL: a second text encoder.
  json xl = with(with(index, "_class_name", "StableDiffusionXLPipeline"), "text_encoder_2",
                 {"transformers", "CLIPTextModelWithProjection"});
  std::string msg = errorOf([&] { parseModelIndex(xl.dump(), "m/model_index.json"); });
  EXPECT_NE(msg.find("m/model_index.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("text_encoder_2"), std::string::npos) << msg;
  msg = errorOf([&] { parseModelIndex(without(index, "unet").dump(), "m/model_index.json"); });
  EXPECT_NE(msg.find("field 'unet' is missing"), std::string::npos) << msg;
  msg = errorOf([&] { parseModelIndex(with(index, "unet", {"diffusers", "UNet2DModel"}).dump(), "m/model_index.json"); });
  EXPECT_NE(msg.find("UNet2DModel"), std::string::npos) << msg;
  msg = errorOf([&] { parseModelIndex(with(index, "text_encoder", {"transformers", "T5EncoderModel"}).dump(), "m/model_index.json"); });
  EXPECT_NE(msg.find("T5EncoderModel"), std::string::npos) << msg;
}

TEST(ConfigParsing, ConsistencyBetweenComponents) {
  ClipTextConfig text = parseClipTextConfig(kSd15Text.dump(), "m/text_encoder/config.json");
  UNetConfig unet = parseUNetConfig(kSd21UNet.dump(), "m/unet/config.json");
  VaeConfig vae = parseVaeConfig(kSd15Vae.dump(), "m/vae/config.json");
  std::string msg = errorOf([&] { validateModelConfigs(text, unet, vae); });
  EXPECT_NE(msg.find("mismatched text-encoder/UNet widths"), std::string::npos) << msg;
  EXPECT_NE(msg.find("768"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1024"), std::string::npos) << msg;
  EXPECT_NE(msg.find("m/text_encoder/config.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("m/unet/config.json"), std::string::npos) << msg;

  // Inpainting UNets (latents + mask + masked-image latents = 9 channels): runwayml's SD 1.5 inpainting and
  // stabilityai's SD 2 inpainting configs (SD 2's UNet with in_channels 9, its 1024-wide text encoder).
  unet = parseUNetConfig(with(kSd15UNet, "in_channels", 9).dump(), "m/unet/config.json");
  EXPECT_NO_THROW(validateModelConfigs(text, unet, vae));
  unet = parseUNetConfig(with(kSd21UNet, "in_channels", 9).dump(), "m/unet/config.json");
  EXPECT_NO_THROW(validateModelConfigs(parseClipTextConfig(with(with(kSd15Text, "hidden_size", 1024), "num_attention_heads", 16).dump(), "t"), unet, vae));

  unet = parseUNetConfig(with(kSd15UNet, "in_channels", 8).dump(), "m/unet/config.json");
  msg = errorOf([&] { validateModelConfigs(text, unet, vae); });
  EXPECT_NE(msg.find("in_channels is 8"), std::string::npos) << msg;
  EXPECT_NE(msg.find("latent_channels is 4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("9 for inpainting"), std::string::npos) << msg;

  unet = parseUNetConfig(kSd15UNet.dump(), "m/unet/config.json");
  EXPECT_NO_THROW(validateModelConfigs(text, unet, vae));
}

}  // namespace
}  // namespace sdgen::models
