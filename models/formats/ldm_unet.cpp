// The UNet of a single-file checkpoint: LDM's openaimodel.UNetModel keys -> diffusers UNet2DConditionModel names,
// and the architecture read from the shapes.
//
// LDM numbers its blocks in one sequence: input_blocks.0 is conv_in, then per level I its resnets (each
// "input_blocks.K.0", with its spatial transformer at "input_blocks.K.1" on attention levels) and, except on the
// last level, a downsampler ("input_blocks.K.0.op"). output_blocks mirror them with one resnet more per level;
// the upsampler is the last module of a level's last output block (".1.conv", or ".2.conv" after a transformer).
#include <algorithm>

#include "models/formats/ldm_components.h"

namespace sdgen::models {

namespace {

struct Level {
  int resnets = 0;
  int channels = 0;
  bool attention = false;
  int depth = 0;  // transformer blocks per spatial transformer
};

void mapConv(LdmComponentKeys& k, const std::string& name, const std::string& key) {
  k.map(name + ".weight", key + ".weight");
  k.map(name + ".bias", key + ".bias");
}

// ResBlock -> ResnetBlock2D: the sub-module names differ, the parameters do not. Keys the block has beyond these
// are left unmapped and refused at the end.
void mapResnet(LdmComponentKeys& k, const std::string& name, const std::string& key) {
  for (auto [ldm, diffusers] : {std::pair<const char*, const char*>{"in_layers.0", "norm1"},
                                {"in_layers.2", "conv1"},
                                {"emb_layers.1", "time_emb_proj"},
                                {"out_layers.0", "norm2"},
                                {"out_layers.3", "conv2"}})
    mapConv(k, name + diffusers, key + ldm);
  if (k.has(key + "skip_connection.weight")) mapConv(k, name + "conv_shortcut", key + "skip_connection");
}

// SpatialTransformer -> Transformer2DModel: the same parameter names. SD's attention projections have no bias.
void mapTransformer(LdmComponentKeys& k, const std::string& name, const std::string& key, int depth) {
  for (const char* layer : {"norm", "proj_in", "proj_out"}) mapConv(k, name + layer, key + layer);
  for (int t = 0; t < depth; ++t) {
    const std::string block = "transformer_blocks." + std::to_string(t) + ".";
    for (const char* attn : {"attn1.", "attn2."}) {
      for (const char* proj : {"to_q.weight", "to_k.weight", "to_v.weight"})
        k.map(name + block + attn + proj, key + block + attn + proj);
      mapConv(k, name + block + attn + "to_out.0", key + block + attn + "to_out.0");
    }
    for (const char* layer : {"norm1", "norm2", "norm3", "ff.net.0.proj", "ff.net.2"})
      mapConv(k, name + block + layer, key + block + layer);
  }
}

}  // namespace

UNetConfig mapLdmUNet(LdmComponentKeys& k, bool openClipFamily, int sampleSize, bool sdxl) {
  UNetConfig c;
  c.source = k.path() + " (UNet inferred from tensor shapes)";

  const std::vector<int64_t>& convIn = k.shape("input_blocks.0.0.weight", 4);
  if (convIn[2] != convIn[3]) k.fail("conv_in kernel " + formatShape(convIn) + " is not square");
  c.inChannels = static_cast<int>(convIn[1]);
  c.convInKernel = static_cast<int>(convIn[2]);
  const int64_t c0 = convIn[0];
  mapConv(k, "conv_in", "input_blocks.0.0");
  const std::vector<int64_t>& timeEmbed = k.shape("time_embed.0.weight", 2);
  if (timeEmbed[0] != 4 * c0 || timeEmbed[1] != c0)
    k.fail("time_embed.0.weight has shape " + formatShape(timeEmbed) + ", expected [" + std::to_string(4 * c0) + "," +
           std::to_string(c0) + "] (a time embedding 4x the first level's width)");
  mapConv(k, "time_embedding.linear_1", "time_embed.0");
  mapConv(k, "time_embedding.linear_2", "time_embed.2");
  if (sdxl) {  // the text_time added conditioning: label_emb = Sequential(Sequential(linear, SiLU, linear))
    const std::vector<int64_t>& label = k.shape("label_emb.0.0.weight", 2);
    if (label[0] != 4 * c0)
      k.fail("label_emb.0.0.weight has shape " + formatShape(label) + ", expected [" + std::to_string(4 * c0) +
             ", N] (SDXL's added conditioning, as wide as the time embedding)");
    mapConv(k, "add_embedding.linear_1", "label_emb.0.0");
    mapConv(k, "add_embedding.linear_2", "label_emb.0.2");
    c.additionEmbedType = "text_time";
    c.projectionClassEmbeddingsInputDim = static_cast<int>(label[1]);
  }

  // Down path.
  std::vector<Level> levels(1);
  for (int b = 1; k.hasUnder("input_blocks." + std::to_string(b) + "."); ++b) {
    const std::string key = "input_blocks." + std::to_string(b) + ".";
    const int i = static_cast<int>(levels.size()) - 1;
    Level& level = levels.back();
    if (k.has(key + "0.op.weight")) {
      if (level.resnets == 0) k.fail("level " + std::to_string(i) + " has a downsampler but no resnet");
      mapConv(k, "down_blocks." + std::to_string(i) + ".downsamplers.0.conv", key + "0.op");
      levels.emplace_back();
      continue;
    }
    if (!k.has(key + "0.in_layers.0.weight"))
      k.fail("input block '" + k.prefix() + key + "' is neither a resnet nor a downsampler");
    const int j = level.resnets++;
    const std::string block = "down_blocks." + std::to_string(i);
    mapResnet(k, block + ".resnets." + std::to_string(j) + ".", key + "0.");
    const int channels = static_cast<int>(k.shape(key + "0.in_layers.2.weight", 4)[0]);
    const bool attention = k.hasUnder(key + "1.");
    const int depth = attention ? k.countIndexed(key + "1.transformer_blocks.") : 0;
    if (j == 0) {
      level.channels = channels;
      level.attention = attention;
      level.depth = depth;
    } else if (channels != level.channels || attention != level.attention || depth != level.depth) {
      k.fail("the resnets of level " + std::to_string(i) + " differ in width or attention (input block " +
             std::to_string(b) + ")");
    }
    if (attention) mapTransformer(k, block + ".attentions." + std::to_string(j) + ".", key + "1.", depth);
  }
  if (levels.back().resnets == 0) k.fail("the last down level has no resnet (a downsampler ends the input blocks)");
  const int n = static_cast<int>(levels.size());

  // Mid block: resnet, spatial transformer, resnet.
  if (!k.hasUnder("middle_block.1.transformer_blocks."))
    k.fail("the mid block has no spatial transformer at '" + k.prefix() +
           "middle_block.1' (a UNet without mid-block attention is not SD 1.x/2.x)");
  const int midDepth = k.countIndexed("middle_block.1.transformer_blocks.");
  // diffusers builds the mid block with the last level's transformer depth.
  if (levels.back().attention && midDepth != levels.back().depth)
    k.fail("the mid block has " + std::to_string(midDepth) + " transformer blocks, the last level " +
           std::to_string(levels.back().depth));
  mapResnet(k, "mid_block.resnets.0.", "middle_block.0.");
  mapTransformer(k, "mid_block.attentions.0.", "middle_block.1.", midDepth);
  mapResnet(k, "mid_block.resnets.1.", "middle_block.2.");

  // Up path: up block I mirrors level N-1-I with one resnet more.
  int b = 0;
  for (int i = 0; i < n; ++i) {
    const Level& level = levels[n - 1 - i];
    const std::string block = "up_blocks." + std::to_string(i);
    for (int j = 0; j <= level.resnets; ++j, ++b) {
      const std::string key = "output_blocks." + std::to_string(b) + ".";
      if (!k.has(key + "0.in_layers.0.weight"))
        k.fail("output block '" + k.prefix() + key + "0' is not a resnet; the output blocks do not mirror the " +
               std::to_string(n) + " input levels");
      mapResnet(k, block + ".resnets." + std::to_string(j) + ".", key + "0.");
      const bool attention = k.has(key + "1.norm.weight");
      if (attention != level.attention)
        k.fail("output block '" + k.prefix() + key + "' " + (attention ? "has" : "lacks") +
               " a spatial transformer, unlike input level " + std::to_string(n - 1 - i));
      if (attention) {
        if (k.countIndexed(key + "1.transformer_blocks.") != level.depth)
          k.fail("output block '" + k.prefix() + key + "1' has a different transformer depth than input level " +
                 std::to_string(n - 1 - i));
        mapTransformer(k, block + ".attentions." + std::to_string(j) + ".", key + "1.", level.depth);
      }
      if (i < n - 1 && j == level.resnets)
        mapConv(k, block + ".upsamplers.0.conv", key + (attention ? "2" : "1") + ".conv");
    }
  }
  if (k.hasUnder("output_blocks." + std::to_string(b) + "."))
    k.fail("output block " + std::to_string(b) + " is more than the input blocks mirror");

  const std::vector<int64_t>& convOut = k.shape("out.2.weight", 4);
  if (convOut[1] != c0 || convOut[2] != convOut[3]) k.fail("conv_out kernel has shape " + formatShape(convOut));
  c.outChannels = static_cast<int>(convOut[0]);
  c.convOutKernel = static_cast<int>(convOut[2]);
  mapConv(k, "conv_norm_out", "out.0");
  mapConv(k, "conv_out", "out.2");
  k.requireAllUsed("not part of a Stable Diffusion 1.x/2.x UNet (class or label embeddings, ControlNet and SDXL "
                   "parts are not implemented)");

  // The configuration.
  const std::vector<int64_t>& toK = k.shape("middle_block.1.transformer_blocks.0.attn2.to_k.weight", 2);
  c.crossAttentionDim = static_cast<int>(toK[1]);
  c.useLinearProjection = k.shape("middle_block.1.proj_in.weight").size() == 2;
  for (int i = 0; i < n; ++i) {
    const Level& level = levels[i];
    c.blockOutChannels.push_back(level.channels);
    c.downBlockTypes.push_back(level.attention ? "CrossAttnDownBlock2D" : "DownBlock2D");
    c.upBlockTypes.push_back(levels[n - 1 - i].attention ? "CrossAttnUpBlock2D" : "UpBlock2D");
    c.layersPerBlock.push_back(level.resnets);
    c.transformerLayersPerBlock.push_back(level.attention ? level.depth : midDepth);
    // LDM's configs: SD 2.x num_head_channels = 64, SD 1.x num_heads = 8. Where a level that attends (its own
    // transformers, or the mid block's on the last level) is no multiple of 64 wide, the heads are undetermined
    // (0) and a config folder must give them; a level without attention does not use its entry.
    const bool attends = level.attention || i == n - 1;
    if (!openClipFamily)
      c.attentionHeads.push_back(8);
    else if (level.channels % 64 == 0)
      c.attentionHeads.push_back(level.channels / 64);
    else
      c.attentionHeads.push_back(attends ? 0 : 1);
  }
  c.midBlockType = "UNetMidBlock2DCrossAttn";
  // diffusers' default config for SD 2.x single files (stable-diffusion-2-1) upcasts attention; sdgen's attention
  // accumulates in fp32 either way.
  c.upcastAttention = openClipFamily && !sdxl;  // SDXL's config: upcast_attention null (false)
  c.sampleSize = sampleSize;
  return c;
}

}  // namespace sdgen::models
