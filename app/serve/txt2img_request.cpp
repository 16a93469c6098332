#include "app/serve/txt2img_request.h"

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "app/cli_options.h"

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

// Reads the fields of one JSON object, collecting an error per bad field instead of stopping at the first.
class FieldReader {
 public:
  FieldReader(const json& obj, std::vector<json> loc, std::vector<FieldError>& errors)
      : obj_(obj), loc_(std::move(loc)), errors_(errors) {}

  // The field's value, or nullptr when missing or null (webui's Optional fields: null means the default).
  const json* get(const char* field) const {
    auto it = obj_.find(field);
    return it == obj_.end() || it->is_null() ? nullptr : &*it;
  }

  void fail(const char* field, const std::string& msg, const char* type, const json* value, json ctx = nullptr) {
    auto loc = loc_;
    loc.push_back(field);
    errors_.push_back(FieldError{std::move(loc), msg, type, value ? shortenedInput(*value) : json(nullptr), ctx});
  }

  // An integer in [lo, hi]; integral floats such as 20.0 count (JSON writers differ), strings do not.
  std::optional<int64_t> integer(const char* field, int64_t lo, int64_t hi) {
    const json* v = get(field);
    if (!v) return std::nullopt;
    int64_t x = 0;
    if (v->is_number_unsigned()) {
      const uint64_t u = v->get<uint64_t>();
      x = u > uint64_t(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max() : int64_t(u);
    } else if (v->is_number_integer()) {
      x = v->get<int64_t>();
    } else if (v->is_number_float() && std::isfinite(v->get<double>()) && v->get<double>() == std::floor(v->get<double>()) &&
               std::abs(v->get<double>()) < 9e18) {
      x = static_cast<int64_t>(v->get<double>());
    } else {
      fail(field, std::string(field) + ": expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi),
           "int_type", v);
      return std::nullopt;
    }
    if (x < lo || x > hi) {
      fail(field, std::string(field) + ": " + std::to_string(x) + " is out of range; expected an integer from " +
                      std::to_string(lo) + " to " + std::to_string(hi),
           x < lo ? "greater_than_equal" : "less_than_equal", v, {{"ge", lo}, {"le", hi}});
      return std::nullopt;
    }
    return x;
  }

  std::optional<double> number(const char* field, double lo, double hi) {
    const json* v = get(field);
    if (!v) return std::nullopt;
    auto range = [&] { return json(lo).dump() + " to " + json(hi).dump(); };
    if (!v->is_number() || !std::isfinite(v->get<double>())) {
      fail(field, std::string(field) + ": expected a number from " + range(), "float_type", v);
      return std::nullopt;
    }
    const double x = v->get<double>();
    if (x < lo || x > hi) {
      fail(field, std::string(field) + ": " + v->dump() + " is out of range; expected a number from " + range(),
           x < lo ? "greater_than_equal" : "less_than_equal", v, {{"ge", lo}, {"le", hi}});
      return std::nullopt;
    }
    return x;
  }

  std::optional<std::string> string(const char* field, size_t maxBytes) {
    const json* v = get(field);
    if (!v) return std::nullopt;
    if (!v->is_string()) {
      fail(field, std::string(field) + ": expected a string", "string_type", v);
      return std::nullopt;
    }
    const auto& s = v->get_ref<const std::string&>();
    if (s.size() > maxBytes) {
      fail(field, std::string(field) + ": " + std::to_string(s.size()) + " bytes is too long; at most " +
                      std::to_string(maxBytes),
           "string_too_long", v, {{"max_length", maxBytes}});
      return std::nullopt;
    }
    return s;
  }

  std::optional<bool> boolean(const char* field) {
    const json* v = get(field);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) {
      fail(field, std::string(field) + ": expected true or false", "bool_type", v);
      return std::nullopt;
    }
    return v->get<bool>();
  }

  // A field sdgen does not implement: accepted while it holds the value that means "off".
  void unsupported(const char* field, const std::function<bool(const json&)>& isOff, const std::string& what) {
    const json* v = get(field);
    if (v && !isOff(*v)) fail(field, std::string(field) + ": " + what + " is not supported by sdgen", "value_error", v);
  }

 private:
  const json& obj_;
  std::vector<json> loc_;
  std::vector<FieldError>& errors_;
};

bool isFalse(const json& v) { return v.is_boolean() && !v.get<bool>(); }
bool isZero(const json& v) { return v.is_number() && v.get<double>() == 0; }
bool isEmpty(const json& v) { return (v.is_array() || v.is_object() || v.is_string()) && v.empty(); }
bool isNoResize(const json& v) { return v.is_number() && (v.get<double>() == 0 || v.get<double>() == -1); }

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

Txt2ImgRequest parseTxt2ImgRequest(const json& body, const ModelRegistry& models, const RequestLimits& limits,
                                   int defaultClipSkip) {
  std::vector<FieldError> errors;
  if (!body.is_object()) {
    throw ValidationFailed({FieldError{{"body"}, "the body must be a JSON object", "model_attributes_type",
                                       shortenedInput(body), nullptr}});
  }
  FieldReader f(body, {"body"}, errors);
  Txt2ImgRequest r;

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
  r.width = d.width.value_or(512);
  r.height = d.height.value_or(512);
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
    if (*v % L::kSizeMultiple) {
      f.fail(field, std::string(field) + ": " + std::to_string(*v) + " is not a multiple of " +
                        std::to_string(L::kSizeMultiple), "multiple_of", f.get(field), {{"multiple_of", L::kSizeMultiple}});
      sizeOk = false;
      continue;
    }
    *target = int(*v);
  }
  if (sizeOk && int64_t(r.width) * r.height > limits.maxPixels) {
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

  f.unsupported("enable_hr", isFalse, "hires fix (enable_hr)");
  f.unsupported("restore_faces", isFalse, "face restoration");
  f.unsupported("tiling", isFalse, "tiling");
  f.unsupported("subseed_strength", isZero, "variation seeds (subseed_strength)");
  f.unsupported("seed_resize_from_w", isNoResize, "seed resize");
  f.unsupported("seed_resize_from_h", isNoResize, "seed resize");
  f.unsupported("styles", isEmpty, "prompt styles");
  f.unsupported("script_name", isEmpty, "scripts");
  f.unsupported("alwayson_scripts", isEmpty, "always-on scripts");

  if (!errors.empty()) throw ValidationFailed(std::move(errors));
  return r;
}

json txt2imgParameters(const Txt2ImgRequest& r) {
  return {
      {"prompt", r.prompt},
      {"negative_prompt", r.negativePrompt},
      {"seed", r.seed ? json(*r.seed) : json(-1)},
      {"batch_size", r.batchSize},
      {"n_iter", r.nIter},
      {"steps", r.steps},
      {"cfg_scale", r.cfgScale},
      {"width", r.width},
      {"height", r.height},
      {"sampler_name", sampling::samplerDisplayName(r.sampler, false)},
      {"scheduler", r.karras ? "karras" : r.exponential ? "exponential" : r.sgmUniform ? "sgm_uniform" : "automatic"},
      {"send_images", r.sendImages},
      {"save_images", false},
      {"override_settings", {{"sd_model_checkpoint", r.model.title}, {"CLIP_stop_at_last_layers", r.clipSkip}}},
  };
}

}  // namespace sdgen::serve
