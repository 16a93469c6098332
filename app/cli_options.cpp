#include "app/cli_options.h"

#include <cctype>
#include <charconv>
#include <cmath>
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
  bool strengthGiven = false, previewEveryGiven = false;
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
       try {
         s.options.loras.push_back(lora::parseLoraArgument(v, f));
       } catch (const Error& e) {
         throw UsageError(e.what());
       }
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
    {nullptr, "--no-autotune", false, kGenerate | kProfileConv,
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
           a != "direct" && a != "coop-winograd")
         throw UsageError(f + ": unknown conv algorithm " + quoted(v) +
                          "; accepted: all, auto, general (or gemm), gemm-v2 (or gemm_v2), winograd, coop, direct, "
                          "coop-winograd");
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
  return o;
}

CliOptions parseCommandLine(int argc, const char* const* argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return parseCommandLine(args);
}

std::string usageText() {
  using L = CliLimits;
  std::string s;
  s += "usage: sdgen -p PROMPT [options]       generate images\n";
  s += "       sdgen --show-params FILE.png    print the generation parameters stored in a PNG\n";
  s += "       sdgen --list-devices | --demo [--device N] | --version | --help\n";
  s += "       sdgen --profile-conv [-m M] [-W W -H H] [--precision P] [--json FILE]\n";
  s += "       sdgen --bench-conv2d [--precision P] [--algo A] [--shape N,Cin,Cout,H,W,K,S] [--quick]\n";
  s += "                            [--reps N] [--warmup N] [--reference cudnn] [--json FILE]\n";
  s += "       sdgen serve [--host H] [--port N] [-m M] [--devices 0,1] ...   HTTP API server (sdgen serve --help)\n";
  s += "\n";
  s += "generation:\n";
  s += "  -p, --prompt TEXT           what the image shows\n";
  s += "  -n, --negative-prompt TEXT  what it should not show\n";
  s += "      --prompt-syntax S       webui (default): (word) x1.1, (word:1.3), [word] /1.1, \\( \\) escapes, BREAK,\n";
  s += "                              any length in chunks of 75 tokens; plain: the text as written, cut off after\n";
  s += "                              77 tokens (docs/prompts.md)\n";
  s += "  -m, --model PATH            a diffusers folder or a .safetensors checkpoint (default: the built-in\n";
  s += "                              model models/builtin/sdgen-tiny)\n";
  s += "      --tokenizer DIR         tokenizer folder for single-file checkpoints (default: the shipped CLIP one)\n";
  s += "      --steps N               denoising steps, " + std::to_string(L::kMinSteps) + ".." +
       std::to_string(L::kMaxSteps) + " (default 20)\n";
  s += "      --cfg-scale F           classifier-free guidance scale, " + formatFloat(L::kMinCfgScale) + ".." +
       formatFloat(L::kMaxCfgScale) + " (default 7.5)\n";
  s += "  -s, --seed N                0..2^64-1; omitted or -1: random, and printed\n";
  s += "  -W, --width N               multiple of 8 (default: the model's)\n";
  s += "  -H, --height N              multiple of 8 (default: the model's)\n";
  s += "      --sampler NAME          " + std::string(sampling::samplerFlagNames()) + " (default euler_a)\n";
  s += "      --karras                Karras noise schedule (sigmas); the same as --schedule karras\n";
  s += "      --schedule NAME         automatic, karras, exponential (euler, heun, dpm2, dpm2_a, lms,\n"
       "                              dpmpp_sde) or sgm_uniform (trailing timesteps)\n";
  s += "      --clip-skip N           1 = last CLIP layer (default), 2 = penultimate, ...\n";
  s += "      --original-size W,H     SDXL micro-conditioning: the size the image is said to come from\n";
  s += "      --crop X,Y              SDXL: its crop's top-left corner (default 0,0)\n";
  s += "      --target-size W,H       SDXL: the target size (default for both sizes: the output size)\n";
  s += "      --negative-original-size W,H, --negative-crop X,Y, --negative-target-size W,H\n"
       "                              SDXL: the unconditional half's (both sizes needed; default: the above)\n";
  s += "  -i, --init-img FILE         image to image: start from this PNG/JPEG (8-bit RGB or grey, no alpha); the\n";
  s += "                              output has its size (-W/-H, if given, must match; docs/img2img.md)\n";
  s += "      --strength F            0..1, how much of the schedule runs from the init image (default 0.75)\n";
  s += "      --mask FILE             inpainting: white (luma >= 128) = repaint, black = keep; the init image's size\n";
  s += "      --lora FILE[:SCALE]     merge a LoRA (kohya or PEFT .safetensors) at SCALE (default 1); repeatable\n";
  s += "      --lora-dir DIR          where the prompt's <lora:NAME:SCALE> tags find NAME.safetensors (docs/lora.md)\n";
  s += "      --vae-tiling            decode (and encode) in overlapping tiles, as diffusers' enable_tiling()\n";
  s += "      --no-vae-tiling         never tile (default: tile when the full-size decode would not fit;\n";
  s += "                              docs/vae-tiling.md)\n";
  s += "      --taesd PATH            TAESD weights: a diffusers AutoencoderTiny folder or file, or madebyollin's\n";
  s += "                              taesd_decoder.safetensors (+ taesd_encoder beside it; docs/taesd.md)\n";
  s += "      --vae full|taesd        the final decode (and image-to-image encode): the model's VAE (default) or TAESD\n";
  s += "      --preview approx|taesd  write a preview PNG (FILE.stepNNN.png) every --preview-every N steps (default\n";
  s += "                              1): the latent-to-RGB projection at latent size, or TAESD's decode\n";
  s += "      --batch-count N         images one after another; seeds seed, seed+1, ... (default 1)\n";
  s += "      --precision P           auto, fp32, fp16 (default auto: fp16 on GPUs that support it)\n";
  s += "  -o, --output FILE.png       default sdgen-<seed>.png; with --batch-count > 1: FILE-1.png, FILE-2.png, ...\n";
  s += "      --no-autotune           convolutions by the fixed rule, no timing (default on GPUs: each conv problem\n";
  s += "                              timed once, cached in SDGEN_CACHE_DIR/conv-tune-v1.json; docs/dispatch-conv.md)\n";
  s += "      --retune                time every conv problem again and rewrite its cache entries\n";
  s += "\n";
  s += "other:\n";
  s += "      --device N              Vulkan device N (default: SDGEN_DEVICE, else the best GPU, else lavapipe)\n";
  s += "      --list-devices          list Vulkan devices and their capabilities\n";
  s += "      --demo                  engine self-check (kernel compile + GPU run checked against the CPU)\n";
  s += "      --show-params FILE.png  print the text chunks (generation parameters) of a PNG\n";
  s += "  -v, --verbose               more output\n";
  s += "\n";
  s += "developer modes (docs/cli.md):\n";
  s += "      --profile-conv          one UNet step (batch 2), one VAE decode and one text encoding with a GPU\n";
  s += "                              timestamp per launch:\n";
  s += "                              every conv layer's algorithm, tile and kernel times; totals by op type\n";
  s += "      --bench-conv2d          the SD1.5 conv layers (or --shape) per precision and algorithm, checked\n";
  s += "                              against the general kernel\n";
  s += "      --algo A                all (default), auto, general (gemm), gemm-v2 (gemm_v2), winograd, coop,\n";
  s += "                              direct, coop-winograd\n";
  s += "      --shape N,Cin,Cout,H,W,K,S  one conv problem (padding K/2) instead of the table\n";
  s += "      --quick                 the three quick rows (or --shape), 1 warm-up, 3 timed repetitions\n";
  s += "      --reps N, --warmup N    timed repetitions (default 20) and warm-up runs (default 3)\n";
  s += "      --reference cudnn       also time cuDNN's fastest algorithm (needs the CUDA plugin and device)\n";
  s += "      --json FILE             write the report as JSON too\n";
  s += "      --version               print the version\n";
  s += "  -h, --help                  this help\n";
  s += "\n";
  s += "Values go after a space or '=' (--steps 30, --steps=30). Exit codes: 0 ok, 1 error, 2 usage error.\n";
  return s;
}

}  // namespace sdgen::app
