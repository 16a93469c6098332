// SDXL's configs on the CPU: model_index.json with text_encoder_2/tokenizer_2 (and force_zeros_for_empty_prompt),
// the refiner's index (text_encoder_2 alone), the UNet's text_time fields, the checks between the two text encoders
// and the UNet, and diffusers' add_time_ids from the request's micro-conditioning.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "models/config/config_files.h"
#include "models/pipeline/micro_conditioning.h"
#include "tests/models/models_test_util.h"
#include "tests/test_support.h"

namespace sdgen::models {
namespace {

using nlohmann::json;
using test::errorOf;

// stabilityai/stable-diffusion-xl-base-1.0 model_index.json.
const json kXlIndex = json::parse(R"({
  "_class_name": "StableDiffusionXLPipeline", "_diffusers_version": "0.19.0.dev0", "force_zeros_for_empty_prompt": true,
  "add_watermarker": null, "scheduler": ["diffusers", "EulerDiscreteScheduler"],
  "text_encoder": ["transformers", "CLIPTextModel"], "text_encoder_2": ["transformers", "CLIPTextModelWithProjection"],
  "tokenizer": ["transformers", "CLIPTokenizer"], "tokenizer_2": ["transformers", "CLIPTokenizer"],
  "unet": ["diffusers", "UNet2DConditionModel"], "vae": ["diffusers", "AutoencoderKL"]
})");

// stabilityai/stable-diffusion-xl-base-1.0 unet/config.json.
const json kXlUNet = json::parse(R"({
  "_class_name": "UNet2DConditionModel", "_diffusers_version": "0.19.0.dev0", "act_fn": "silu",
  "addition_embed_type": "text_time", "addition_embed_type_num_heads": 64, "addition_time_embed_dim": 256,
  "attention_head_dim": [5, 10, 20], "block_out_channels": [320, 640, 1280], "center_input_sample": false,
  "class_embed_type": null, "class_embeddings_concat": false, "conv_in_kernel": 3, "conv_out_kernel": 3,
  "cross_attention_dim": 2048, "cross_attention_norm": null,
  "down_block_types": ["DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"], "downsample_padding": 1,
  "dual_cross_attention": false, "encoder_hid_dim": null, "encoder_hid_dim_type": null, "flip_sin_to_cos": true,
  "freq_shift": 0, "in_channels": 4, "layers_per_block": 2, "mid_block_only_cross_attention": null,
  "mid_block_scale_factor": 1, "mid_block_type": "UNetMidBlock2DCrossAttn", "norm_eps": 1e-05,
  "norm_num_groups": 32, "num_attention_heads": null, "num_class_embeds": null, "only_cross_attention": false,
  "out_channels": 4, "projection_class_embeddings_input_dim": 2816, "resnet_out_scale_factor": 1.0,
  "resnet_skip_time_act": false, "resnet_time_scale_shift": "default", "sample_size": 128, "time_cond_proj_dim": null,
  "time_embedding_act_fn": null, "time_embedding_dim": null, "time_embedding_type": "positional",
  "timestep_post_act": null, "transformer_layers_per_block": [1, 2, 10],
  "up_block_types": ["CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"], "upcast_attention": null,
  "use_linear_projection": true
})");

// The two text encoders' configs (the fields that matter here).
const json kXlText = json::parse(R"({"architectures": ["CLIPTextModel"], "hidden_act": "quick_gelu",
  "hidden_size": 768, "intermediate_size": 3072, "num_attention_heads": 12, "num_hidden_layers": 12,
  "projection_dim": 768, "model_type": "clip_text_model"})");
const json kXlText2 = json::parse(R"({"architectures": ["CLIPTextModelWithProjection"], "hidden_act": "gelu",
  "hidden_size": 1280, "intermediate_size": 5120, "num_attention_heads": 20, "num_hidden_layers": 32,
  "projection_dim": 1280, "bos_token_id": 0, "eos_token_id": 2, "pad_token_id": 1, "model_type": "clip_text_model"})");

