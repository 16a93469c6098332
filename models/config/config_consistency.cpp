// The checks between the configs of one model: components from different models would load and compute garbage
// (or index out of bounds), so mismatches are refused with both sources named.
#include "engine/error.h"
#include "models/config/config_files.h"

namespace sdgen::models {

void validateModelConfigs(const ClipTextConfig& text, const UNetConfig& unet, const VaeConfig& vae) {
  if (text.hiddenSize != unet.crossAttentionDim)
    throw Error("mismatched text-encoder/UNet widths: the text encoder's hidden_size is " +
                std::to_string(text.hiddenSize) + " ('" + text.source + "') but the UNet's cross_attention_dim is " +
                std::to_string(unet.crossAttentionDim) + " ('" + unet.source +
                "'); the two components come from different models");
  // An ordinary UNet reads the latents; an inpainting UNet (diffusers' StableDiffusionInpaintPipeline, e.g.
  // stable-diffusion-inpainting, stable-diffusion-2-inpainting) reads latents, mask and masked-image latents.
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

}  // namespace sdgen::models
