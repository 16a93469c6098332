#pragma once
// Reading the JSON configs of a diffusers Stable Diffusion folder into the plain configs of model_config.h:
//   text_encoder/config.json        -> ClipTextConfig   (transformers CLIPTextConfig)
//   unet/config.json                -> UNetConfig       (diffusers UNet2DConditionModel)
//   vae/config.json                 -> VaeConfig        (diffusers AutoencoderKL)
//   scheduler/scheduler_config.json -> SchedulerFile    (what it sets; SchedulerConfig per sampler class)
//   model_index.json                -> ModelIndex
// An absent field takes the default of the Python class's __init__ (so a config parses as diffusers reads it);
// int-or-list fields are expanded to one entry per block. Whatever sdgen does not implement is refused with an
// sdgen::Error naming the file, the field and the value; invalid JSON, wrong types and missing required fields
// name the file and the field. docs/models.md lists the refusals.
#include <map>
#include <string>
#include <utility>

#include "models/config/model_config.h"

namespace sdgen::models {

ClipTextConfig loadClipTextConfig(const std::string& path);
UNetConfig loadUNetConfig(const std::string& path);
VaeConfig loadVaeConfig(const std::string& path);
SchedulerFile loadSchedulerFile(const std::string& path);

// The same from JSON text; `file` is what messages call it.
ClipTextConfig parseClipTextConfig(const std::string& json, const std::string& file);
UNetConfig parseUNetConfig(const std::string& json, const std::string& file);
VaeConfig parseVaeConfig(const std::string& json, const std::string& file);
SchedulerFile parseSchedulerFile(const std::string& json, const std::string& file);

// The config diffusers' SchedulerClass.from_config(pipe.scheduler.config) gives, for a StableDiffusionPipeline
// loaded from a folder with this scheduler file: the fields the file sets keep its values (after the pipeline's
// shims: steps_offset becomes 1, clip_sample false), every other field takes the default of `className`
// (DDIMScheduler, EulerDiscreteScheduler, EulerAncestralDiscreteScheduler, DPMSolverMultistepScheduler), not of
// the file's _class_name. Values sdgen does not implement for that class are refused naming the file and field.
// Loading checks the fields every class reads (noise schedule, prediction_type, timestep_spacing, steps_offset).
SchedulerConfig schedulerConfigFor(const SchedulerFile& file, const std::string& className);

// model_index.json: the pipeline class and, per component, [library, class] (null entries are left out).
struct ModelIndex {
  std::string className;  // "StableDiffusionPipeline"
  bool sdxl = false;      // text_encoder_2 and tokenizer_2 too (StableDiffusionXLPipeline)
  // SDXL: the negative conditioning is zeros when no negative prompt is given (diffusers' __init__ default true).
  bool forceZerosForEmptyPrompt = false;
  // The SDXL refiner (StableDiffusionXLImg2ImgPipeline with requires_aesthetics_score true): only text_encoder_2
  // and tokenizer_2 (text_encoder and tokenizer [null, null]), aesthetic-score conditioning (docs/sdxl.md).
  bool requiresAestheticsScore = false;
  std::map<std::string, std::pair<std::string, std::string>> components;  // "unet" -> {"diffusers", "UNet2DConditionModel"}
  std::string source;
};
// Refuses pipelines other than Stable Diffusion 1.x/2.x, SDXL and the SDXL refiner (SD3, ...)
// and components of other classes than CLIPTextModel(WithProjection), CLIPTokenizer, UNet2DConditionModel,
// AutoencoderKL and a scheduler.
ModelIndex loadModelIndex(const std::string& path);
ModelIndex parseModelIndex(const std::string& json, const std::string& file);

// Checks of one config on its own (sizes positive, lists one entry per block, channels divisible by the norm
// groups and the attention heads); parse*/load* and the single-file inference call them.
void validateClipTextConfig(const ClipTextConfig& c);
void validateUNetConfig(const UNetConfig& c);
void validateVaeConfig(const VaeConfig& c);
void validateSchedulerConfig(const SchedulerConfig& c);
// Checks between the configs of one model: text-encoder width = UNet cross_attention_dim, UNet in/out channels =
// VAE latent_channels. Errors name both sources. SDXL (text2: the second text encoder): the two hidden sizes add up
// to cross_attention_dim, the UNet has text_time added conditioning fed by text2's projection.
void validateModelConfigs(const ClipTextConfig& text, const UNetConfig& unet, const VaeConfig& vae,
                          const ClipTextConfig* text2 = nullptr);
// The SDXL refiner's: cross_attention_dim = text2's hidden size, text_time added conditioning of text2's projection
// and five time ids (original size, crop, aesthetic score), the latents as above.
void validateRefinerConfigs(const ClipTextConfig& text2, const UNetConfig& unet, const VaeConfig& vae);

}  // namespace sdgen::models
