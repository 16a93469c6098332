#include "app/refiner_pass.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "engine/error.h"
#include "models/prompt/lora_tags.h"

namespace sdgen::app {

namespace {

std::string latentSpace(const pipeline::TextToImage& t) {
  std::ostringstream s;
  s << t.latentChannels() << " latent channels, " << t.vaeScaleFactor() << "x scale, scaling_factor "
    << t.vaeScalingFactor();
  return s.str();
}

}  // namespace

void checkRefinerPath(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error("--refiner '" + path + "' does not exist");
}

RefinerPass::RefinerPass(Context& ctx, const pipeline::LoadOptions& baseLoad, const std::string& refinerPath,
                         double start, const pipeline::TextToImage& base, const std::vector<lora::LoraSpec>& loras)
    : start_(start) {
  const RefinerNames names{"--refiner '" + refinerPath + "'", "--refiner needs an SDXL base model as -m/--model"};
  checkBase(names, base);  // before the refiner loads
  owned_ = std::make_unique<pipeline::TextToImage>(ctx, refinerLoadOptions(baseLoad, refinerPath, loras));
  refiner_ = owned_.get();
  check(names, base);
}

RefinerPass::RefinerPass(pipeline::TextToImage& refiner, const RefinerNames& names, double start,
                         const pipeline::TextToImage& base)
    : refiner_(&refiner), start_(start) {
  check(names, base);
}

pipeline::LoadOptions RefinerPass::refinerLoadOptions(const pipeline::LoadOptions& baseLoad,
                                                      const std::string& refinerPath,
                                                      const std::vector<lora::LoraSpec>& loras) {
  pipeline::LoadOptions load = baseLoad;
  load.modelPath = refinerPath;
  load.tokenizerPath.clear();
  load.configPath.clear();
  load.loras = loras;
  load.loraDir.clear();
  load.taesdPath.clear();
  return load;
}

void RefinerPass::checkBase(const RefinerNames& names, const pipeline::TextToImage& base) {
  if (!base.isSdxlModel() || base.isSdxlRefiner())
    throw Error(names.needsBase + "; '" + base.modelName() + "' is " +
                (base.isSdxlRefiner() ? "itself an SDXL refiner" : "not an SDXL model (SD 1.x/2.x)"));
}

void RefinerPass::check(const RefinerNames& names, const pipeline::TextToImage& base) const {
  checkBase(names, base);
  if (!refiner_->isSdxlRefiner())
    throw Error(names.refiner + " is not an SDXL refiner (one text encoder, text_encoder_2, and "
                "aesthetic-score conditioning: model_index.json's requires_aesthetics_score, or a single file with "
                "conditioner.embedders.0.model only)");
  if (latentSpace(*refiner_) != latentSpace(base))
    throw Error(names.refiner + ": its VAE's latent space (" + latentSpace(*refiner_) +
                ") is not the base model's '" + base.modelName() + "' (" + latentSpace(base) +
                "); the refiner cannot continue its latents");
}

pipeline::GenerationRequest RefinerPass::baseRequest(pipeline::GenerationRequest request) const {
  request.denoisingEnd = start_;
  return request;
}

pipeline::Image RefinerPass::refine(const pipeline::GenerationRequest& request, const pipeline::Image& baseOutput,
                                    const pipeline::GenerationHooks& hooks) {
  pipeline::GenerationRequest r = request;
  r.denoisingEnd.reset();
  r.denoisingStart = start_;
  r.startLatents = baseOutput.latents;
  // An image-to-image base's image: its latents are what the refiner continues. An inpainting base's mask stays:
  // the refiner blends the kept region from those latents (StableDiffusionXLInpaintPipeline with denoising_start).
  r.initImage.reset();
  r.width = baseOutput.width;
  r.height = baseOutput.height;
  // The prompt's LoRA tags were the base's (a LoRA for the base does not fit the refiner's networks): the refiner
  // reads the prompt without them.
  bool droppedTags = false;
  if (r.promptSyntax == prompt::PromptSyntax::Webui) {
    prompt::PromptLoras tags = prompt::extractLoraTags(r.prompt);
    droppedTags = !tags.loras.empty();
    r.prompt = std::move(tags.prompt);
  }
  pipeline::Image image = refiner_->generate(r, hooks);
  if (droppedTags) image.warnings.push_back("the prompt's LoRA tags apply to the base model only, not to the refiner");
  // Both read the same prompt: a warning about it (a cut-off prompt) once.
  std::vector<std::string> warnings = baseOutput.warnings;
  for (const std::string& w : image.warnings)
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  image.warnings = std::move(warnings);
  return image;
}

}  // namespace sdgen::app
