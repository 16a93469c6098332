#pragma once
// The sdgen command line: what each flag means, parsed into one plain struct. Parsing never touches the device or
// the file system, so every usage error is found (and reported with exit code 2) before any work starts.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/sampling/sampler_kind.h"

namespace sdgen::app {

// What one invocation does; exactly one mode per run.
enum class Mode { Generate, Demo, ListDevices, ShowParams, Help, Version };

// --precision: `Auto` picks fp16 on a GPU with fp16 arithmetic and 16-bit storage, fp32 otherwise.
enum class PrecisionChoice { Auto, F32, F16 };

struct CliOptions {
  Mode mode = Mode::Generate;

  // Generation.
  std::string prompt, negativePrompt;
  bool promptGiven = false;
  std::string modelPath;      // empty: the built-in model
  std::string tokenizerPath;  // empty: the model's own, else the shipped CLIP vocabulary
  int steps = 20;
  float cfgScale = 7.5f;
  std::optional<uint64_t> seed;  // unset: random (and printed)
  int width = 0, height = 0;     // 0: the model's default
  sampling::SamplerKind sampler = sampling::SamplerKind::EulerAncestral;
  bool karras = false;
  int clipSkip = 1;  // stable-diffusion-webui's convention: 1 = last CLIP layer, 2 = penultimate, ...
  int batchCount = 1;
  PrecisionChoice precision = PrecisionChoice::Auto;
  std::string outputPath;  // empty: sdgen-<seed>.png

  // Shared.
  std::optional<uint32_t> device;
  bool verbose = false;

  // --show-params FILE
  std::string showParamsPath;
};

// A command-line mistake: the message names the flag and what it accepts. The process exits with code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Limits of the numeric flags (inclusive), shared by the parser, the usage text and the tests.
struct CliLimits {
  static constexpr int kMinSteps = 1, kMaxSteps = 1000;
  static constexpr float kMinCfgScale = 0.0f, kMaxCfgScale = 100.0f;
  static constexpr int kMinSize = 8, kMaxSize = 8192, kSizeMultiple = 8;
  static constexpr int kMinClipSkip = 1, kMaxClipSkip = 24;
  static constexpr int kMinBatchCount = 1, kMaxBatchCount = 10000;
};

// args: argv[1..argc-1]. Throws UsageError. --help and --version end parsing where they appear.
CliOptions parseCommandLine(const std::vector<std::string>& args);
CliOptions parseCommandLine(int argc, const char* const* argv);

// The text printed by --help.
std::string usageText();

}  // namespace sdgen::app
