#pragma once
// sdgen --refiner PATH --refiner-start F (docs/sdxl.md "Refiner"): diffusers' base + refiner ensemble. The SDXL
// base runs the first steps with denoising_end = F and hands over its latents undecoded; the SDXL refiner
// (StableDiffusionXLImg2ImgPipeline with requires_aesthetics_score) continues them with denoising_start = F,
// without noising them again, and decodes. Both use the same prompt, seed (a fresh generator each, as two
// pipeline calls with generator=torch.Generator().manual_seed(seed) do), sampler, steps and guidance. The base
// may be image to image (-i, --strength: StableDiffusionXLImg2ImgPipeline with denoising_end) or inpainting (-i,
// --mask: StableDiffusionXLInpaintPipeline with denoising_end; the refiner then is one too, with the base's latents
// as its image and the same mask, blending the kept region from them).
#include <memory>
#include <string>
#include <vector>

#include "engine/context.h"
#include "models/pipeline/text_to_image.h"

namespace sdgen::app {

// Before the device is touched: --refiner's path exists (an error naming the flag and the path).
void checkRefinerPath(const std::string& path);

// How errors name the refiner and the base: the CLI's flags, or the server's fields.
struct RefinerNames {
  std::string refiner;    // e.g. "--refiner 'PATH'"
  std::string needsBase;  // e.g. "--refiner needs an SDXL base model as -m/--model"
};

class RefinerPass {
 public:
  // Loads the refiner with the base's load options (precision, autotune, progress; its own path and `loras`, none
  // of the base's LoRAs, no TAESD) and checks the pair: the base is an SDXL base model, the refiner an SDXL refiner, and their VAEs share
  // the latent space (channels, scale, scaling_factor). Errors name --refiner, -m and the files.
  RefinerPass(Context& ctx, const pipeline::LoadOptions& baseLoad, const std::string& refinerPath, double start,
              const pipeline::TextToImage& base, const std::vector<lora::LoraSpec>& loras = {});
  // A refiner loaded elsewhere (the generation worker's model cache), checked as above; `refiner` must outlive
  // this pass. Errors name what `names` says.
  RefinerPass(pipeline::TextToImage& refiner, const RefinerNames& names, double start,
              const pipeline::TextToImage& base);
  // Throws unless `base` is an SDXL base model (not SD 1.x/2.x, not itself a refiner).
  static void checkBase(const RefinerNames& names, const pipeline::TextToImage& base);
  // The load options of a refiner run after a base loaded with `baseLoad`: its own path and `loras` (the base's
  // LoRAs and LoRA folder are the base's: they do not fit the refiner's networks); no TAESD, tokenizer or config
  // overrides.
  static pipeline::LoadOptions refinerLoadOptions(const pipeline::LoadOptions& baseLoad, const std::string& refinerPath,
                                                  const std::vector<lora::LoraSpec>& loras = {});

  // The base's request for its part: up to the switch, latents out.
  pipeline::GenerationRequest baseRequest(pipeline::GenerationRequest request) const;
  // The refiner's part on the base's output (baseRequest(request)'s image), decoded; with request's mask when the
  // base inpainted. The prompt's LoRA tags are the base's: the refiner reads the prompt without them (a warning).
  pipeline::Image refine(const pipeline::GenerationRequest& request, const pipeline::Image& baseOutput,
                         const pipeline::GenerationHooks& hooks);

  pipeline::TextToImage& pipeline() { return *refiner_; }
  std::string modelName() const { return refiner_->modelName(); }
  double start() const { return start_; }

 private:
  void check(const RefinerNames& names, const pipeline::TextToImage& base) const;

  std::unique_ptr<pipeline::TextToImage> owned_;  // the CLI's: loaded by this pass
  pipeline::TextToImage* refiner_ = nullptr;
  double start_;
};

}  // namespace sdgen::app
