// model_index.json -> ModelIndex: a Stable Diffusion 1.x/2.x pipeline and its five components, or an SDXL one
// (StableDiffusionXLPipeline: text_encoder_2 and tokenizer_2 too).
#include <algorithm>
#include <string_view>

#include "engine/error.h"
#include "models/config/config_files.h"
#include "models/config/config_json.h"

namespace sdgen::models {

namespace {

using nlohmann::json;

struct Expected {
  const char* component;
  const char* library;
  std::vector<std::string> classes;  // empty: any class whose name ends in "Scheduler"
};

const std::vector<Expected>& expectedComponents() {
  static const std::vector<Expected> kExpected = {
      {"text_encoder", "transformers", {"CLIPTextModel", "CLIPTextModelWithProjection"}},
      {"tokenizer", "transformers", {"CLIPTokenizer", "CLIPTokenizerFast"}},
      {"unet", "diffusers", {"UNet2DConditionModel"}},
      {"vae", "diffusers", {"AutoencoderKL"}},
      {"scheduler", "diffusers", {}},
  };
  return kExpected;
}

ModelIndex fromJson(const ConfigJson& j) {
  ModelIndex index;
  index.source = j.file();
  index.className = j.string("_class_name");
  for (const char* other : {"text_encoder_3", "transformer", "prior"})
    if (j.present(other))
      j.unsupported(other, "pipeline " + index.className +
                               " is not Stable Diffusion 1.x/2.x or SDXL (SD3 and others are not implemented)");
  const bool xlClass = index.className.find("XL") != std::string::npos;
  // The SDXL refiner: only the second (OpenCLIP bigG) text encoder and aesthetic-score conditioning.
  index.requiresAestheticsScore =
      xlClass && j.present("requires_aesthetics_score") && j.boolean("requires_aesthetics_score");
  index.sdxl = j.present("text_encoder_2") || j.present("tokenizer_2");
  if (xlClass && !index.sdxl)
    j.fail("text_encoder_2", "is missing: an SDXL pipeline (" + index.className + ") has text_encoder_2 and tokenizer_2");
  if (index.sdxl) index.forceZerosForEmptyPrompt = !j.present("force_zeros_for_empty_prompt") ||
                                                   j.boolean("force_zeros_for_empty_prompt");

  for (const auto& [name, value] : j.root().items()) {
    if (name.starts_with("_") || value.is_null()) continue;
    // Components are [library, class]; [null, null] marks an absent optional one (e.g. no safety checker).
    if (!value.is_array() || value.size() != 2) continue;
    if (value[0].is_null() && value[1].is_null()) continue;
    if (!value[0].is_string() || !value[1].is_string())
      j.fail(name, "must be [library, class], got " + value.dump());
    index.components[name] = {value[0].get<std::string>(), value[1].get<std::string>()};
  }
  std::vector<Expected> expected = expectedComponents();
  if (index.requiresAestheticsScore) {  // the refiner: text_encoder and tokenizer are [null, null]
    for (const char* absent : {"text_encoder", "tokenizer"})
      if (index.components.contains(absent))
        j.fail(absent, "must be [null, null] in an SDXL refiner (requires_aesthetics_score true): the refiner "
                       "conditions on text_encoder_2 alone");
    std::erase_if(expected, [](const Expected& e) {
      return std::string_view(e.component) == "text_encoder" || std::string_view(e.component) == "tokenizer";
    });
  }
  if (index.sdxl) {
    expected.push_back({"text_encoder_2", "transformers", {"CLIPTextModelWithProjection"}});
    expected.push_back({"tokenizer_2", "transformers", {"CLIPTokenizer", "CLIPTokenizerFast"}});
  }
  for (const Expected& e : expected) {
    auto it = index.components.find(e.component);
    if (it == index.components.end())
      j.fail(e.component, index.requiresAestheticsScore
                              ? "is missing: an SDXL refiner has text_encoder_2, tokenizer_2, unet, vae and scheduler"
                          : index.sdxl ? "is missing: an SDXL pipeline has text_encoder, text_encoder_2, tokenizer, "
                                       "tokenizer_2, unet, vae and scheduler"
                                     : "is missing: a Stable Diffusion pipeline has text_encoder, tokenizer, unet, "
                                       "vae and scheduler");
    const auto& [library, cls] = it->second;
    bool ok = e.classes.empty() ? cls.ends_with("Scheduler")
                                : std::find(e.classes.begin(), e.classes.end(), cls) != e.classes.end();
    if (!ok || library != e.library)
      j.unsupported(e.component, std::string("expected ") + e.library + " " +
                                     (e.classes.empty() ? std::string("scheduler") : e.classes.front()));
  }
  return index;
}

}  // namespace

ModelIndex loadModelIndex(const std::string& path) { return fromJson(ConfigJson::load(path)); }
ModelIndex parseModelIndex(const std::string& json, const std::string& file) {
  return fromJson(ConfigJson::parse(json, file));
}

}  // namespace sdgen::models
