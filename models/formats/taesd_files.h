#pragma once
// TAESD, the tiny autoencoder (diffusers' AutoencoderTiny, madebyollin's taesd/taesdxl): its configuration and
// weights from a user-supplied path, always exposed under diffusers' names ("decoder.layers.K.conv.0.weight",
// "encoder.layers.K.weight"), whatever the layout (docs/taesd.md):
//  - a diffusers folder: config.json + diffusion_pytorch_model.safetensors (or a folder holding only madebyollin's
//    taesd_decoder.safetensors / taesd_encoder.safetensors);
//  - one .safetensors file under diffusers' names (encoder and/or decoder), config inferred from the shapes;
//  - madebyollin's taesd_decoder.safetensors / taesd_encoder.safetensors (nn.Sequential indices: an encoder
//    "K.*" is diffusers' "encoder.layers.K.*", a decoder "K.*" is "decoder.layers.(K-1).*", since the original
//    decoder starts with a parameterless Clamp, as diffusers' convert_tiny_autoencoder_to_diffusers.py maps
//    them). Given one of the two, the other is taken from beside it when there.
// Every tensor must belong to the architecture (an unknown one is an error naming the file and the tensor); a
// missing or mis-shaped one is an error naming the file and the tensor when the network loads.
#include <memory>
#include <string>
#include <vector>

#include "models/weight_source.h"

namespace sdgen::models {

// diffusers' AutoencoderTiny config (the fields that change the computation).
struct TaesdConfig {
  int inChannels = 3, outChannels = 3, latentChannels = 4;
  std::vector<int> encoderBlockOutChannels{64, 64, 64, 64}, decoderBlockOutChannels{64, 64, 64, 64};
  std::vector<int> numEncoderBlocks{1, 3, 3, 3}, numDecoderBlocks{3, 3, 3, 1};
  float scalingFactor = 1.0f;  // the pipelines decode latents / scaling_factor and encode to latents * it
  std::string source;          // the config file, or "inferred from FILE"

  int upscale() const { return 1 << (static_cast<int>(decoderBlockOutChannels.size()) - 1); }
  int downscale() const { return 1 << (static_cast<int>(encoderBlockOutChannels.size()) - 1); }
};

// Which latent space the weights decode: taesd (SD 1.x/2.x) or taesdxl (SDXL). The tensors are the same shapes
// for both; the name of the file or folder (or the config's _name_or_path) tells them apart, else Unknown.
enum class TaesdVariant { Taesd, TaesdXl, Unknown };
const char* taesdVariantName(TaesdVariant v);  // "taesd", "taesdxl", "unknown"

struct TaesdFiles {
  std::string path;  // as given
  TaesdConfig config;
  TaesdVariant variant = TaesdVariant::Unknown;
  std::string variantReason;  // how the variant was told, or why it could not be
  std::string layout;         // "diffusers folder", "diffusers file", "madebyollin files"
  // Under diffusers' names; either may be null when the path holds only one half (the other is an error only
  // when it is needed: a decode without the decoder, an image to image without the encoder).
  std::unique_ptr<WeightSource> decoderWeights, encoderWeights;
};

// Throws sdgen::Error naming the path, file, field or tensor.
TaesdFiles openTaesd(const std::string& path);

// The architecture's tensor names for one half ("decoder" or "encoder") of `config`, sorted.
std::vector<std::string> taesdTensorNames(const TaesdConfig& config, const std::string& half);

}  // namespace sdgen::models
