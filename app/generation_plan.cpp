#include "app/generation_plan.h"

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>

#include "engine/error.h"
#include "models/json_bounds.h"
#include "models/resources.h"

namespace sdgen::app {

namespace {
constexpr const char* kBuiltinModel = "models/builtin/sdgen-tiny";
}  // namespace

std::vector<PlannedImage> planImages(const std::string& output, uint64_t seed, int count) {
  const std::string base = output.empty() ? "sdgen-" + std::to_string(seed) + ".png" : output;
  std::vector<PlannedImage> plan;
  for (int i = 0; i < count; ++i) {
    PlannedImage image;
    image.seed = seed + static_cast<uint64_t>(i);
    if (count == 1) {
      image.path = base;
    } else {
      // The parser guarantees a ".png" ending (any case) for a given name; the default has it too.
      const size_t dot = base.size() - 4;
      image.path = base.substr(0, dot) + "-" + std::to_string(i + 1) + base.substr(dot);
    }
    plan.push_back(std::move(image));
  }
  return plan;
}

std::string previewPath(const std::string& imagePath, int step, int steps) {
  const size_t digits = std::max<size_t>(3, std::to_string(steps).size());
  std::string n = std::to_string(step);
  n.insert(0, digits > n.size() ? digits - n.size() : 0, '0');
  // planImages' paths end in ".png" (any case)
  const size_t dot = imagePath.size() >= 4 ? imagePath.size() - 4 : imagePath.size();
  return imagePath.substr(0, dot) + ".step" + n + imagePath.substr(dot);
}

uint64_t chooseSeed(const std::optional<uint64_t>& given) {
  if (given) return *given;
  std::random_device rd;
  return rd();  // 32 bits of entropy
}

std::string resolveModelPath(const std::string& modelPath) {
  std::error_code ec;
  if (modelPath.empty()) {
    const std::string builtin = models::resourcePath(kBuiltinModel);
    if (!std::filesystem::exists(builtin, ec))
      throw Error("no -m/--model given and the built-in model is not installed at '" + builtin +
                  "' (set SDGEN_DATA_DIR to the folder that holds " + kBuiltinModel + ", or pass -m/--model PATH)");
    return builtin;
  }
  if (!std::filesystem::exists(modelPath, ec)) throw Error("model '" + modelPath + "' does not exist");
  return modelPath;
}

ModelDefaults readModelDefaults(const std::string& modelPath) {
  namespace fs = std::filesystem;
  ModelDefaults d;
  std::error_code ec;
  if (!fs::is_directory(modelPath, ec)) return d;
  const std::string file = (fs::path(modelPath) / "sdgen.json").string();
  if (!fs::exists(file, ec)) return d;
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error("cannot read '" + file + "'");
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  nlohmann::json root;
  try {
    root = models::parseJsonBounded(text, "'" + file + "'");
  } catch (const nlohmann::json::exception&) {
    root = nlohmann::json::value_t::discarded;
  }
  if (root.is_discarded() || !root.is_object()) throw Error("'" + file + "' is not a JSON object");
  if (!root.contains("defaults")) return d;
  const nlohmann::json& j = root["defaults"];
  if (!j.is_object()) throw Error("'" + file + "': field 'defaults' must be an object");
  auto fail = [&](const std::string& field, const std::string& what) -> void {
    throw Error("'" + file + "': field 'defaults." + field + "' " + what + ", got " + j[field].dump());
  };
  using L = CliLimits;
  auto integer = [&](const char* field, int lo, int hi) -> std::optional<int> {
    if (!j.contains(field) || j[field].is_null()) return std::nullopt;
    if (!j[field].is_number_integer() || j[field].get<int64_t>() < lo || j[field].get<int64_t>() > hi)
      fail(field, "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    return j[field].get<int>();
  };
  d.width = integer("width", L::kMinSize, L::kMaxSize);
  d.height = integer("height", L::kMinSize, L::kMaxSize);
  for (auto [field, v] : {std::pair{"width", d.width}, std::pair{"height", d.height}})
    if (v && *v % L::kSizeMultiple) fail(field, "must be a multiple of " + std::to_string(L::kSizeMultiple));
  d.steps = integer("steps", L::kMinSteps, L::kMaxSteps);
  if (j.contains("cfg_scale") && !j["cfg_scale"].is_null()) {
    if (!j["cfg_scale"].is_number() || j["cfg_scale"].get<double>() < L::kMinCfgScale ||
        j["cfg_scale"].get<double>() > L::kMaxCfgScale)
      fail("cfg_scale", "must be a number from 0 to 100");
    d.cfgScale = j["cfg_scale"].get<float>();
  }
  if (j.contains("sampler") && !j["sampler"].is_null()) {
    auto kind = j["sampler"].is_string() ? sampling::parseSamplerKind(j["sampler"].get<std::string>()) : std::nullopt;
    if (!kind) fail("sampler", std::string("must be one of ") + sampling::samplerFlagNames());
    d.sampler = kind;
  }
  if (j.contains("karras") && !j["karras"].is_null()) {
    if (!j["karras"].is_boolean()) fail("karras", "must be true or false");
    d.karras = j["karras"].get<bool>();
  }
  if (j.contains("negative_prompt") && !j["negative_prompt"].is_null()) {
    if (!j["negative_prompt"].is_string()) fail("negative_prompt", "must be a string");
    d.negativePrompt = j["negative_prompt"].get<std::string>();
  }
  return d;
}

CliOptions applyModelDefaults(CliOptions o, const ModelDefaults& d) {
  // With an init image the output has its size: the model's default size does not apply.
  if (!o.given.width && d.width && o.initImagePath.empty()) o.width = *d.width;
  if (!o.given.height && d.height && o.initImagePath.empty()) o.height = *d.height;
  if (!o.given.steps && d.steps) o.steps = *d.steps;
  if (!o.given.cfgScale && d.cfgScale) o.cfgScale = *d.cfgScale;
  if (!o.given.sampler && d.sampler) o.sampler = *d.sampler;
  if (!o.given.karras && d.karras) o.karras = *d.karras;
  if (!o.given.negativePrompt && d.negativePrompt) o.negativePrompt = *d.negativePrompt;
  return o;
}

DType resolvePrecision(PrecisionChoice choice, const DeviceInfo& device) {
  switch (choice) {
    case PrecisionChoice::F32: return DType::F32;
    case PrecisionChoice::F16: return DType::F16;
    case PrecisionChoice::Auto:
      return device.type != "cpu" && device.shaderFloat16 && device.storage16Bit ? DType::F16 : DType::F32;
  }
  return DType::F32;
}

}  // namespace sdgen::app
