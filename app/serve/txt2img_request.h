#pragma once
// POST /sdapi/v1/txt2img's body, as stable-diffusion-webui defines it (modules/api/models.py: the fields of
// StableDiffusionProcessingTxt2Img plus sampler_index, send_images, ...), validated before the job queues; the
// fields img2img shares with it (img2img's own: app/serve/img2img_request.h).
// Fields missing or null take the model's sdgen.json default, then webui's default. Unknown fields are ignored
// as webui ignores them; known fields asking for something sdgen cannot do (hires fix, scripts, styles,
// variation seeds, tiling, face restoration) are refused rather than silently dropped.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/serve/model_registry.h"
#include "app/serve/validation_error.h"
#include "models/pipeline/micro_conditioning.h"
#include "models/sampling/sampler_kind.h"

namespace sdgen::serve {

struct RequestLimits {
  int64_t maxPixels = 1024 * 1024;  // width * height (--max-pixels)
  static constexpr int kMaxImagesPerRequest = 64;  // batch_size * n_iter
  static constexpr size_t kMaxPromptBytes = 16384;
};

struct Img2ImgInputs;  // app/serve/img2img_request.h

// A validated txt2img or img2img request.
struct ImageRequest {
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
  // SDXL's micro-conditioning (sdgen's fields original_size, crop, target_size and their negative_ forms, as the
  // CLI's flags; docs/serve.md); other models ignore it, as the CLI does.
  pipeline::SdxlMicroConditioning micro;
  // webui's refiner_checkpoint and refiner_switch_at: an SDXL refiner from the model list continues the last steps
  // (docs/serve.md; the switch as diffusers' denoising_end / denoising_start, docs/sdxl.md "Refiner").
  std::optional<ModelEntry> refiner;
  double refinerSwitchAt = 0.8;

  // img2img's init image, mask and strength; null for txt2img. Shared: the job and the engine read it, nobody
  // writes it after validation.
  std::shared_ptr<const Img2ImgInputs> img2img;

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
ImageRequest parseTxt2ImgRequest(const nlohmann::json& body, const ModelRegistry& models,
                                 const RequestLimits& limits, int defaultClipSkip);

// The fields txt2img and img2img share, into `r`, appending to `errors` (throws at once only when the body is no
// object). `initSize`: img2img's init image size, which width and height default to and must equal (sdgen does
// not resize); null for txt2img.
struct InitImageSize {
  int width = 0, height = 0;
};
void parseCommonFields(const nlohmann::json& body, std::vector<FieldError>& errors, ImageRequest& r,
                       const ModelRegistry& models, const RequestLimits& limits, int defaultClipSkip,
                       const InitImageSize* initSize);

// The double nearest the shortest decimal that reads back as `v`: 0.6f is echoed as 0.6, not 0.6000000238418579
// (clients compare what they sent with what comes back).
double decimalOf(float v);

// The request as webui echoes it in a response's "parameters" (its fields with the values used).
nlohmann::json requestParameters(const ImageRequest& r);

}  // namespace sdgen::serve
