#include "app/serve/img2img_request.h"

#include <exception>
#include <vector>

#include "app/cli_options.h"
#include "app/image_decode.h"
#include "app/serve/base64.h"
#include "app/serve/field_reader.h"

namespace sdgen::serve {

using nlohmann::json;

namespace {

// Decodes one image field (base64 or a data URL, PNG or JPEG); on failure adds an error at `loc` and returns
// nullopt. The decoded size is bounded by `maxPixels` from the image's header, before its pixels are decoded.
std::optional<pipeline::RgbImage> decodeImageField(const json& value, std::vector<json> loc, const std::string& name,
                                                   int64_t maxPixels, std::vector<FieldError>& errors) {
  auto fail = [&](const std::string& msg, const char* type) {
    errors.push_back(FieldError{loc, name + ": " + msg, type, shortenedInput(value), nullptr});
    return std::nullopt;
  };
  if (!value.is_string()) return fail("expected a base64 PNG or JPEG string (or a data URL)", "string_type");
  auto bytes = decodeImageText(value.get_ref<const std::string&>(), app::ImageLimits::kMaxFileBytes);
  if (!bytes) return fail("not valid base64 (or a data URL without ',')", "value_error");
  try {
    pipeline::RgbImage image = app::decodeImage(*bytes, name, maxPixels);
    constexpr int kMultiple = app::CliLimits::kSizeMultiple;
    if (image.width % kMultiple || image.height % kMultiple)
      return fail("the image is " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                      "; its sides must be multiples of " + std::to_string(kMultiple) +
                      " (sdgen does not resize or crop)",
                  "value_error");
    return image;
  } catch (const std::exception& e) {
    // The decoder's message names the field already ('init_images[0]' is not a PNG or JPEG image, ...).
    errors.push_back(FieldError{loc, shorten(e.what(), 300), "value_error", nullptr, nullptr});
    return std::nullopt;
  }
}

// webui's inpainting_mask_invert is an int (0/1); some clients send a bool.
std::optional<int> maskInvertField(FieldReader& f) {
  const json* v = f.get("inpainting_mask_invert");
  if (!v) return std::nullopt;
  if (v->is_boolean()) return v->get<bool>() ? 1 : 0;
  if (auto i = f.integer("inpainting_mask_invert", 0, 1)) return int(*i);
  return std::nullopt;
}

// White becomes black and back: the CLI's run with the inverted mask file gives the same image.
void invert(pipeline::RgbImage& mask) {
  for (auto& v : mask.rgb) v = static_cast<uint8_t>(255 - v);
}

}  // namespace

ImageRequest parseImg2ImgRequest(const json& body, const ModelRegistry& models, const RequestLimits& limits,
                                 int defaultClipSkip) {
  if (!body.is_object())
    throw ValidationFailed({FieldError{{"body"}, "the body must be a JSON object", "model_attributes_type",
                                       shortenedInput(body), nullptr}});
  std::vector<FieldError> errors;
  FieldReader f(body, {"body"}, errors);
  auto in = std::make_shared<Img2ImgInputs>();

  // The init image first: its size is the output's.
  bool imageOk = false;
  if (const json* images = f.get("init_images"); !images) {
    f.fail("init_images", "init_images: required: a list of one base64 PNG or JPEG image", "missing", nullptr);
  } else if (!images->is_array() || images->size() != 1) {
    f.fail("init_images", "init_images: expected a list of exactly one image (sdgen takes one init image per request)",
           "list_type", images);
  } else if (auto image = decodeImageField((*images)[0], {"body", "init_images", 0}, "init_images[0]",
                                           limits.maxPixels, errors)) {
    in->initImage = std::move(*image);
    imageOk = true;
  }
  if (const json* m = f.get("mask")) {
    if (auto mask = decodeImageField(*m, {"body", "mask"}, "mask", limits.maxPixels, errors)) {
      if (imageOk && (mask->width != in->initImage.width || mask->height != in->initImage.height))
        f.fail("mask", "mask: the mask is " + std::to_string(mask->width) + "x" + std::to_string(mask->height) +
                           " but the init image is " + std::to_string(in->initImage.width) + "x" +
                           std::to_string(in->initImage.height) + "; they must be the same size",
               "value_error", nullptr);
      else in->mask = std::move(*mask);
    }
  }

  using L = app::CliLimits;
  const auto strength = f.number("denoising_strength", L::kMinStrength, L::kMaxStrength);
  if (strength) in->strength = float(*strength);
  if (auto v = f.integer("resize_mode", 0, 3)) in->resizeMode = int(*v);
  if (auto v = maskInvertField(f)) in->maskInvert = *v;
  // Type-checked always; refused only where they would change the picture (with a mask), see the header.
  const auto blur = f.integer("mask_blur", 0, 64);
  const auto fill = f.integer("inpainting_fill", 0, 3);
  const auto fullRes = f.boolean("inpaint_full_res");
  f.integer("inpaint_full_res_padding", 0, 256);
  if (f.get("mask")) {
    if (blur && *blur != 0)
      f.fail("mask_blur", "mask_blur: mask blur is not supported by sdgen; send 0 (the mask is used as it is, "
                          "binarized at grey 128)", "value_error", f.get("mask_blur"));
    if (fill && *fill != 1)
      f.fail("inpainting_fill", "inpainting_fill: " + std::to_string(*fill) + " is not supported by sdgen; send 1 "
                                "('original': denoising starts from the noised init image, as diffusers' inpainting "
                                "pipeline does)", "value_error", f.get("inpainting_fill"));
    if (fullRes && *fullRes)
      f.fail("inpaint_full_res", "inpaint_full_res: inpainting only the masked area at full resolution is not "
                                 "supported by sdgen; send false", "value_error", f.get("inpaint_full_res"));
  }
  f.unsupported("initial_noise_multiplier", [](const json& v) { return v.is_number() && v.get<double>() == 1; },
                "an initial noise multiplier other than 1");
  f.unsupported("latent_mask", isEmpty, "a separate latent mask (latent_mask)");
  if (auto include = f.boolean("include_init_images"); include && *include) {
    if (const json* images = f.get("init_images"); images && images->is_array() && !images->empty() &&
                                                   (*images)[0].is_string())
      in->echoedInitImage = (*images)[0].get<std::string>();
    if (const json* m = f.get("mask"); m && m->is_string()) in->echoedMask = m->get<std::string>();
  }

  ImageRequest r;
  const InitImageSize size{in->initImage.width, in->initImage.height};
  parseCommonFields(body, errors, r, models, limits, defaultClipSkip, imageOk ? &size : nullptr);
  // The steps the strength leaves must be at least one (the CLI's rule, app/image_inputs: int(steps * strength)).
  if (strength || !f.get("denoising_strength")) {
    try {
      pipeline::firstStepForStrength(r.steps, in->strength);
    } catch (const std::exception& e) {
      f.fail("denoising_strength", "denoising_strength: " + shorten(e.what(), 200), "value_error",
             f.get("denoising_strength"));
    }
  }
  if (!errors.empty()) throw ValidationFailed(std::move(errors));
  if (in->mask && in->maskInvert) invert(*in->mask);
  r.img2img = std::move(in);
  return r;
}

void addImg2ImgParameters(const Img2ImgInputs& in, json& p) {
  p["init_images"] = in.echoedInitImage ? json::array({*in.echoedInitImage}) : json(nullptr);
  p["mask"] = in.echoedMask ? json(*in.echoedMask) : json(nullptr);
  p["denoising_strength"] = decimalOf(in.strength);
  p["resize_mode"] = in.resizeMode;
  p["inpainting_mask_invert"] = in.maskInvert;
  p["mask_blur"] = 0;
  p["inpainting_fill"] = 1;
  p["inpaint_full_res"] = false;
  p["include_init_images"] = in.echoedInitImage.has_value();
}

}  // namespace sdgen::serve
