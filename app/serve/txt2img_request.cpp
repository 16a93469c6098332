#include "app/serve/txt2img_request.h"

#include <charconv>
#include <cstdlib>
#include <limits>
#include <vector>

#include "app/cli_options.h"
#include "app/serve/field_reader.h"
#include "app/serve/img2img_request.h"

namespace sdgen::serve {

using nlohmann::json;
using sampling::SamplerKind;

namespace {

struct SamplerName {
  const char* name;
  std::vector<const char*> aliases;
  SamplerKind kind;
  bool karras;
};

// webui's names and aliases (modules/sd_samplers_*.py) for the samplers sdgen has.
const std::vector<SamplerName>& samplerNames() {
  static const std::vector<SamplerName> names = {
      {"Euler a", {"k_euler_a", "k_euler_ancestral", "euler_a"}, SamplerKind::EulerAncestral, false},
      {"Euler", {"k_euler", "euler"}, SamplerKind::Euler, false},
      {"DDIM", {"ddim"}, SamplerKind::Ddim, false},
      {"DPM++ 2M", {"k_dpmpp_2m", "dpmpp_2m"}, SamplerKind::DpmPP2M, false},
      {"DPM++ 2M Karras", {"k_dpmpp_2m_ka"}, SamplerKind::DpmPP2M, true},
      {"DPM++ SDE", {"k_dpmpp_sde", "dpmpp_sde"}, SamplerKind::DpmPPSde, false},
      {"DPM++ SDE Karras", {"k_dpmpp_sde_ka"}, SamplerKind::DpmPPSde, true},
      {"DPM++ 2M SDE", {"k_dpmpp_2m_sde", "dpmpp_2m_sde"}, SamplerKind::DpmPP2MSde, false},
      {"DPM++ 2M SDE Karras", {"k_dpmpp_2m_sde_ka"}, SamplerKind::DpmPP2MSde, true},
      {"DPM++ 2S a", {"k_dpmpp_2s_a", "dpmpp_2s_a"}, SamplerKind::DpmPP2SAncestral, false},
      {"DPM++ 2S a Karras", {"k_dpmpp_2s_a_ka"}, SamplerKind::DpmPP2SAncestral, true},
      {"LMS", {"k_lms", "lms"}, SamplerKind::Lms, false},
      {"LMS Karras", {"k_lms_ka"}, SamplerKind::Lms, true},
      {"Heun", {"k_heun", "heun"}, SamplerKind::Heun, false},
      {"DPM2", {"k_dpm_2", "dpm2"}, SamplerKind::Dpm2, false},
      {"DPM2 Karras", {"k_dpm_2_ka"}, SamplerKind::Dpm2, true},
      {"DPM2 a", {"k_dpm_2_a", "dpm2_a"}, SamplerKind::Dpm2Ancestral, false},
      {"DPM2 a Karras", {"k_dpm_2_a_ka"}, SamplerKind::Dpm2Ancestral, true},
      {"UniPC", {"unipc"}, SamplerKind::UniPC, false},
      {"LCM", {"k_lcm", "lcm"}, SamplerKind::Lcm, false},
  };
  return names;
}

std::string acceptedSamplers() {
  std::string s;
  for (const auto& n : samplerNames()) s += (s.empty() ? "" : ", ") + std::string("'") + n.name + "'";
  return s;
}

}  // namespace

std::optional<SamplerChoice> parseWebuiSampler(std::string_view name) {
  for (const auto& n : samplerNames()) {
    if (name == n.name) return SamplerChoice{n.kind, n.karras};
    for (const char* a : n.aliases)
      if (name == a) return SamplerChoice{n.kind, n.karras};
  }
  return std::nullopt;
}

json webuiSamplerList() {
  json list = json::array();
  for (const auto& n : samplerNames()) {
    json options = json::object();
    if (n.karras) options["scheduler"] = "karras";
    list.push_back({{"name", n.name}, {"aliases", n.aliases}, {"options", options}});
  }
  return list;
}

void parseCommonFields(const json& body, std::vector<FieldError>& errors, ImageRequest& r, const ModelRegistry& models,
                       const RequestLimits& limits, int defaultClipSkip, const InitImageSize* initSize) {
  if (!body.is_object()) {
    throw ValidationFailed({FieldError{{"body"}, "the body must be a JSON object", "model_attributes_type",
                                       shortenedInput(body), nullptr}});
  }
  FieldReader f(body, {"body"}, errors);

  // The model first: its sdgen.json defaults fill the fields the request leaves out.
  r.model = models.current();
  r.clipSkip = defaultClipSkip;
  if (const json* o = f.get("override_settings")) {
    if (!o->is_object()) {
      f.fail("override_settings", "override_settings: expected an object", "dict_type", o);
    } else {
      FieldReader os(*o, {"body", "override_settings"}, errors);
      if (auto name = os.string("sd_model_checkpoint", 1024)) {
        if (auto m = models.find(*name)) {
          r.model = *m;
        } else {
          std::string accepted;
          for (const auto& m : models.list()) accepted += (accepted.empty() ? "'" : ", '") + shorten(m.title, 60) + "'";
          os.fail("sd_model_checkpoint", "sd_model_checkpoint: unknown model '" + shorten(*name) + "'; accepted: " +
                                             shorten(accepted, 600), "value_error", os.get("sd_model_checkpoint"));
        }
      }
      using L = app::CliLimits;
      if (auto c = os.integer("CLIP_stop_at_last_layers", L::kMinClipSkip, L::kMaxClipSkip)) r.clipSkip = int(*c);
    }
  }
  const app::ModelDefaults& d = r.model.defaults;
  // With an init image the output has its size, as on the command line: the model's default size does not apply.
  r.width = initSize ? initSize->width : d.width.value_or(512);
  r.height = initSize ? initSize->height : d.height.value_or(512);
  r.steps = d.steps.value_or(50);  // webui's StableDiffusionProcessing default
  r.cfgScale = d.cfgScale.value_or(7.0f);
  r.negativePrompt = d.negativePrompt.value_or("");
  r.sampler = d.sampler.value_or(SamplerKind::Euler);  // webui's sampler_index default is "Euler"
  r.karras = d.karras.value_or(false);

  using L = app::CliLimits;
  if (auto v = f.string("prompt", RequestLimits::kMaxPromptBytes)) r.prompt = *v;
  if (auto v = f.string("negative_prompt", RequestLimits::kMaxPromptBytes)) r.negativePrompt = *v;
  // Seeds use all 64 bits (the CLI's -s takes them), beyond int64: unsigned values are read as they are.
  if (const json* s = f.get("seed"); s && s->is_number_unsigned()) r.seed = s->get<uint64_t>();
  else if (auto v = f.integer("seed", -1, std::numeric_limits<int64_t>::max()); v && *v >= 0) r.seed = uint64_t(*v);
  if (auto v = f.integer("batch_size", 1, RequestLimits::kMaxImagesPerRequest)) r.batchSize = int(*v);
  if (auto v = f.integer("n_iter", 1, RequestLimits::kMaxImagesPerRequest)) r.nIter = int(*v);
  if (r.images() > RequestLimits::kMaxImagesPerRequest)
    f.fail("n_iter", "batch_size * n_iter: " + std::to_string(r.images()) + " images is more than " +
                         std::to_string(RequestLimits::kMaxImagesPerRequest) + " per request",
           "less_than_equal", f.get("n_iter"), {{"le", RequestLimits::kMaxImagesPerRequest}});
  if (auto v = f.integer("steps", L::kMinSteps, L::kMaxSteps)) r.steps = int(*v);
  if (auto v = f.number("cfg_scale", L::kMinCfgScale, L::kMaxCfgScale)) r.cfgScale = float(*v);
  bool sizeOk = true;
  for (auto [field, target] : {std::pair{"width", &r.width}, std::pair{"height", &r.height}}) {
    auto v = f.integer(field, L::kMinSize, L::kMaxSize);
    if (!v) {
      sizeOk &= f.get(field) == nullptr;
      continue;
    }
    if (initSize && *v != *target) {
      // webui resizes the init image to width x height (resize_mode); sdgen refuses rather than change the picture.
      f.fail(field, std::string(field) + ": " + std::to_string(*v) + " differs from the init image's " + field + " " +
                        std::to_string(*target) + "; sdgen does not resize: send an init image of the output size, "
                        "or leave width and height out",
             "value_error", f.get(field));
      continue;
    }
    if (*v % L::kSizeMultiple) {
      f.fail(field, std::string(field) + ": " + std::to_string(*v) + " is not a multiple of " +
                        std::to_string(L::kSizeMultiple), "multiple_of", f.get(field), {{"multiple_of", L::kSizeMultiple}});
      sizeOk = false;
      continue;
    }
    *target = int(*v);
  }
  // The init image's own size is checked where it is read (img2img_request.cpp).
  if (!initSize && sizeOk && int64_t(r.width) * r.height > limits.maxPixels) {
    f.fail(f.get("width") ? "width" : "height",
           "width x height: " + std::to_string(r.width) + "x" + std::to_string(r.height) + " = " +
               std::to_string(int64_t(r.width) * r.height) + " pixels is more than this server's limit of " +
               std::to_string(limits.maxPixels) + " (--max-pixels)",
           "less_than_equal", nullptr, {{"max_pixels", limits.maxPixels}});
  }

  // sampler_name wins over the deprecated sampler_index, as in webui's text2imgapi.
  const char* samplerField = f.get("sampler_name") ? "sampler_name" : f.get("sampler_index") ? "sampler_index" : nullptr;
  if (samplerField) {
    if (auto name = f.string(samplerField, 200)) {
      if (auto s = parseWebuiSampler(*name)) {
        r.sampler = s->kind;
        r.karras = s->karras;
      } else {
        f.fail(samplerField, std::string(samplerField) + ": unknown sampler '" + shorten(*name) + "'; accepted: " +
                                 acceptedSamplers(), "value_error", f.get(samplerField));
      }
    }
  }
  if (auto s = f.string("scheduler", 200)) {
    const std::string& v = *s;
    if (v == "karras" || v == "Karras") r.karras = true;
    else if (v == "uniform" || v == "Uniform") r.karras = false;
    else if (v == "exponential" || v == "Exponential") r.exponential = true;
    else if (v == "sgm_uniform" || v == "SGM Uniform") r.sgmUniform = true;
    else if (v != "automatic" && v != "Automatic")
      f.fail("scheduler", "scheduler: unknown schedule type '" + shorten(v) +
                              "'; accepted: 'automatic', 'uniform', 'karras', 'exponential', 'sgm_uniform'",
             "value_error", f.get("scheduler"));
    if (r.exponential && r.karras)
      f.fail("scheduler", "scheduler: 'exponential' with a Karras sampler name; pick one schedule", "value_error",
             f.get("scheduler"));
  }
  if (auto v = f.boolean("send_images")) r.sendImages = *v;
  // SDXL's micro-conditioning: sizes [width, height] from 1, crops [x, y] from 0, to the size limit (the CLI's).
  pipeline::SdxlMicroConditioning& m = r.micro;
  m.originalSize = f.intPair("original_size", 1, L::kMaxSize, "[width, height]");
  m.cropTopLeft = f.intPair("crop", 0, L::kMaxSize, "[x, y]");
  m.targetSize = f.intPair("target_size", 1, L::kMaxSize, "[width, height]");
  m.negativeOriginalSize = f.intPair("negative_original_size", 1, L::kMaxSize, "[width, height]");
  m.negativeCropTopLeft = f.intPair("negative_crop", 0, L::kMaxSize, "[x, y]");
  m.negativeTargetSize = f.intPair("negative_target_size", 1, L::kMaxSize, "[width, height]");
  // diffusers uses the negative sizes only when both are given and ignores either alone: refused, as the CLI does.
  const bool negOriginal = f.get("negative_original_size"), negTarget = f.get("negative_target_size");
  if (negOriginal != negTarget || (f.get("negative_crop") && !negOriginal)) {
    const char* field = negOriginal ? "negative_original_size" : negTarget ? "negative_target_size" : "negative_crop";
    f.fail(field, std::string(field) + ": SDXL's negative micro-conditioning is used only when both "
                                       "negative_original_size and negative_target_size are given",
           "value_error", f.get(field));
  }

  f.unsupported("enable_hr", isFalse, "hires fix (enable_hr)");
  f.unsupported("restore_faces", isFalse, "face restoration");
  f.unsupported("tiling", isFalse, "tiling");
  // webui 1.6's SDXL refiner: null, "" (its default) or "None" (its UI's) means none; else a model of the list.
  if (auto name = f.string("refiner_checkpoint", 1024); name && !name->empty() && *name != "None") {
    if (auto m = models.find(*name)) {
      r.refiner = *m;
    } else {
      std::string accepted;
      for (const auto& m : models.list()) accepted += (accepted.empty() ? "'" : ", '") + shorten(m.title, 60) + "'";
      f.fail("refiner_checkpoint", "refiner_checkpoint: unknown model '" + shorten(*name) + "'; accepted: " +
                                       shorten(accepted, 600), "value_error", f.get("refiner_checkpoint"));
    }
  }
  if (auto v = f.number("refiner_switch_at", 0.0, 1.0)) {
    if (*v <= 0.0 || *v >= 1.0)
      f.fail("refiner_switch_at", "refiner_switch_at: expected a number between 0 and 1, exclusive", "value_error",
             f.get("refiner_switch_at"));
    else r.refinerSwitchAt = *v;
  }
  f.unsupported("subseed_strength", isZero, "variation seeds (subseed_strength)");
  f.unsupported("seed_resize_from_w", isNoResize, "seed resize");
  f.unsupported("seed_resize_from_h", isNoResize, "seed resize");
  f.unsupported("styles", isEmpty, "prompt styles");
  f.unsupported("script_name", isEmpty, "scripts");
  f.unsupported("alwayson_scripts", isEmpty, "always-on scripts");
}

ImageRequest parseTxt2ImgRequest(const json& body, const ModelRegistry& models, const RequestLimits& limits,
                                 int defaultClipSkip) {
  std::vector<FieldError> errors;
  ImageRequest r;
  parseCommonFields(body, errors, r, models, limits, defaultClipSkip, nullptr);
  if (!errors.empty()) throw ValidationFailed(std::move(errors));
  return r;
}

double decimalOf(float v) {
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, v);  // shortest round trip for a float
  return ec == std::errc() ? std::strtod(std::string(text, end).c_str(), nullptr) : double(v);
}