const json kXlVae = json::parse(R"({"_class_name": "AutoencoderKL", "block_out_channels": [128, 256, 512, 512],
  "down_block_types": ["DownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D"],
  "up_block_types": ["UpDecoderBlock2D", "UpDecoderBlock2D", "UpDecoderBlock2D", "UpDecoderBlock2D"],
  "force_upcast": true, "latent_channels": 4, "layers_per_block": 2, "sample_size": 1024, "scaling_factor": 0.13025})");

json with(json base, const std::string& field, const json& value) {
  base[field] = value;
  return base;
}
json without(json base, const std::string& field) {
  base.erase(field);
  return base;
}

TEST(SdxlConfig, ModelIndex) {
  ModelIndex m = parseModelIndex(kXlIndex.dump(), "xl/model_index.json");
  EXPECT_TRUE(m.sdxl);
  EXPECT_TRUE(m.forceZerosForEmptyPrompt);
  EXPECT_EQ(m.components.at("text_encoder_2").second, "CLIPTextModelWithProjection");
  // diffusers' __init__ default is true; a file may turn it off.
  EXPECT_TRUE(parseModelIndex(without(kXlIndex, "force_zeros_for_empty_prompt").dump(), "x").forceZerosForEmptyPrompt);
  EXPECT_FALSE(parseModelIndex(with(kXlIndex, "force_zeros_for_empty_prompt", false).dump(), "x").forceZerosForEmptyPrompt);
  // An SD 1.x index is not SDXL.
  json sd = without(without(with(kXlIndex, "_class_name", "StableDiffusionPipeline"), "text_encoder_2"), "tokenizer_2");
  EXPECT_FALSE(parseModelIndex(sd.dump(), "x").sdxl);

  std::string msg = errorOf([&] { parseModelIndex(without(kXlIndex, "tokenizer_2").dump(), "xl/model_index.json"); });
  EXPECT_NE(msg.find("xl/model_index.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tokenizer_2"), std::string::npos) << msg;
  msg = errorOf([&] {
    parseModelIndex(without(without(kXlIndex, "tokenizer_2"), "text_encoder_2").dump(), "xl/model_index.json");
  });
  EXPECT_NE(msg.find("text_encoder_2' is missing"), std::string::npos) << msg;
  msg = errorOf([&] {
    parseModelIndex(with(kXlIndex, "text_encoder_2", {"transformers", "T5EncoderModel"}).dump(), "xl/model_index.json");
  });
  EXPECT_NE(msg.find("T5EncoderModel"), std::string::npos) << msg;
  // stable-diffusion-xl-refiner-1.0: no first text encoder, aesthetic-score conditioning.
  // Accepted (sdxl_refiner_test.cpp runs it); a first text encoder beside requires_aesthetics_score is refused.
  json refiner = with(with(with(with(kXlIndex, "_class_name", "StableDiffusionXLImg2ImgPipeline"), "text_encoder",
                                {nullptr, nullptr}),
                           "tokenizer", {nullptr, nullptr}),
                      "requires_aesthetics_score", true);
  ModelIndex r = parseModelIndex(with(refiner, "force_zeros_for_empty_prompt", false).dump(), "refiner/model_index.json");
  EXPECT_TRUE(r.sdxl);
  EXPECT_TRUE(r.requiresAestheticsScore);
  EXPECT_FALSE(r.forceZerosForEmptyPrompt);
  EXPECT_FALSE(r.components.contains("text_encoder"));
  msg = errorOf([&] {
    parseModelIndex(with(refiner, "text_encoder", {"transformers", "CLIPTextModel"}).dump(), "refiner/model_index.json");
  });
  EXPECT_NE(msg.find("refiner/model_index.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("text_encoder"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[null, null] in an SDXL refiner"), std::string::npos) << msg;
  msg = errorOf([&] { parseModelIndex(with(refiner, "tokenizer_2", nullptr).dump(), "refiner/model_index.json"); });
  EXPECT_NE(msg.find("tokenizer_2"), std::string::npos) << msg;
}

