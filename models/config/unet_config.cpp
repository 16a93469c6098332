// unet/config.json -> UNetConfig, with diffusers' UNet2DConditionModel.__init__ defaults for absent fields.
// Everything of that class that Stable Diffusion 1.x/2.x does not use is refused rather than ignored: a model
// that needs it would otherwise load and compute something else.
#include <algorithm>

#include "engine/error.h"
#include "models/config/config_files.h"
#include "models/config/config_json.h"

namespace sdgen::models {

namespace {

using nlohmann::json;

const std::vector<std::string> kDefaultDownBlocks = {"CrossAttnDownBlock2D", "CrossAttnDownBlock2D",
                                                     "CrossAttnDownBlock2D", "DownBlock2D"};
const std::vector<std::string> kDefaultUpBlocks = {"UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D",
                                                   "CrossAttnUpBlock2D"};

void refuseConditioningExtras(const ConfigJson& j) {
  if (j.present("_class_name") && j.string("_class_name") != "UNet2DConditionModel")
    j.unsupported("_class_name", "the UNet must be a UNet2DConditionModel");
  j.refuseIfSet("class_embed_type", "class-conditioned UNets");
  j.refuseIfSet("num_class_embeds", "class-conditioned UNets");
  if (j.present("addition_embed_type") && j.string("addition_embed_type") != "text_time")
    j.unsupported("addition_embed_type", "sdgen implements SDXL's \"text_time\" added conditioning only");
  j.refuseIfSet("time_cond_proj_dim", "guidance-embedding (LCM) UNets");
  j.refuseIfSet("encoder_hid_dim", "projected encoder hidden states");
  j.refuseIfSet("encoder_hid_dim_type", "projected encoder hidden states");
  j.refuseIfSet("time_embedding_act_fn", "an activation on the time embedding");
  j.refuseIfSet("timestep_post_act", "an activation after the time embedding");
  j.refuseIfSet("cross_attention_norm", "normalized cross-attention context");
  j.refuseIfSet("reverse_transformer_layers_per_block", "asymmetric transformer depths");
  j.refuseUnlessEquals("time_embedding_type", "positional", "only the sinusoidal \"positional\" time embedding");
  j.refuseUnlessEquals("resnet_time_scale_shift", "default", "only \"default\" (additive) time conditioning");
  j.refuseUnlessEquals("resnet_skip_time_act", false, "the time embedding always goes through the activation");
  j.refuseUnlessEquals("attention_type", "default", "only \"default\" attention (no GLIGEN)");
  j.refuseUnlessEquals("dual_cross_attention", false, "dual cross-attention");
  j.refuseUnlessEquals("center_input_sample", false, "input centering");
  j.refuseUnlessEquals("class_embeddings_concat", false, "class-conditioned UNets");
  if (j.present("mid_block_only_cross_attention") && j.boolean("mid_block_only_cross_attention"))
    j.unsupported("mid_block_only_cross_attention", "every transformer block has self-attention");
  if (j.present("mid_block_scale_factor") && j.number("mid_block_scale_factor") != 1.0)
    j.unsupported("mid_block_scale_factor", "the mid block output is not rescaled");
  if (j.present("resnet_out_scale_factor") && j.number("resnet_out_scale_factor") != 1.0)
    j.unsupported("resnet_out_scale_factor", "resnet outputs are not rescaled");
  if (j.present("only_cross_attention")) {
    const json& v = j.raw("only_cross_attention");
    bool any = v.is_boolean() ? v.get<bool>() : false;
    if (v.is_array()) {
      for (const json& e : v) {
        if (!e.is_boolean()) j.fail("only_cross_attention", "must be true/false or a list of them, got " + v.dump());
        any = any || e.get<bool>();
      }
    } else if (!v.is_boolean()) {
      j.fail("only_cross_attention", "must be true/false or a list of them, got " + v.dump());
    }
    if (any) j.unsupported("only_cross_attention", "every transformer block has self-attention");
  }
  const std::string act = j.string("act_fn", "silu");
  if (act != "silu" && act != "swish") j.unsupported("act_fn", "the UNet's activation is SiLU (\"silu\")");
}

UNetConfig fromJson(const ConfigJson& j) {
  refuseConditioningExtras(j);
  UNetConfig c;
  c.source = j.file();

  // sample_size defaults to None in diffusers, for which a pipeline has no default image size: required here.
  if (!j.present("sample_size")) j.fail("sample_size", "is missing (needed for the default image size)");
  if (j.raw("sample_size").is_array()) {
    std::vector<int> hw = j.intList("sample_size");
    if (hw.size() != 2 || hw[0] != hw[1]) j.unsupported("sample_size", "only square sample sizes");
    c.sampleSize = hw[0];
  } else {
    c.sampleSize = j.integer("sample_size");
  }
  c.inChannels = j.integer("in_channels", 4);
  c.outChannels = j.integer("out_channels", 4);
  c.flipSinToCos = j.boolean("flip_sin_to_cos", true);
  c.freqShift = static_cast<float>(j.number("freq_shift", 0));
  c.blockOutChannels = j.intList("block_out_channels", std::vector<int>{320, 640, 1280, 1280});
  c.downBlockTypes = j.stringList("down_block_types", kDefaultDownBlocks);
  c.upBlockTypes = j.stringList("up_block_types", kDefaultUpBlocks);
  for (const std::string& t : c.downBlockTypes)
    if (t != "CrossAttnDownBlock2D" && t != "DownBlock2D")
      j.unsupported("down_block_types", "block type \"" + t + "\"; sdgen implements CrossAttnDownBlock2D and DownBlock2D");
  for (const std::string& t : c.upBlockTypes)
    if (t != "CrossAttnUpBlock2D" && t != "UpBlock2D")
      j.unsupported("up_block_types", "block type \"" + t + "\"; sdgen implements CrossAttnUpBlock2D and UpBlock2D");
  if (j.present("mid_block_type")) {
    c.midBlockType = j.string("mid_block_type");
    if (c.midBlockType != "UNetMidBlock2DCrossAttn")
      j.unsupported("mid_block_type", "sdgen implements UNetMidBlock2DCrossAttn (or null: no mid block)");
  } else {
    // Absent: the default UNetMidBlock2DCrossAttn; an explicit null: no mid block.
    c.midBlockType = j.root().contains("mid_block_type") ? "" : "UNetMidBlock2DCrossAttn";
  }

  const size_t n = c.downBlockTypes.size();
  if (c.blockOutChannels.size() != n)
    j.fail("block_out_channels", "has " + std::to_string(c.blockOutChannels.size()) + " entries but down_block_types has " +
                                     std::to_string(n));
  if (c.upBlockTypes.size() != n)
    j.fail("up_block_types", "has " + std::to_string(c.upBlockTypes.size()) + " entries but down_block_types has " +
                                 std::to_string(n));
  c.layersPerBlock = j.intOrList("layers_per_block", n, 2);
  // diffusers' legacy naming: attention_head_dim counts heads unless num_attention_heads is given.
  c.attentionHeads = j.present("num_attention_heads") ? j.intOrList("num_attention_heads", n, std::nullopt)
                                                      : j.intOrList("attention_head_dim", n, 8);
  if (j.present("transformer_layers_per_block") && j.raw("transformer_layers_per_block").is_array())
    for (const json& e : j.raw("transformer_layers_per_block"))
      if (e.is_array()) j.unsupported("transformer_layers_per_block", "per-layer transformer depths (nested lists)");
  c.transformerLayersPerBlock = j.intOrList("transformer_layers_per_block", n, 1);

  if (j.present("cross_attention_dim") && j.raw("cross_attention_dim").is_array()) {
    std::vector<int> dims = j.intOrList("cross_attention_dim", n, std::nullopt);
    if (std::adjacent_find(dims.begin(), dims.end(), std::not_equal_to<>()) != dims.end())
      j.unsupported("cross_attention_dim", "different cross-attention widths per block");
    c.crossAttentionDim = dims[0];
  } else {
    c.crossAttentionDim = j.integer("cross_attention_dim", 1280);
  }
  c.useLinearProjection = j.boolean("use_linear_projection", false);
  // SDXL's config says null, which diffusers passes on as a false value.
  c.upcastAttention = j.present("upcast_attention") && j.boolean("upcast_attention");
  if (j.root().contains("norm_num_groups") && !j.present("norm_num_groups"))
    j.unsupported("norm_num_groups", "the UNet output is always group-normalized");
  c.normNumGroups = j.integer("norm_num_groups", 32);
  c.normEps = static_cast<float>(j.number("norm_eps", 1e-5));
  c.downsamplePadding = j.integer("downsample_padding", 1);
  if (c.downsamplePadding != 1)
    j.unsupported("downsample_padding", "downsampling convolutions are padded by 1 on every side");
  c.convInKernel = j.integer("conv_in_kernel", 3);
  c.convOutKernel = j.integer("conv_out_kernel", 3);
  if (c.convInKernel <= 0 || c.convInKernel % 2 == 0)
    j.unsupported("conv_in_kernel", "the kernel must be odd so that 'same' padding keeps the size");
  if (c.convOutKernel <= 0 || c.convOutKernel % 2 == 0)
    j.unsupported("conv_out_kernel", "the kernel must be odd so that 'same' padding keeps the size");
  if (j.present("time_embedding_dim") && j.integer("time_embedding_dim") != 4 * c.blockOutChannels.at(0))
    j.unsupported("time_embedding_dim", "the time embedding is 4 x block_out_channels[0] wide");
  if (j.present("addition_embed_type")) {
    c.additionEmbedType = j.string("addition_embed_type");
    if (!j.present("addition_time_embed_dim")) j.fail("addition_time_embed_dim", "is missing (text_time needs it)");
    if (!j.present("projection_class_embeddings_input_dim"))
      j.fail("projection_class_embeddings_input_dim", "is missing (text_time needs it)");
    c.additionTimeEmbedDim = j.integer("addition_time_embed_dim");
    c.projectionClassEmbeddingsInputDim = j.integer("projection_class_embeddings_input_dim");
    if (c.additionTimeEmbedDim <= 0 || c.additionTimeEmbedDim % 2)
      j.fail("addition_time_embed_dim", "must be a positive even number");
    if (c.projectionClassEmbeddingsInputDim <= 6 * c.additionTimeEmbedDim)
      j.fail("projection_class_embeddings_input_dim",
             "must exceed 6 x addition_time_embed_dim (the six time ids) by the pooled text embedding's width");
  }
  validateUNetConfig(c);
  return c;
}

}  // namespace

UNetConfig loadUNetConfig(const std::string& path) { return fromJson(ConfigJson::load(path)); }
UNetConfig parseUNetConfig(const std::string& json, const std::string& file) {
  return fromJson(ConfigJson::parse(json, file));
}

void validateUNetConfig(const UNetConfig& c) {
  auto fail = [&](const std::string& what) { throw Error("UNet config '" + c.source + "': " + what); };
  const size_t n = c.blockOutChannels.size();
  if (n == 0) fail("block_out_channels is empty");
  auto perBlock = [&](const char* name, size_t size) {
    if (size != n)
      fail(std::string(name) + " has " + std::to_string(size) + " entries for " + std::to_string(n) + " blocks");
  };
  perBlock("down_block_types", c.downBlockTypes.size());
  perBlock("up_block_types", c.upBlockTypes.size());
  perBlock("layers_per_block", c.layersPerBlock.size());
  perBlock("attention heads", c.attentionHeads.size());
  perBlock("transformer_layers_per_block", c.transformerLayersPerBlock.size());
  for (auto [name, v] : {std::pair<const char*, int>{"in_channels", c.inChannels},
                         {"out_channels", c.outChannels},
                         {"sample_size", c.sampleSize},
                         {"cross_attention_dim", c.crossAttentionDim},
                         {"norm_num_groups", c.normNumGroups}})
    if (v <= 0) fail(std::string(name) + " = " + std::to_string(v) + " must be positive");
  if (!(c.normEps > 0)) fail("norm_eps must be positive");
  // Attention happens in cross-attention down/up blocks, and in the mid block at the deepest level.
  auto checkAttention = [&](const std::string& where, int channels, int heads, int depth) {
    if (heads <= 0) fail(where + ": " + std::to_string(heads) + " attention heads");
    if (channels % heads != 0)
      fail(where + ": " + std::to_string(channels) + " channels are not divisible into " + std::to_string(heads) +
           " attention heads");
    if (depth <= 0) fail(where + ": transformer_layers_per_block must be positive, got " + std::to_string(depth));
  };
  for (size_t i = 0; i < n; ++i) {
    const int ch = c.blockOutChannels[i];
    const std::string block = "block " + std::to_string(i);
    if (ch <= 0) fail(block + ": block_out_channels must be positive, got " + std::to_string(ch));
    if (ch % c.normNumGroups != 0)
      fail(block + ": " + std::to_string(ch) + " channels are not divisible by norm_num_groups " +
           std::to_string(c.normNumGroups));
    if (c.layersPerBlock[i] <= 0) fail(block + ": layers_per_block must be positive");
    if (c.downBlockTypes[i] == "CrossAttnDownBlock2D")
      checkAttention("down " + block, ch, c.attentionHeads[i], c.transformerLayersPerBlock[i]);
    // Up block i mirrors down block n-1-i (diffusers reverses the per-block lists).
    if (c.upBlockTypes[i] == "CrossAttnUpBlock2D")
      checkAttention("up " + block, c.blockOutChannels[n - 1 - i], c.attentionHeads[n - 1 - i],
                     c.transformerLayersPerBlock[n - 1 - i]);
  }
  if (!c.midBlockType.empty())
    checkAttention("mid block", c.blockOutChannels.back(), c.attentionHeads.back(), c.transformerLayersPerBlock.back());
}

}  // namespace sdgen::models
