#include "app/cli_options.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <span>
#include <string_view>

#include "engine/error.h"
#include "models/lora/lora_library.h"
#include "models/prompt/lora_tags.h"
#include "models/prompt/prompt_attention.h"

namespace sdgen::app {

namespace {

// Modes a flag is meaningful in, as bits, so "a generation flag given with --demo" is one table look-up.
enum ModeBit : unsigned {
  kGenerate = 1u << 0,
  kDemo = 1u << 1,
  kListDevices = 1u << 2,
  kShowParams = 1u << 3,
  kProfileConv = 1u << 4,
  kBenchConv2d = 1u << 5,
  kAnyMode = kGenerate | kDemo | kListDevices | kShowParams | kProfileConv | kBenchConv2d,
};

unsigned modeBit(Mode m) {
  switch (m) {
    case Mode::Generate: return kGenerate;
    case Mode::Demo: return kDemo;
    case Mode::ListDevices: return kListDevices;
    case Mode::ShowParams: return kShowParams;
    case Mode::ProfileConv: return kProfileConv;
    case Mode::BenchConv2d: return kBenchConv2d;
    default: return kAnyMode;
  }
}

const char* modeDescription(Mode m) {
  switch (m) {
    case Mode::Generate: return "image generation";
    case Mode::Demo: return "--demo";
    case Mode::ListDevices: return "--list-devices";
    case Mode::ShowParams: return "--show-params";
    case Mode::ProfileConv: return "--profile-conv";
    case Mode::BenchConv2d: return "--bench-conv2d";
    default: return "?";
  }
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

template <class Int>
Int parseInteger(const std::string& flag, const std::string& value, Int lo, Int hi, const std::string& accepted) {
  Int v{};
  const char* first = value.data();
  const char* last = first + value.size();
  auto [end, ec] = std::from_chars(first, last, v);
  if (value.empty() || ec == std::errc::invalid_argument || end != last)
    throw UsageError(flag + ": expected " + accepted + ", got " + quoted(value));
  if (ec == std::errc::result_out_of_range || v < lo || v > hi)
    throw UsageError(flag + ": " + quoted(value) + " is out of range; expected " + accepted);
  return v;
}

float parseFloat(const std::string& flag, const std::string& value, float lo, float hi, const std::string& accepted) {
  float v = 0;
  const char* first = value.data();
  const char* last = first + value.size();
  auto [end, ec] = std::from_chars(first, last, v);
  if (value.empty() || ec == std::errc::invalid_argument || end != last || !std::isfinite(v))
    throw UsageError(flag + ": expected " + accepted + ", got " + quoted(value));
  if (ec == std::errc::result_out_of_range || v < lo || v > hi)
    throw UsageError(flag + ": " + quoted(value) + " is out of range; expected " + accepted);
  return v;
}

// --lora / --refiner-lora FILE[:SCALE]: a usage error naming the flag.
lora::LoraSpec parseLoraFlag(const std::string& flag, const std::string& value) {
  try {
    return lora::parseLoraArgument(value, flag);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

std::string rangeText(long long lo, long long hi) {
  return "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
}

std::string formatFloat(float v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

// "N,Cin,Cout,H,W,K,S": seven positive integers (with padding K/2 every kernel fits the padded input).
ConvShapeArg parseConvShape(const std::string& flag, const std::string& value) {
  const std::string accepted = "N,Cin,Cout,H,W,K,S (seven positive integers, e.g. 2,320,320,64,64,3,1)";
  std::vector<int> v;
  size_t start = 0;
  while (true) {
    size_t comma = value.find(',', start);
    std::string part = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int x = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), x);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || x < 1 || x > CliLimits::kMaxConvDim)
      throw UsageError(flag + ": expected " + accepted + ", got " + quoted(value));
    v.push_back(x);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (v.size() != 7) throw UsageError(flag + ": expected " + accepted + ", got " + quoted(value));
  return ConvShapeArg{v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
}

int parseImageSize(const std::string& flag, const std::string& value) {
  using L = CliLimits;
  const std::string accepted = "a multiple of " + std::to_string(L::kSizeMultiple) + " from " +
                               std::to_string(L::kMinSize) + " to " + std::to_string(L::kMaxSize) +
                               " (or 0 for the model's default)";
  int v = parseInteger<int>(flag, value, 0, L::kMaxSize, accepted);
  if (v != 0 && (v < L::kMinSize || v % L::kSizeMultiple != 0))
    throw UsageError(flag + ": " + quoted(value) + " is not " + accepted);
  return v;
}

// "A,B" with two integers from `min` to CliLimits::kMaxSize (SDXL's --original-size W,H, --crop X,Y, ...).
std::pair<int, int> parseIntPair(const std::string& flag, const std::string& value, int min, const std::string& what) {
  const std::string accepted = what + ": two integers from " + std::to_string(min) + " to " +
                               std::to_string(CliLimits::kMaxSize) + " separated by a comma";
  const size_t comma = value.find(',');
  if (comma == std::string::npos) throw UsageError(flag + ": expected " + accepted + ", got " + quoted(value));
  return {parseInteger<int>(flag, value.substr(0, comma), min, CliLimits::kMaxSize, accepted),
          parseInteger<int>(flag, value.substr(comma + 1), min, CliLimits::kMaxSize, accepted)};
}

struct ParseState;

// One command-line flag: its spellings, whether it takes a value, the modes it applies to, and what it sets.
struct Flag {
  const char* shortName;  // "-p", or nullptr
  const char* longName;   // "--prompt"
  bool takesValue;
  unsigned modes;
  void (*apply)(ParseState& state, const std::string& flag, const std::string& value);
};

struct ParseState {
  CliOptions options;
  std::string modeFlag;  // the flag that chose a mode other than Generate
  bool done = false;     // --help / --version seen
  bool strengthGiven = false, previewEveryGiven = false, refinerStartGiven = false;
  struct Seen {
    std::string flag;
    unsigned modes;
  };
  std::vector<Seen> seen;

  void setMode(Mode m, const std::string& flag) {
    if (!modeFlag.empty() && modeFlag != flag)
      throw UsageError(modeFlag + " and " + flag + " cannot be combined: give one of --demo, --list-devices, " +
                       "--show-params FILE, --profile-conv, --bench-conv2d, or a prompt to generate an image");
    options.mode = m;
    modeFlag = flag;
  }
};

// --vae-tiling and --no-vae-tiling contradict each other; either may be repeated.
void setVaeTiling(ParseState& s, const std::string& flag, pipeline::VaeTilingMode mode) {
  if (s.options.vaeTiling != pipeline::VaeTilingMode::Auto && s.options.vaeTiling != mode)
    throw UsageError("--vae-tiling and --no-vae-tiling cannot be combined: give one (" + flag + " was the second)");
  s.options.vaeTiling = mode;
}

constexpr Flag kFlags[] = {
    {"-p", "--prompt", true, kGenerate,
     [](ParseState& s, const std::string&, const std::string& v) {
       s.options.prompt = v;
       s.options.promptGiven = true;
     }},
    {"-n", "--negative-prompt", true, kGenerate,
     [](ParseState& s, const std::string&, const std::string& v) {
       s.options.negativePrompt = v;
       s.options.given.negativePrompt = true;
     }},
    {"-m", "--model", true, kGenerate | kProfileConv,
     [](ParseState& s, const std::string& f, const std::string& v) {
       if (v.empty()) throw UsageError(f + ": expected a model path (a diffusers folder or a .safetensors file)");
       s.options.modelPath = v;
     }},
    {nullptr, "--tokenizer", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       if (v.empty()) throw UsageError(f + ": expected a tokenizer folder");
       s.options.tokenizerPath = v;
     }},
    {nullptr, "--steps", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.steps = parseInteger<int>(f, v, CliLimits::kMinSteps, CliLimits::kMaxSteps,
                                           rangeText(CliLimits::kMinSteps, CliLimits::kMaxSteps));
       s.options.given.steps = true;
     }},
    {nullptr, "--cfg-scale", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.cfgScale = parseFloat(f, v, CliLimits::kMinCfgScale, CliLimits::kMaxCfgScale,
                                       "a number from " + formatFloat(CliLimits::kMinCfgScale) + " to " +
                                           formatFloat(CliLimits::kMaxCfgScale));
       s.options.given.cfgScale = true;
     }},
    {"-s", "--seed", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       if (v == "-1") {  // webui's and stable-diffusion.cpp's spelling of "random"
         s.options.seed.reset();
         return;
       }
       s.options.seed = parseInteger<uint64_t>(
           f, v, 0, std::numeric_limits<uint64_t>::max(),
           "an integer from 0 to " + std::to_string(std::numeric_limits<uint64_t>::max()) + " (or -1 for random)");
     }},
    {"-W", "--width", true, kGenerate | kProfileConv,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.width = parseImageSize(f, v);
       s.options.given.width = s.options.width != 0;
     }},
    {"-H", "--height", true, kGenerate | kProfileConv,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.height = parseImageSize(f, v);
       s.options.given.height = s.options.height != 0;
     }},
    {nullptr, "--sampler", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       auto kind = sampling::parseSamplerKind(v);
       if (!kind)
         throw UsageError(f + ": unknown sampler " + quoted(v) + "; accepted: " + sampling::samplerFlagNames());
       s.options.sampler = *kind;
       s.options.given.sampler = true;
     }},
    {nullptr, "--karras", false, kGenerate,
     [](ParseState& s, const std::string&, const std::string&) {
       s.options.karras = true;
       s.options.given.karras = true;
     }},
    {nullptr, "--schedule", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       // webui's schedule types that the diffusers schedulers have.
       s.options.karras = v == "karras";
       s.options.exponential = v == "exponential";
       s.options.sgmUniform = v == "sgm_uniform";
       if (v != "automatic" && v != "karras" && v != "exponential" && v != "sgm_uniform")
         throw UsageError(f + ": unknown schedule " + quoted(v) +
                          "; accepted: automatic, karras, exponential, sgm_uniform");
       s.options.given.karras = true;
     }},
    {nullptr, "--vae-tiling", false, kGenerate,
     [](ParseState& s, const std::string& f, const std::string&) { setVaeTiling(s, f, pipeline::VaeTilingMode::On); }},
    {nullptr, "--no-vae-tiling", false, kGenerate,
     [](ParseState& s, const std::string& f, const std::string&) { setVaeTiling(s, f, pipeline::VaeTilingMode::Off); }},
    {nullptr, "--taesd", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       if (v.empty()) throw UsageError(f + ": expected a TAESD folder or .safetensors file (docs/taesd.md)");
       s.options.taesdPath = v;
     }},
    {nullptr, "--vae", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       if (v == "full") s.options.vae = pipeline::ImageDecoder::Vae;
       else if (v == "taesd") s.options.vae = pipeline::ImageDecoder::Taesd;
       else throw UsageError(f + ": unknown decoder " + quoted(v) + "; accepted: full (the model's VAE), taesd");
     }},
    {nullptr, "--preview", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       if (v == "approx") s.options.preview = pipeline::PreviewDecoder::Approx;
       else if (v == "taesd") s.options.preview = pipeline::PreviewDecoder::Taesd;
       else throw UsageError(f + ": unknown preview " + quoted(v) + "; accepted: approx, taesd");
     }},
    {nullptr, "--preview-every", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.previewEvery = parseInteger<int>(f, v, 1, CliLimits::kMaxSteps, rangeText(1, CliLimits::kMaxSteps));
       s.previewEveryGiven = true;
     }},
    {nullptr, "--original-size", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.micro.originalSize = parseIntPair(f, v, 1, "W,H");
     }},
    {nullptr, "--crop", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.micro.cropTopLeft = parseIntPair(f, v, 0, "X,Y");
     }},
    {nullptr, "--target-size", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.micro.targetSize = parseIntPair(f, v, 1, "W,H");
     }},
    {nullptr, "--negative-original-size", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.micro.negativeOriginalSize = parseIntPair(f, v, 1, "W,H");
     }},
    {nullptr, "--negative-crop", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.micro.negativeCropTopLeft = parseIntPair(f, v, 0, "X,Y");
     }},
    {nullptr, "--negative-target-size", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.micro.negativeTargetSize = parseIntPair(f, v, 1, "W,H");
     }},
    {nullptr, "--refiner", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       if (v.empty()) throw UsageError(f + ": expected an SDXL refiner (a diffusers folder or .safetensors file)");
       s.options.refinerPath = v;
     }},
    {nullptr, "--refiner-lora", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.refinerLoras.push_back(parseLoraFlag(f, v));
     }},
    {nullptr, "--refiner-start", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       const char* accepted = "a number between 0 and 1, exclusive (the share of the schedule the base model runs "
                              "before the refiner takes over; default 0.8)";
       const float checked = parseFloat(f, v, 0.0f, 1.0f, accepted);
       s.options.refinerStart = std::strtod(v.c_str(), nullptr);  // the decimal as Python reads it (a double)
       if (checked <= 0.0f || checked >= 1.0f || s.options.refinerStart <= 0.0 || s.options.refinerStart >= 1.0)
         throw UsageError(f + ": " + quoted(v) + " is out of range; expected " + accepted);
       s.refinerStartGiven = true;
     }},
    {nullptr, "--aesthetic-score", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.micro.aestheticScore = parseFloat(f, v, 0.0f, 10.0f, "a number from 0 to 10 (default 6)");
     }},
    {nullptr, "--negative-aesthetic-score", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.micro.negativeAestheticScore = parseFloat(f, v, 0.0f, 10.0f, "a number from 0 to 10 (default 2.5)");
     }},
    {nullptr, "--clip-skip", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.clipSkip =
           parseInteger<int>(f, v, CliLimits::kMinClipSkip, CliLimits::kMaxClipSkip,
                             rangeText(CliLimits::kMinClipSkip, CliLimits::kMaxClipSkip) +
                                 " (1 = the last CLIP layer, 2 = the penultimate)");
     }},
    {nullptr, "--prompt-syntax", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       auto syntax = prompt::parsePromptSyntax(v);
       if (!syntax)
         throw UsageError(f + ": unknown prompt syntax " + quoted(v) + "; accepted: " + prompt::kPromptSyntaxNames);
       s.options.promptSyntax = *syntax;
     }},
    {"-i", "--init-img", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       if (v.empty()) throw UsageError(f + ": expected an image file (PNG or JPEG)");
       s.options.initImagePath = v;
     }},
    {nullptr, "--strength", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.strength = parseFloat(f, v, CliLimits::kMinStrength, CliLimits::kMaxStrength,
                                       "a number from 0 to 1 (the share of the denoising schedule run from the "
                                       "init image; default 0.75)");
       s.strengthGiven = true;
     }},
    {nullptr, "--mask", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       if (v.empty()) throw UsageError(f + ": expected a mask image file (PNG or JPEG; white = repaint)");
       s.options.maskPath = v;
     }},
    {nullptr, "--lora", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.loras.push_back(parseLoraFlag(f, v));
     }},
    {nullptr, "--lora-dir", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       if (v.empty()) throw UsageError(f + ": expected the folder <lora:NAME> prompt tags are looked up in");
       s.options.loraDir = v;
     }},
    {nullptr, "--batch-count", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.batchCount = parseInteger<int>(f, v, CliLimits::kMinBatchCount, CliLimits::kMaxBatchCount,
                                                rangeText(CliLimits::kMinBatchCount, CliLimits::kMaxBatchCount));
     }},
    {nullptr, "--precision", true, kGenerate | kProfileConv | kBenchConv2d,
     [](ParseState& s, const std::string& f, const std::string& v) {
       if (v == "auto") s.options.precision = PrecisionChoice::Auto;
       else if (v == "fp32") s.options.precision = PrecisionChoice::F32;
       else if (v == "fp16") s.options.precision = PrecisionChoice::F16;
       else throw UsageError(f + ": unknown precision " + quoted(v) + "; accepted: auto, fp32, fp16");
     }},
    {nullptr, "--device", true, kGenerate | kDemo | kProfileConv | kBenchConv2d,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.device = parseInteger<uint32_t>(f, v, 0, std::numeric_limits<uint32_t>::max(),
                                                 "a device index as listed by --list-devices (0, 1, ...)");
     }},
    {"-o", "--output", true, kGenerate,
     [](ParseState& s, const std::string& f, const std::string& v) {
       auto lower = v;
       for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
       if (lower.size() < 5 || !lower.ends_with(".png") || lower.ends_with("/.png"))
         throw UsageError(f + ": expected a file name ending in .png, got " + quoted(v));
       s.options.outputPath = v;
     }},
    {nullptr, "--no-autotune", false, kGenerate | kProfileConv | kBenchConv2d,
     [](ParseState& s, const std::string& f, const std::string&) {
       if (s.options.retune) throw UsageError(f + ": --retune and --no-autotune exclude each other");
       s.options.noAutotune = true;
     }},
    {nullptr, "--retune", false, kGenerate | kProfileConv,
     [](ParseState& s, const std::string& f, const std::string&) {
       if (s.options.noAutotune) throw UsageError(f + ": --retune and --no-autotune exclude each other");
       s.options.retune = true;
     }},
    {"-v", "--verbose", false, kAnyMode,
     [](ParseState& s, const std::string&, const std::string&) { s.options.verbose = true; }},
    {"-h", "--help", false, kAnyMode,
     [](ParseState& s, const std::string&, const std::string&) {
       s.options.mode = Mode::Help;
       s.done = true;
     }},
    {nullptr, "--version", false, kAnyMode,
     [](ParseState& s, const std::string&, const std::string&) {
       s.options.mode = Mode::Version;
       s.done = true;
     }},
    {nullptr, "--list-devices", false, kListDevices,
     [](ParseState& s, const std::string& f, const std::string&) { s.setMode(Mode::ListDevices, f); }},
    {nullptr, "--demo", false, kDemo,
     [](ParseState& s, const std::string& f, const std::string&) { s.setMode(Mode::Demo, f); }},
    {nullptr, "--show-params", true, kShowParams,
     [](ParseState& s, const std::string& f, const std::string& v) {
       if (v.empty()) throw UsageError(f + ": expected a PNG file");
       s.setMode(Mode::ShowParams, f);
       s.options.showParamsPath = v;
     }},
    {nullptr, "--profile-conv", false, kProfileConv,
     [](ParseState& s, const std::string& f, const std::string&) { s.setMode(Mode::ProfileConv, f); }},
    {nullptr, "--bench-conv2d", false, kBenchConv2d,
     [](ParseState& s, const std::string& f, const std::string&) { s.setMode(Mode::BenchConv2d, f); }},
    {nullptr, "--json", true, kProfileConv | kBenchConv2d,
     [](ParseState& s, const std::string& f, const std::string& v) {
       if (v.empty()) throw UsageError(f + ": expected a file name for the JSON report");
       s.options.jsonPath = v;
     }},
    {nullptr, "--algo", true, kBenchConv2d,
     [](ParseState& s, const std::string& f, const std::string& v) {
       // The spellings (gemm_v2, gemm) and the engine's (gemm-v2, general) are both accepted.
       std::string a = v == "gemm_v2" ? "gemm-v2" : v == "gemm" ? "general" : v;
       if (a != "all" && a != "auto" && a != "general" && a != "gemm-v2" && a != "winograd" && a != "coop" &&
           a != "direct" && a != "coop-winograd" && a != "coop-winograd-rows" && a != "tuned")
         throw UsageError(f + ": unknown conv algorithm " + quoted(v) +
                          "; accepted: all, auto, general (or gemm), gemm-v2 (or gemm_v2), winograd, coop, direct, "
                          "coop-winograd, coop-winograd-rows, tuned");
       s.options.benchAlgo = a;
     }},
    {nullptr, "--shape", true, kBenchConv2d,
     [](ParseState& s, const std::string& f, const std::string& v) { s.options.benchShape = parseConvShape(f, v); }},
    {nullptr, "--quick", false, kBenchConv2d,
     [](ParseState& s, const std::string&, const std::string&) { s.options.quick = true; }},
    {nullptr, "--reps", true, kBenchConv2d,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.reps = parseInteger<int>(f, v, 1, CliLimits::kMaxReps, rangeText(1, CliLimits::kMaxReps));
     }},
    {nullptr, "--warmup", true, kBenchConv2d,
     [](ParseState& s, const std::string& f, const std::string& v) {
       s.options.warmup = parseInteger<int>(f, v, 0, CliLimits::kMaxWarmup, rangeText(0, CliLimits::kMaxWarmup));
     }},
    {nullptr, "--reference", true, kBenchConv2d,
     [](ParseState& s, const std::string& f, const std::string& v) {
       if (v != "cudnn") throw UsageError(f + ": unknown reference " + quoted(v) + "; accepted: cudnn");
       s.options.reference = v;
     }},
};