TEST(SdxlConfig, UNetTextTime) {
  UNetConfig u = parseUNetConfig(kXlUNet.dump(), "xl/unet/config.json");
  EXPECT_EQ(u.additionEmbedType, "text_time");
  EXPECT_EQ(u.additionTimeEmbedDim, 256);
  EXPECT_EQ(u.projectionClassEmbeddingsInputDim, 2816);
  EXPECT_EQ(u.transformerLayersPerBlock, (std::vector<int>{1, 2, 10}));
  EXPECT_EQ(u.downBlockTypes.front(), "DownBlock2D");
  EXPECT_TRUE(u.useLinearProjection);
  for (const char* field : {"addition_time_embed_dim", "projection_class_embeddings_input_dim"}) {
    std::string msg = errorOf([&] { parseUNetConfig(without(kXlUNet, field).dump(), "xl/unet/config.json"); });
    EXPECT_NE(msg.find("xl/unet/config.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find(field), std::string::npos) << msg;
  }
  std::string msg = errorOf([&] {
    parseUNetConfig(with(kXlUNet, "projection_class_embeddings_input_dim", 1536).dump(), "xl/unet/config.json");
  });
  EXPECT_NE(msg.find("projection_class_embeddings_input_dim"), std::string::npos) << msg;
}

TEST(SdxlConfig, EncodersAgainstTheUNet) {
  const ClipTextConfig t1 = parseClipTextConfig(kXlText.dump(), "xl/text_encoder/config.json");
  const ClipTextConfig t2 = parseClipTextConfig(kXlText2.dump(), "xl/text_encoder_2/config.json");
  EXPECT_EQ(t2.projectionDim, 1280);
  EXPECT_EQ(t2.eosTokenId, 2);
  const UNetConfig u = parseUNetConfig(kXlUNet.dump(), "xl/unet/config.json");
  const VaeConfig v = parseVaeConfig(kXlVae.dump(), "xl/vae/config.json");
  EXPECT_FLOAT_EQ(v.scalingFactor, 0.13025f);
  EXPECT_NO_THROW(validateModelConfigs(t1, u, v, &t2));
  // 768 + 1280 = 2048 channels of context; 1280 + 6 x 256 = 2816 inputs of add_embedding.
  std::string msg = errorOf([&] { validateModelConfigs(t1, u, v); });
  EXPECT_NE(msg.find("text_encoder_2"), std::string::npos) << msg;
  const ClipTextConfig narrow = parseClipTextConfig(with(with(kXlText2, "hidden_size", 1024), "num_attention_heads", 16).dump(), "n/config.json");
  msg = errorOf([&] { validateModelConfigs(t1, u, v, &narrow); });
  EXPECT_NE(msg.find("do not add up to the UNet's cross_attention_dim 2048"), std::string::npos) << msg;
  EXPECT_NE(msg.find("n/config.json"), std::string::npos) << msg;
  const ClipTextConfig proj = parseClipTextConfig(with(kXlText2, "projection_dim", 1024).dump(), "p/config.json");
  msg = errorOf([&] { validateModelConfigs(t1, u, v, &proj); });
  EXPECT_NE(msg.find("projection_class_embeddings_input_dim 2816"), std::string::npos) << msg;
  const UNetConfig plain = parseUNetConfig(without(without(without(kXlUNet, "addition_embed_type"),
                                                           "addition_time_embed_dim"),
                                                   "projection_class_embeddings_input_dim")
                                               .dump(),
                                           "plain/unet/config.json");
  msg = errorOf([&] { validateModelConfigs(t1, plain, v, &t2); });
  EXPECT_NE(msg.find("text_time"), std::string::npos) << msg;
}

TEST(SdxlConfig, TimeIdsAsDiffusersBuildsThem) {
  // diffusers: original_size and target_size default to (height, width), crops_coords_top_left to (0, 0).
  pipeline::SdxlMicroConditioning none;
  EXPECT_EQ(pipeline::sdxlTimeIds(none, 1216, 832), (std::array<float, 6>{832, 1216, 0, 0, 832, 1216}));
  // The request gives (width, height) and (x, y); the ids hold (height, width) and (top, left).
  pipeline::SdxlMicroConditioning m{std::pair{512, 768}, std::pair{16, 32}, std::pair{1024, 1536}};
  EXPECT_EQ(pipeline::sdxlTimeIds(m, 1024, 1024), (std::array<float, 6>{768, 512, 32, 16, 1536, 1024}));
}

}  // namespace
}  // namespace sdgen::models
