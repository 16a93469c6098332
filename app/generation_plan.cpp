#include "app/generation_plan.h"

#include <filesystem>
#include <random>

#include "engine/error.h"
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
