#pragma once
// POST /sdapi/v1/txt2img's body, as stable-diffusion-webui defines it (modules/api/models.py: the fields of
// StableDiffusionProcessingTxt2Img plus sampler_index, send_images, ...), validated before the job queues.
// Fields missing or null take the model's sdgen.json default, then webui's default. Unknown fields are ignored
// as webui ignores them; known fields asking for something sdgen cannot do (hires fix, scripts, styles,
// variation seeds, tiling, face restoration) are refused rather than silently dropped.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "app/serve/model_registry.h"
#include "app/serve/validation_error.h"
#include "models/sampling/sampler_kind.h"

namespace sdgen::serve {

struct RequestLimits {
  int64_t maxPixels = 1024 * 1024;  // width * height (--max-pixels)
  static constexpr int kMaxImagesPerRequest = 64;  // batch_size * n_iter
  static constexpr size_t kMaxPromptBytes = 16384;
};

struct Txt2ImgRequest {
  std::string prompt, negativePrompt;
  std::optional<uint64_t> seed;  // none: -1, a random seed chosen when the job is made
  int batchSize = 1, nIter = 1;
  int steps = 20;
  float cfgScale = 7;
  int width = 512, height = 512;
  sampling::SamplerKind sampler = sampling::SamplerKind::Euler;
  bool karras = false;
  bool exponential = false, sgmUniform = false;  // scheduler "exponential" / "sgm_uniform"
  int clipSkip = 1;  // webui's CLIP_stop_at_last_layers: 1 = the last layer
  bool sendImages = true;
  ModelEntry model;  // resolved: override_settings.sd_model_checkpoint, else the server's current model

  int images() const { return batchSize * nIter; }
};

// webui's sampler names ("Euler a", "DPM++ 2M Karras", ...), their aliases ("k_euler_a") and sdgen's flag names
// ("euler_a"). Karras is set for the "... Karras" names.
struct SamplerChoice {
  sampling::SamplerKind kind;
  bool karras;
};
std::optional<SamplerChoice> parseWebuiSampler(std::string_view name);

// GET /sdapi/v1/samplers: [{"name", "aliases", "options"}] in webui's format.
nlohmann::json webuiSamplerList();

// Throws ValidationFailed listing every bad field (loc ["body", field]). `defaultClipSkip`: the server's
// CLIP_stop_at_last_layers option.
Txt2ImgRequest parseTxt2ImgRequest(const nlohmann::json& body, const ModelRegistry& models,
                                   const RequestLimits& limits, int defaultClipSkip);

// The request as webui echoes it in a response's "parameters" (its fields with the values used).
nlohmann::json txt2imgParameters(const Txt2ImgRequest& r);

}  // namespace sdgen::serve
