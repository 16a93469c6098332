#pragma once
// sdgen --refiner PATH --refiner-start F (docs/sdxl.md "Refiner"): diffusers' base + refiner ensemble. The SDXL
// base runs the first steps with denoising_end = F and hands over its latents undecoded; the SDXL refiner
// (StableDiffusionXLImg2ImgPipeline with requires_aesthetics_score) continues them with denoising_start = F,
// without noising them again, and decodes. Both use the same prompt, seed (a fresh generator each, as two
// pipeline calls with generator=torch.Generator().manual_seed(seed) do), sampler, steps and guidance. The base
// may be image to image (-i, --strength: StableDiffusionXLImg2ImgPipeline with denoising_end).
#include <memory>
#include <string>

#include "engine/context.h"
#include "models/pipeline/text_to_image.h"

namespace sdgen::app {

// Before the device is touched: --refiner's path exists (an error naming the flag and the path).
void checkRefinerPath(const std::string& path);

class RefinerPass {
 public:
  // Loads the refiner with the base's load options (precision, autotune, progress; its own path, no LoRAs, no
  // TAESD) and checks the pair: the base is an SDXL base model, the refiner an SDXL refiner, and their VAEs share
  // the latent space (channels, scale, scaling_factor). Errors name --refiner, -m and the files.
  RefinerPass(Context& ctx, const pipeline::LoadOptions& baseLoad, const std::string& refinerPath, double start,
              const pipeline::TextToImage& base);

  // The base's request for its part: up to the switch, latents out.
  pipeline::GenerationRequest baseRequest(pipeline::GenerationRequest request) const;
  // The refiner's part on the base's output (baseRequest(request)'s image), decoded. The prompt's LoRA tags are
  // the base's: the refiner reads the prompt without them (with a warning).
  pipeline::Image refine(const pipeline::GenerationRequest& request, const pipeline::Image& baseOutput,
                         const pipeline::GenerationHooks& hooks);

  pipeline::TextToImage& pipeline() { return *refiner_; }
  std::string modelName() const { return refiner_->modelName(); }
  double start() const { return start_; }

 private:
  std::unique_ptr<pipeline::TextToImage> refiner_;
  double start_;
};

}  // namespace sdgen::app
