// The checks between the configs of one model: components from different models would load and compute garbage
// (or index out of bounds), so mismatches are refused with both sources named.
#include "engine/error.h"
#include "models/config/config_files.h"

namespace sdgen::models {

namespace {

// An ordinary UNet reads the latents; an inpainting UNet (diffusers' StableDiffusionInpaintPipeline, e.g.
// stable-diffusion-inpainting, stable-diffusion-2-inpainting) reads latents, mask and masked-image latents.
void validateLatents(const UNetConfig& unet, const VaeConfig& vae) {
  const int inpaintingChannels = 2 * vae.latentChannels + 1;
  if (unet.inChannels != vae.latentChannels && unet.inChannels != inpaintingChannels)
    throw Error("mismatched UNet/VAE latents: the UNet's in_channels is " + std::to_string(unet.inChannels) + " ('" +
                unet.source + "') but the VAE's latent_channels is " + std::to_string(vae.latentChannels) + " ('" +
                vae.source + "'); sdgen runs UNets of " + std::to_string(vae.latentChannels) +
                " input channels, or " + std::to_string(inpaintingChannels) +
                " for inpainting (latents, mask, masked-image latents)");
  if (unet.outChannels != vae.latentChannels)
    throw Error("mismatched UNet/VAE latents: the UNet's out_channels is " + std::to_string(unet.outChannels) +
                " ('" + unet.source + "') but the VAE's latent_channels is " + std::to_string(vae.latentChannels) +
                " ('" + vae.source + "')");
}

}  // namespace

void validateRefinerConfigs(const ClipTextConfig& text2, const UNetConfig& unet, const VaeConfig& vae) {
  if (text2.hiddenSize != unet.crossAttentionDim)
    throw Error("mismatched text-encoder/UNet widths: the SDXL refiner's text encoder's hidden_size is " +
                std::to_string(text2.hiddenSize) + " ('" + text2.source + "') but the UNet's cross_attention_dim is " +
                std::to_string(unet.crossAttentionDim) + " ('" + unet.source + "')");
  if (unet.additionEmbedType != "text_time")
    throw Error("the UNet ('" + unet.source + "') has no addition_embed_type \"text_time\", but the model is an SDXL "
                "refiner (requires_aesthetics_score): the pooled text embedding and aesthetic score would be ignored");
  if (text2.projectionDim + 5 * unet.additionTimeEmbedDim != unet.projectionClassEmbeddingsInputDim)
    throw Error("mismatched text-encoder/UNet added conditioning: the SDXL refiner's text encoder's projection_dim " +
                std::to_string(text2.projectionDim) + " ('" + text2.source + "') + 5 x addition_time_embed_dim " +
                std::to_string(unet.additionTimeEmbedDim) + " (original size, crop, aesthetic score) is not the "
                "UNet's projection_class_embeddings_input_dim " + std::to_string(unet.projectionClassEmbeddingsInputDim) +
                " ('" + unet.source + "')");
  validateLatents(unet, vae);
}

void validateModelConfigs(const ClipTextConfig& text, const UNetConfig& unet, const VaeConfig& vae,
                          const ClipTextConfig* text2) {
  if (text2) {
    // SDXL: the UNet attends to both encoders' hidden states side by side, and add_embedding reads the second's
    // pooled projection beside the six sinusoids of the time ids.
    if (text.hiddenSize + text2->hiddenSize != unet.crossAttentionDim)
      throw Error("mismatched text-encoder/UNet widths: the text encoders' hidden sizes " +
                  std::to_string(text.hiddenSize) + " ('" + text.source + "') + " + std::to_string(text2->hiddenSize) +
                  " ('" + text2->source + "') do not add up to the UNet's cross_attention_dim " +
                  std::to_string(unet.crossAttentionDim) + " ('" + unet.source + "')");
    if (unet.additionEmbedType != "text_time")
      throw Error("the UNet ('" + unet.source + "') has no addition_embed_type \"text_time\", but the model has two "
                  "text encoders (SDXL): the pooled text embedding would be ignored");
    if (text2->projectionDim + 6 * unet.additionTimeEmbedDim != unet.projectionClassEmbeddingsInputDim)
      throw Error("mismatched text-encoder/UNet added conditioning: the second text encoder's projection_dim " +
                  std::to_string(text2->projectionDim) + " ('" + text2->source + "') + 6 x addition_time_embed_dim " +
                  std::to_string(unet.additionTimeEmbedDim) + " is not the UNet's projection_class_embeddings_input_dim " +
                  std::to_string(unet.projectionClassEmbeddingsInputDim) + " ('" + unet.source + "')");
  } else if (!unet.additionEmbedType.empty()) {
    throw Error("the UNet ('" + unet.source + "') has addition_embed_type \"" + unet.additionEmbedType +
                "\", which needs SDXL's second text encoder (text_encoder_2) for its pooled embedding");
  } else if (text.hiddenSize != unet.crossAttentionDim)
    throw Error("mismatched text-encoder/UNet widths: the text encoder's hidden_size is " +
                std::to_string(text.hiddenSize) + " ('" + text.source + "') but the UNet's cross_attention_dim is " +
                std::to_string(unet.crossAttentionDim) + " ('" + unet.source +
                "'); the two components come from different models");
  validateLatents(unet, vae);
}

}  // namespace sdgen::models
