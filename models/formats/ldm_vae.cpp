// The VAE of a single-file checkpoint: LDM's AutoencoderKL keys -> diffusers AutoencoderKL names, and the
// architecture read from the shapes.
#include "models/formats/ldm_components.h"

namespace sdgen::models {

namespace {

void mapConv(LdmComponentKeys& k, const std::string& name, const std::string& key) {
  k.map(name + ".weight", key + ".weight");
  k.map(name + ".bias", key + ".bias");
}

// ResnetBlock: the same names as diffusers' ResnetBlock2D except the 1x1 shortcut.
void mapResnet(LdmComponentKeys& k, const std::string& name, const std::string& key) {
  for (const char* layer : {"norm1", "conv1", "norm2", "conv2"}) mapConv(k, name + layer, key + layer);
  if (k.has(key + "nin_shortcut.weight")) mapConv(k, name + "conv_shortcut", key + "nin_shortcut");
}

// The mid block of the encoder or decoder ("encoder." / "decoder."). LDM's AttnBlock computes q/k/v and the output
// projection with 1x1 convolutions; diffusers' Attention uses linear layers: same numbers, [C,C,1,1] -> [C,C].
bool mapMid(LdmComponentKeys& k, const std::string& side) {
  mapResnet(k, side + "mid_block.resnets.0.", side + "mid.block_1.");
  mapResnet(k, side + "mid_block.resnets.1.", side + "mid.block_2.");
  const std::string attn = side + "mid.attn_1.";
  if (!k.hasUnder(attn)) return false;
  const std::string name = side + "mid_block.attentions.0.";
  mapConv(k, name + "group_norm", attn + "norm");
  for (auto [ldm, diffusers] : {std::pair<const char*, const char*>{"q", "to_q"},
                                {"k", "to_k"},
                                {"v", "to_v"},
                                {"proj_out", "to_out.0"}}) {
    k.mapSqueezed(name + diffusers + ".weight", attn + ldm + ".weight");
    k.map(name + diffusers + ".bias", attn + ldm + ".bias");
  }
  return true;
}

}  // namespace

VaeConfig mapLdmVae(LdmComponentKeys& k, int imageSize) {
  VaeConfig c;
  c.source = k.path() + " (VAE inferred from tensor shapes)";
  const int n = k.countIndexed("encoder.down.");
  if (n == 0) k.fail("no encoder levels ('" + k.prefix() + "encoder.down.0.*')");
  const int layers = k.countIndexed("encoder.down.0.block.");
  c.layersPerBlock = layers;

  for (int i = 0; i < n; ++i) {
    const std::string level = "encoder.down." + std::to_string(i) + ".";
    if (k.countIndexed(level + "block.") != layers)
      k.fail("encoder level " + std::to_string(i) + " has " + std::to_string(k.countIndexed(level + "block.")) +
             " resnets, level 0 has " + std::to_string(layers));
    c.blockOutChannels.push_back(static_cast<int>(k.shape(level + "block.0.conv1.weight", 4)[0]));
    for (int j = 0; j < layers; ++j)
      mapResnet(k, "encoder.down_blocks." + std::to_string(i) + ".resnets." + std::to_string(j) + ".",
                level + "block." + std::to_string(j) + ".");
    if (i < n - 1) mapConv(k, "encoder.down_blocks." + std::to_string(i) + ".downsamplers.0.conv", level + "downsample.conv");
  }
  // The decoder stores its levels by resolution (up.0 is the full-resolution one); diffusers' up_blocks run in
  // execution order, so up_blocks.I is up.(N-1-I), and it upsamples unless it is the last.
  if (k.countIndexed("decoder.up.") != n)
    k.fail("the decoder has " + std::to_string(k.countIndexed("decoder.up.")) + " levels, the encoder " +
           std::to_string(n));
  for (int i = 0; i < n; ++i) {
    const std::string level = "decoder.up." + std::to_string(n - 1 - i) + ".";
    if (k.countIndexed(level + "block.") != layers + 1)
      k.fail("decoder level " + std::to_string(n - 1 - i) + " has " + std::to_string(k.countIndexed(level + "block.")) +
             " resnets, expected " + std::to_string(layers + 1));
    for (int j = 0; j <= layers; ++j)
      mapResnet(k, "decoder.up_blocks." + std::to_string(i) + ".resnets." + std::to_string(j) + ".",
                level + "block." + std::to_string(j) + ".");
    if (i < n - 1) mapConv(k, "decoder.up_blocks." + std::to_string(i) + ".upsamplers.0.conv", level + "upsample.conv");
  }
  const bool encoderAttention = mapMid(k, "encoder.");
  const bool decoderAttention = mapMid(k, "decoder.");
  if (encoderAttention != decoderAttention) k.fail("only one of the encoder and decoder mid blocks has attention");
  c.midBlockAddAttention = encoderAttention;

  for (const char* side : {"encoder", "decoder"}) {
    const std::string s = side;
    mapConv(k, s + ".conv_in", s + ".conv_in");
    mapConv(k, s + ".conv_norm_out", s + ".norm_out");
    mapConv(k, s + ".conv_out", s + ".conv_out");
  }
  c.useQuantConv = k.has("quant_conv.weight");
  c.usePostQuantConv = k.has("post_quant_conv.weight");
  if (c.useQuantConv) mapConv(k, "quant_conv", "quant_conv");
  if (c.usePostQuantConv) mapConv(k, "post_quant_conv", "post_quant_conv");
  k.ignoreUnder("loss.");  // the training discriminator some checkpoints still carry
  k.requireAllUsed("not part of an AutoencoderKL (attention outside the mid block is not implemented)");

  c.inChannels = static_cast<int>(k.shape("encoder.conv_in.weight", 4)[1]);
  c.outChannels = static_cast<int>(k.shape("decoder.conv_out.weight", 4)[0]);
  c.latentChannels = static_cast<int>(k.shape("decoder.conv_in.weight", 4)[1]);
  if (k.shape("encoder.conv_out.weight", 4)[0] != 2 * c.latentChannels)
    k.fail("encoder.conv_out has " + std::to_string(k.shape("encoder.conv_out.weight")[0]) +
           " outputs, expected mean and log-variance of " + std::to_string(c.latentChannels) + " latent channels");
  c.normNumGroups = 32;  // LDM's Normalize() is GroupNorm(32)
  c.sampleSize = imageSize;
  c.scalingFactor = 0.18215f;  // LDM's scale_factor for SD 1.x/2.x (diffusers' LDM_VAE_DEFAULT_SCALING_FACTOR)
  return c;
}

}  // namespace sdgen::models