json requestParameters(const ImageRequest& r) {
  json p = {
      {"prompt", r.prompt},
      {"negative_prompt", r.negativePrompt},
      {"seed", r.seed ? json(*r.seed) : json(-1)},
      {"batch_size", r.batchSize},
      {"n_iter", r.nIter},
      {"steps", r.steps},
      {"cfg_scale", decimalOf(r.cfgScale)},
      {"width", r.width},
      {"height", r.height},
      {"sampler_name", sampling::samplerDisplayName(r.sampler, false)},
      {"scheduler", r.karras ? "karras" : r.exponential ? "exponential" : r.sgmUniform ? "sgm_uniform" : "automatic"},
      {"send_images", r.sendImages},
      {"save_images", false},
      {"override_settings", {{"sd_model_checkpoint", r.model.title}, {"CLIP_stop_at_last_layers", r.clipSkip}}},
  };
  auto pair = [&](const char* field, const std::optional<std::pair<int, int>>& v) {
    if (v) p[field] = {v->first, v->second};
  };
  pair("original_size", r.micro.originalSize);
  pair("crop", r.micro.cropTopLeft);
  pair("target_size", r.micro.targetSize);
  pair("negative_original_size", r.micro.negativeOriginalSize);
  pair("negative_crop", r.micro.negativeCropTopLeft);
  pair("negative_target_size", r.micro.negativeTargetSize);
  p["refiner_checkpoint"] = r.refiner ? json(r.refiner->title) : json(nullptr);
  p["refiner_switch_at"] = r.refiner ? json(r.refinerSwitchAt) : json(nullptr);
  if (r.img2img) addImg2ImgParameters(*r.img2img, p);
  return p;
}

}  // namespace sdgen::serve
