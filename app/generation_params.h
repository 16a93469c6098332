#pragma once
// The "parameters" text that stable-diffusion-webui stores in its PNGs, so that webui's "PNG Info", civitai and
// other tools read sdgen's images:
//   PROMPT
//   Negative prompt: NEGATIVE            (only when there is one)
//   Steps: 20, Sampler: Euler a, CFG scale: 7.5, Seed: 42, Size: 512x512, Model: NAME, Denoising strength: 0.75,
//   Clip skip: 2, Original size: 1024x768, Crop: 0x64, Target size: 1024x1024 (SDXL, only those given),
//   Refiner: NAME, Refiner switch at: 0.8, Aesthetic score: 6, Negative aesthetic score: 2.5 (with an SDXL
//   refiner, as a second model or on its own; webui's refiner keys),
//   Prompt syntax: plain, Version: sdgen 0.1.0
#include <cstdint>
#include <optional>
#include <string>

#include "models/pipeline/micro_conditioning.h"
#include "models/prompt/prompt_syntax.h"
#include "models/sampling/sampler_kind.h"

namespace sdgen::app {

struct GenerationParams {
  std::string prompt, negativePrompt;
  int steps = 0;
  sampling::SamplerKind sampler = sampling::SamplerKind::EulerAncestral;
  bool karras = false;
  bool exponential = false, sgmUniform = false;  // written as webui does: "Schedule type: Exponential"
  float cfgScale = 0;
  uint64_t seed = 0;
  int width = 0, height = 0;
  std::string modelName;
  // Image to image: written as webui does ("Denoising strength: 0.75"), after the model.
  std::optional<float> denoisingStrength;
  int clipSkip = 1;  // webui's convention; written only when > 1, as webui does
  pipeline::SdxlMicroConditioning micro;  // SDXL: the sizes and crop given (unset ones are not written)
  // The SDXL refiner as a second model (--refiner, --refiner-start); aestheticScores: whenever a refiner ran
  // (the scores of micro are written then).
  std::string refinerName;
  std::optional<double> refinerSwitchAt;
  bool aestheticScores = false;
  // Written only when not webui's (the default, and how webui itself reads every prompt): "Prompt syntax: plain".
  prompt::PromptSyntax promptSyntax = prompt::PromptSyntax::Webui;
  std::string version;  // e.g. "sdgen 0.1.0"
};

// The PNG text keyword webui uses.
inline constexpr const char* kParametersKeyword = "parameters";

std::string formatGenerationParams(const GenerationParams& p);

// webui's value quoting: a value with ',', ':' or a newline is written as a JSON string (non-ASCII kept).
std::string quoteParamValue(const std::string& value);

}  // namespace sdgen::app