const Flag* findFlag(std::string_view name) {
  for (const auto& f : kFlags)
    if ((f.shortName && name == f.shortName) || name == f.longName) return &f;
  return nullptr;
}

// "-s/--seed" or "--steps": both spellings, so the message matches whichever the user typed.
std::string displayName(const Flag& f) {
  return f.shortName ? std::string(f.shortName) + "/" + f.longName : std::string(f.longName);
}

// A prompt the chosen syntax refuses (a malformed weight, BREAK inside brackets, too long) is a usage error found
// before any model is loaded; the message names the flag and the character.
void checkPromptSyntax(const CliOptions& o) {
  const std::pair<const std::string*, const char*> prompts[] = {{&o.prompt, "-p/--prompt"},
                                                                 {&o.negativePrompt, "-n/--negative-prompt"}};
  for (auto [text, flag] : prompts) {
    try {
      if (o.promptSyntax == prompt::PromptSyntax::Webui) {
        // The prompt's <lora:...> tags are cut out before the emphasis syntax is read (as webui does).
        std::string rest = *text;
        if (text == &o.prompt) {
          prompt::PromptLoras tags = prompt::extractLoraTags(*text);
          if (!tags.loras.empty() && o.loraDir.empty())
            throw UsageError(std::string(flag) + ": '" + tags.loras.front().text +
                             "' needs --lora-dir DIR, the folder NAME.safetensors is looked up in");
          rest = std::move(tags.prompt);
        }
        prompt::parsePromptAttention(rest, flag);
      } else {
        prompt::checkPromptSize(*text, flag);
      }
    } catch (const prompt::PromptSyntaxError& e) {
      throw UsageError(e.what());
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      throw UsageError(std::string(flag) + ": " + e.what());
    }
  }
}

