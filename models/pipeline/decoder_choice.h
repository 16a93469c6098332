#pragma once
// Which network turns latents into pixels (docs/taesd.md): for the final image, the model's VAE or TAESD; for the
// live preview, the cheap latent-to-RGB projection or TAESD.
namespace sdgen::pipeline {

enum class ImageDecoder { Vae, Taesd };
enum class PreviewDecoder { Approx, Taesd };

inline const char* imageDecoderName(ImageDecoder d) { return d == ImageDecoder::Taesd ? "taesd" : "full"; }
inline const char* previewDecoderName(PreviewDecoder d) { return d == PreviewDecoder::Taesd ? "taesd" : "approx"; }

}  // namespace sdgen::pipeline
