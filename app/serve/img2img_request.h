#pragma once
// POST /sdapi/v1/img2img's body (webui's StableDiffusionImg2ImgProcessingAPI): every txt2img field plus the init
// image, denoising_strength, and the inpainting fields, validated before the job queues. The images are decoded
// here (by the CLI's decoder, app/image_decode.h), bounded by --max-pixels from their headers before any pixel is
// decoded; the engine then runs exactly what `sdgen -i INIT --strength S [--mask MASK]` runs (docs/img2img.md).
//
// sdgen does not resize, blur masks or crop: width/height default to the init image's size and must equal it;
// with a mask, mask_blur > 0, inpainting_fill other than 1 ("original", what diffusers' pipeline does) and
// inpaint_full_res = true are refused (422), as are initial_noise_multiplier != 1 and latent_mask. Without a
// mask those inpainting fields change nothing in webui either, so they are accepted whatever they hold (clients
// such as webuiapi always send webui's defaults: mask_blur 4, inpaint_full_res true).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "app/serve/txt2img_request.h"
#include "models/pipeline/image_inputs.h"

namespace sdgen::serve {

struct Img2ImgInputs {
  pipeline::RgbImage initImage;
  std::optional<pipeline::RgbImage> mask;  // inverted already when inpainting_mask_invert asked for it
  float strength = 0.75f;                  // denoising_strength
  int resizeMode = 0;                      // echoed; no resize happens since the sizes must match
  int maskInvert = 0;                      // inpainting_mask_invert, echoed
  // include_init_images: the init image and mask as sent, echoed in the response's parameters (webui echoes
  // them only then).
  std::optional<std::string> echoedInitImage, echoedMask;
};

// Throws ValidationFailed listing every bad field: loc ["body", "init_images", 0] for the image itself,
// ["body", "mask"], ["body", "denoising_strength"], ...
ImageRequest parseImg2ImgRequest(const nlohmann::json& body, const ModelRegistry& models, const RequestLimits& limits,
                                 int defaultClipSkip);

// img2img's fields of the response's "parameters", added to txt2img's.
void addImg2ImgParameters(const Img2ImgInputs& in, nlohmann::json& parameters);

}  // namespace sdgen::serve
