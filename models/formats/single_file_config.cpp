#include "models/formats/single_file_config.h"

#include <filesystem>

#include "engine/error.h"
#include "models/config/config_files.h"

namespace sdgen::models {

namespace {

std::string show(int v) { return std::to_string(v); }
std::string show(bool v) { return v ? "true" : "false"; }
std::string show(const std::string& v) { return "\"" + v + "\""; }
template <typename T>
std::string show(const std::vector<T>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + show(v[i]);
  return s + "]";
}

// Checks one field the shapes determine.
class Agreement {
 public:
  Agreement(std::string weights, std::string config, const char* component)
      : weights_(std::move(weights)), config_(std::move(config)), component_(component) {}
  template <typename T>
  void same(const char* field, const T& fromWeights, const T& fromConfig) const {
    if (fromWeights == fromConfig) return;
    throw Error("single-file checkpoint '" + weights_ + "' does not match the config '" + config_ + "': the " +
                component_ + "'s " + field + " is " + show(fromWeights) + " in the weights but " + show(fromConfig) +
                " in the config");
  }

 private:
  std::string weights_, config_;
  const char* component_;
};

}  // namespace

FolderConfigs loadFolderConfigs(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw Error("config folder '" + dir + "' does not exist");
  const fs::path d(dir);
  FolderConfigs f;
  // An SDXL refiner's folder has no text_encoder/ (applyFolderConfigs does not read it for a refiner).
  if (fs::exists(d / "text_encoder" / "config.json") || !fs::exists(d / "text_encoder_2" / "config.json"))
    f.textEncoder = loadClipTextConfig((d / "text_encoder" / "config.json").string());
  if (fs::exists(d / "text_encoder_2" / "config.json"))
    f.textEncoder2 = loadClipTextConfig((d / "text_encoder_2" / "config.json").string());
  f.unet = loadUNetConfig((d / "unet" / "config.json").string());
  f.vae = loadVaeConfig((d / "vae" / "config.json").string());
  f.scheduler = loadSchedulerFile((d / "scheduler" / "scheduler_config.json").string());
  return f;
}

void applyFolderConfigs(LdmCheckpoint& ckpt, const FolderConfigs& folder) {
  {
    const UNetConfig& w = ckpt.unetConfig;
    const UNetConfig& c = folder.unet;
    Agreement a(w.source, c.source, "UNet");
    a.same("in_channels", w.inChannels, c.inChannels);
    a.same("out_channels", w.outChannels, c.outChannels);
    a.same("block_out_channels", w.blockOutChannels, c.blockOutChannels);
    a.same("down_block_types", w.downBlockTypes, c.downBlockTypes);
    a.same("up_block_types", w.upBlockTypes, c.upBlockTypes);
    a.same("mid_block_type", w.midBlockType, c.midBlockType);
    a.same("layers_per_block", w.layersPerBlock, c.layersPerBlock);
    a.same("cross_attention_dim", w.crossAttentionDim, c.crossAttentionDim);
    a.same("use_linear_projection", w.useLinearProjection, c.useLinearProjection);
    a.same("conv_in_kernel", w.convInKernel, c.convInKernel);
    a.same("conv_out_kernel", w.convOutKernel, c.convOutKernel);
    // Transformer depths show only where there are transformers: attention levels, and the mid block (which
    // diffusers builds with the last entry).
    for (size_t i = 0; i < w.downBlockTypes.size(); ++i)
      if (w.downBlockTypes[i] == "CrossAttnDownBlock2D")
        a.same(("transformer_layers_per_block[" + std::to_string(i) + "]").c_str(), w.transformerLayersPerBlock[i],
               c.transformerLayersPerBlock[i]);
    a.same("transformer_layers_per_block of the mid block", w.transformerLayersPerBlock.back(),
           c.transformerLayersPerBlock.back());
  }
  {
    const VaeConfig& w = ckpt.vaeConfig;
    const VaeConfig& c = folder.vae;
    Agreement a(w.source, c.source, "VAE");
    a.same("in_channels", w.inChannels, c.inChannels);
    a.same("out_channels", w.outChannels, c.outChannels);
    a.same("latent_channels", w.latentChannels, c.latentChannels);
    a.same("block_out_channels", w.blockOutChannels, c.blockOutChannels);
    a.same("layers_per_block", w.layersPerBlock, c.layersPerBlock);
    a.same("use_quant_conv", w.useQuantConv, c.useQuantConv);
    a.same("use_post_quant_conv", w.usePostQuantConv, c.usePostQuantConv);
    a.same("mid_block_add_attention", w.midBlockAddAttention, c.midBlockAddAttention);
  }
  const bool refiner = ckpt.family == LdmFamily::SDXLRefiner;
  if (!refiner) {
    const ClipTextConfig& w = ckpt.textEncoderConfig;
    const ClipTextConfig& c = folder.textEncoder;
    Agreement a(w.source, c.source, "text encoder");
    a.same("vocab_size", w.vocabSize, c.vocabSize);
    a.same("hidden_size", w.hiddenSize, c.hiddenSize);
    a.same("intermediate_size", w.intermediateSize, c.intermediateSize);
    a.same("num_hidden_layers", w.numHiddenLayers, c.numHiddenLayers);
    a.same("max_position_embeddings", w.maxPositionEmbeddings, c.maxPositionEmbeddings);
  }
  if (ckpt.family == LdmFamily::SDXL || refiner) {
    if (!folder.textEncoder2)
      throw Error("single-file checkpoint '" + ckpt.textEncoder2Config.source + "' is " + ldmFamilyName(ckpt.family) +
                  ", but the config folder of '" + folder.unet.source + "' has no text_encoder_2/config.json");
    const ClipTextConfig& w = ckpt.textEncoder2Config;
    const ClipTextConfig& c = *folder.textEncoder2;
    Agreement a(w.source, c.source, "second text encoder");
    a.same("vocab_size", w.vocabSize, c.vocabSize);
    a.same("hidden_size", w.hiddenSize, c.hiddenSize);
    a.same("intermediate_size", w.intermediateSize, c.intermediateSize);
    a.same("num_hidden_layers", w.numHiddenLayers, c.numHiddenLayers);
    a.same("projection_dim", w.projectionDim, c.projectionDim);
    a.same("addition_time_embed_dim", ckpt.unetConfig.additionTimeEmbedDim, folder.unet.additionTimeEmbedDim);
    const int pad2 = ckpt.textEncoder2Config.padTokenId;
    ckpt.textEncoder2Config = c;
    ckpt.textEncoder2Config.padTokenId = pad2;
  }
  const int pad = ckpt.textEncoderConfig.padTokenId;
  ckpt.unetConfig = folder.unet;
  ckpt.vaeConfig = folder.vae;
  if (!refiner) ckpt.textEncoderConfig = folder.textEncoder;
  ckpt.textEncoderConfig.padTokenId = pad;  // the tokenizer decides (openModel)
  ckpt.undetermined.clear();
}

}  // namespace sdgen::models
