#pragma once
// The sdgen command line: what each flag means, parsed into one plain struct. Parsing never touches the device or
// the file system, so every usage error is found (and reported with exit code 2) before any work starts.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/lora/lora_library.h"
#include "models/pipeline/decoder_choice.h"
#include "models/pipeline/micro_conditioning.h"
#include "models/pipeline/vae_tile_plan.h"
#include "models/prompt/prompt_syntax.h"
#include "models/sampling/sampler_kind.h"

namespace sdgen::app {

// What one invocation does; exactly one mode per run.
enum class Mode { Generate, Demo, ListDevices, ShowParams, ProfileConv, BenchConv2d, Help, Version };

// --precision: `Auto` picks fp16 on a GPU with fp16 arithmetic and 16-bit storage, fp32 otherwise.
enum class PrecisionChoice { Auto, F32, F16 };

// --shape N,Cin,Cout,H,W,K,S of --bench-conv2d (square kernel K, stride S, padding K/2).
struct ConvShapeArg {
  int n = 1, cin = 1, cout = 1, h = 1, w = 1, k = 3, stride = 1;
};

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
  // --schedule exponential | sgm_uniform (webui's schedule types; --schedule karras is --karras).
  bool exponential = false, sgmUniform = false;
  int clipSkip = 1;  // stable-diffusion-webui's convention: 1 = last CLIP layer, 2 = penultimate, ...
  // --prompt-syntax: webui's emphasis syntax and chunked long prompts (default), or the text as written.
  prompt::PromptSyntax promptSyntax = prompt::PromptSyntax::Webui;
  // Image to image (stable-diffusion.cpp's flags): -i/--init-img FILE, --strength F, --mask FILE (inpainting).
  std::string initImagePath, maskPath;
  float strength = 0.75f;
  // LoRA (docs/lora.md): --lora FILE[:SCALE], repeatable; --lora-dir DIR for the prompt's <lora:NAME:SCALE>.
  std::vector<lora::LoraSpec> loras;
  std::string loraDir;
  int batchCount = 1;
  // --vae-tiling / --no-vae-tiling (docs/vae-tiling.md); neither: tiles when the full-size decode would not fit.
  pipeline::VaeTilingMode vaeTiling = pipeline::VaeTilingMode::Auto;
  // TAESD (docs/taesd.md): --taesd PATH, used by --vae taesd (the final decode and the image-to-image encode) and
  // --preview taesd; --preview approx|taesd --preview-every N writes a preview PNG every N steps.
  std::string taesdPath;
  pipeline::ImageDecoder vae = pipeline::ImageDecoder::Vae;
  std::optional<pipeline::PreviewDecoder> preview;
  int previewEvery = 1;
  PrecisionChoice precision = PrecisionChoice::Auto;
  // SDXL's micro-conditioning (docs/sdxl.md): --original-size W,H, --crop X,Y, --target-size W,H; unset: the
  // output size and (0, 0), as diffusers.
  pipeline::SdxlMicroConditioning micro;
  // The SDXL refiner as a second model for the last steps (docs/sdxl.md "Refiner"): --refiner PATH, --refiner-start
  // F (the share of the schedule the base runs, diffusers' denoising_end / denoising_start; default 0.8);
  // --aesthetic-score F, --negative-aesthetic-score F set micro's scores (the refiner's conditioning).
  std::string refinerPath;
  double refinerStart = 0.8;
  // --refiner-lora FILE[:SCALE], repeatable: LoRAs merged into the refiner (its UNet and its one text encoder,
  // text_encoder_2); --lora and the prompt's tags are the base's.
  std::vector<lora::LoraSpec> refinerLoras;
  std::string outputPath;  // empty: sdgen-<seed>.png
  // Which generation settings were given on the command line; the others come from the model folder's
  // sdgen.json "defaults" when it has them (app/generation_plan.h), else the values above.
  struct Given {
    bool negativePrompt = false, steps = false, cfgScale = false, width = false, height = false, sampler = false,
         karras = false;
  } given;

  // Convolution autotune (generation and --profile-conv; docs/dispatch-conv.md "Autotune"): --no-autotune runs
  // the rule, --retune measures again and rewrites the cache.
  bool noAutotune = false, retune = false;

  // Shared.
  std::optional<uint32_t> device;
  bool verbose = false;

  // --show-params FILE
  std::string showParamsPath;

  // --profile-conv and --bench-conv2d (developer modes; docs/cli.md). -m, -W, -H and --precision also apply to
  // --profile-conv; --precision auto means both fp32 and fp16 for --bench-conv2d.
  std::string jsonPath;           // --json FILE: the report as JSON too
  std::string benchAlgo = "all";  // --algo: all, auto, general (gemm), gemm-v2 (gemm_v2), winograd
  std::optional<ConvShapeArg> benchShape;  // --shape: one problem instead of the SD1.5 table
  bool quick = false;                      // --quick: the three quick rows, 1 warm-up, 3 timed repetitions
  std::optional<int> reps, warmup;         // timed repetitions (default 20) and warm-up runs (default 3)
  std::string reference;                   // --reference cudnn: time cuDNN on the same problems
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
  static constexpr float kMinStrength = 0.0f, kMaxStrength = 1.0f;
  static constexpr int kMinClipSkip = 1, kMaxClipSkip = 24;
  static constexpr int kMinBatchCount = 1, kMaxBatchCount = 10000;
  static constexpr int kMaxReps = 100000, kMaxWarmup = 10000;
  static constexpr int kMaxConvDim = 1 << 16;  // each --shape number
};

// "A,B": two integers from `min` to CliLimits::kMaxSize (SDXL's --original-size W,H, --crop X,Y, --target-size
// W,H); `what` names the pair in the error ("W,H"). Throws UsageError naming `flag`. sdgen-gui parses them too.
std::pair<int, int> parseIntPairFlag(const std::string& flag, const std::string& value, int min, const std::string& what);

// args: argv[1..argc-1]. Throws UsageError. --help and --version end parsing where they appear.
CliOptions parseCommandLine(const std::vector<std::string>& args);
CliOptions parseCommandLine(int argc, const char* const* argv);

// The text printed by --help.
std::string usageText();

}  // namespace sdgen::app