// --taesd, --vae taesd, --preview taesd and --preview-every need each other (docs/taesd.md).
void checkTaesdFlags(const CliOptions& o, bool previewEveryGiven) {
  const bool decode = o.vae == pipeline::ImageDecoder::Taesd, preview = o.preview == pipeline::PreviewDecoder::Taesd;
  if ((decode || preview) && o.taesdPath.empty())
    throw UsageError(std::string(decode ? "--vae taesd" : "--preview taesd") +
                     " needs --taesd PATH: a TAESD folder or .safetensors file (docs/taesd.md)");
  if (!o.taesdPath.empty() && !decode && !preview)
    throw UsageError("--taesd PATH is used by --vae taesd and --preview taesd: give one of them");
  if (previewEveryGiven && !o.preview)
    throw UsageError("--preview-every needs --preview approx|taesd (which preview to write)");
  if (decode && o.vaeTiling == pipeline::VaeTilingMode::On)
    throw UsageError("--vae-tiling and --vae taesd cannot be combined: TAESD decodes whole images (docs/taesd.md)");
}

}  // namespace

std::pair<int, int> parseIntPairFlag(const std::string& flag, const std::string& value, int min, const std::string& what) {
  return parseIntPair(flag, value, min, what);
}

CliOptions parseCommandLine(const std::vector<std::string>& args) {
  ParseState state;
  for (size_t i = 0; i < args.size() && !state.done; ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') {
      throw UsageError("unexpected argument " + quoted(arg) +
                       "; the prompt is given with -p/--prompt (quote it if it has spaces)");
    }
    // --flag=value splits at the first '='; short flags take their value from the next argument only.
    std::string name = arg;
    std::optional<std::string> inlineValue;
    if (arg.starts_with("--")) {
      if (auto eq = arg.find('='); eq != std::string::npos) {
        name = arg.substr(0, eq);
        inlineValue = arg.substr(eq + 1);
      }
    }
    const Flag* flag = findFlag(name);
    if (!flag) throw UsageError("unknown option " + quoted(name) + " (sdgen --help lists the options)");
    const std::string display = displayName(*flag);

    std::string value;
    if (flag->takesValue) {
      if (inlineValue) {
        value = *inlineValue;
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        throw UsageError(display + " needs a value");
      }
    } else if (inlineValue) {
      throw UsageError(display + " takes no value, got " + quoted(arg));
    }
    flag->apply(state, display, value);
    state.seen.push_back({display, flag->modes});
  }

  CliOptions& o = state.options;
  if (state.done) return o;  // --help / --version

  for (const auto& s : state.seen) {
    if (!(s.modes & modeBit(o.mode))) {
      throw UsageError(s.flag + " does not apply to " + modeDescription(o.mode) +
                       (s.modes == kGenerate                                   ? " (it is an image generation option)"
                        : s.modes == kBenchConv2d                              ? " (it is a --bench-conv2d option)"
                        : s.modes == (kProfileConv | kBenchConv2d)             ? " (it is a --profile-conv / --bench-conv2d option)"
                                                                               : ""));
    }
  }
  if (o.mode == Mode::Generate && !o.promptGiven) {
    throw UsageError(
        "nothing to do: give -p/--prompt TEXT to generate an image (or --demo, --list-devices, --show-params FILE; "
        "sdgen --help lists every option)");
  }
  if (o.mode == Mode::Generate) checkPromptSyntax(o);
  if (o.initImagePath.empty() && !o.maskPath.empty())
    throw UsageError("--mask needs -i/--init-img: the mask says which part of the init image is repainted");
  if (o.initImagePath.empty() && state.strengthGiven)
    throw UsageError("--strength applies to image to image: give -i/--init-img too");
  // diffusers uses the negative sizes only when both are given, and ignores either alone: refuse that instead.
  const pipeline::SdxlMicroConditioning& m = o.micro;
  if (m.negativeOriginalSize.has_value() != m.negativeTargetSize.has_value() ||
      (m.negativeCropTopLeft && !m.negativeOriginalSize))
    throw UsageError(std::string(m.negativeOriginalSize ? "--negative-original-size needs --negative-target-size"
                                 : m.negativeTargetSize ? "--negative-target-size needs --negative-original-size"
                                                        : "--negative-crop needs --negative-original-size and "
                                                          "--negative-target-size") +
                     ": SDXL's negative micro-conditioning is used only when both negative sizes are given");
  checkTaesdFlags(o, state.previewEveryGiven);
  if (state.refinerStartGiven && o.refinerPath.empty())
    throw UsageError("--refiner-start needs --refiner PATH (the SDXL refiner that runs the last steps)");
  if (!o.refinerLoras.empty() && o.refinerPath.empty())
    throw UsageError("--refiner-lora needs --refiner PATH (the SDXL refiner it is merged into; --lora is the base "
                     "model's)");
  if (!o.refinerPath.empty() && (o.vae == pipeline::ImageDecoder::Taesd || o.preview == pipeline::PreviewDecoder::Taesd))
    throw UsageError("--refiner and TAESD (--vae taesd, --preview taesd) cannot be combined");
  return o;
}

CliOptions parseCommandLine(int argc, const char* const* argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return parseCommandLine(args);
}

}  // namespace sdgen::app
