#pragma once
// What a generation run will do before any device work: the seed of each image, where each PNG goes, and the
// storage precision.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/cli_options.h"
#include "models/sampling/sampler_kind.h"
#include "engine/device_info.h"
#include "engine/dtype.h"

namespace sdgen::app {

struct PlannedImage {
  uint64_t seed = 0;
  std::string path;
};

// Image i (0-based) gets seed + i (wrapping modulo 2^64). The path is `output` (default "sdgen-<seed>.png") for
// a single image; with several, "-<i+1>" goes before the ".png": out.png -> out-1.png, out-2.png, ...
std::vector<PlannedImage> planImages(const std::string& output, uint64_t seed, int count);

// The preview PNG of `imagePath` after `step` of `steps`: out.png -> out.step005.png (the step zero-padded to at
// least three digits, or as many as `steps` has).
std::string previewPath(const std::string& imagePath, int step, int steps);

// The seed to use: the given one, else a fresh random 32-bit one (short enough to type back in).
uint64_t chooseSeed(const std::optional<uint64_t>& given);

// The model to load: `modelPath` when given, else the built-in model (models/builtin/sdgen-tiny under the data
// directory). Throws sdgen::Error naming the path when it does not exist.
std::string resolveModelPath(const std::string& modelPath);

// A model folder's own defaults: the "defaults" object of <model>/sdgen.json (models/builtin/sdgen-tiny has
// one). Every field is optional; unknown fields are ignored.
struct ModelDefaults {
  std::optional<int> width, height, steps;
  std::optional<float> cfgScale;
  std::optional<sampling::SamplerKind> sampler;
  std::optional<bool> karras;
  std::optional<std::string> negativePrompt;
};

// Reads <modelPath>/sdgen.json when modelPath is a folder holding one; none otherwise (single files, diffusers
// folders without it). A value out of the command line's limits (CliLimits), of the wrong type, or an unknown
// sampler is an sdgen::Error naming the file and the field.
ModelDefaults readModelDefaults(const std::string& modelPath);

// Every generation setting not given on the command line (CliOptions::given) takes the model's default; flags
// given explicitly win.
CliOptions applyModelDefaults(CliOptions options, const ModelDefaults& defaults);

// fp32 / fp16 as asked; Auto: fp16 on a GPU (not a CPU device such as lavapipe) with fp16 arithmetic and 16-bit
// storage, else fp32.
DType resolvePrecision(PrecisionChoice choice, const DeviceInfo& device);

}  // namespace sdgen::app
