#include "app/gui/gui_options.h"

#include <charconv>
#include <cmath>

#include "app/cli_options.h"
#include "engine/error.h"
#include "models/lora/lora_library.h"

namespace sdgen::gui {

namespace {

using app::CliLimits;
using app::UsageError;

template <class T>
T parseNumber(const std::string& flag, const std::string& v, T lo, T hi) {
  T out{};
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || out < lo || out > hi ||
      (std::is_floating_point_v<T> && !std::isfinite(double(out))))
    throw UsageError(flag + ": expected a number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                     ", got '" + v + "'");
  return out;
}

// --lora / --refiner-lora FILE[:SCALE], kept as typed (the form's text): a usage error naming the flag.
void checkLoraFlag(const std::string& flag, const std::string& value) {
  try {
    lora::parseLoraArgument(value, flag);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

int parseSize(const std::string& flag, const std::string& v) {
  int n = parseNumber<int>(flag, v, CliLimits::kMinSize, CliLimits::kMaxSize);
  if (n % CliLimits::kSizeMultiple) throw UsageError(flag + ": '" + v + "' is not a multiple of 8");
  return n;
}

}  // namespace

GuiOptions parseGuiCommandLine(const std::vector<std::string>& args) {
  GuiOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i], value;
    bool inlineValue = false;
    if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      inlineValue = true;
    }
    auto next = [&]() -> std::string {
      if (inlineValue) return value;
      if (i + 1 >= args.size()) throw UsageError(flag + " needs a value");
      return args[++i];
    };
    auto noValue = [&] {
      if (inlineValue) throw UsageError(flag + " takes no value");
    };
    if (flag == "-p" || flag == "--prompt") o.prompt = next();
    else if (flag == "-n" || flag == "--negative-prompt") o.negativePrompt = next();
    else if (flag == "-m" || flag == "--model") o.modelPath = next();
    else if (flag == "-s" || flag == "--seed") o.seed = parseNumber<uint64_t>(flag, next(), 0, UINT64_MAX);
    else if (flag == "--steps") o.steps = parseNumber<int>(flag, next(), CliLimits::kMinSteps, CliLimits::kMaxSteps);
    else if (flag == "--cfg-scale")
      o.cfgScale = parseNumber<float>(flag, next(), CliLimits::kMinCfgScale, CliLimits::kMaxCfgScale);
    else if (flag == "-W" || flag == "--width") o.width = parseSize(flag, next());
    else if (flag == "-H" || flag == "--height") o.height = parseSize(flag, next());
    else if (flag == "-i" || flag == "--init-img") o.initImagePath = next();
    else if (flag == "--mask") o.maskPath = next();
    else if (flag == "--strength") o.strength = parseNumber<float>(flag, next(), 0.f, 1.f);
    else if (flag == "--original-size") o.micro.originalSize = app::parseIntPairFlag(flag, next(), 1, "W,H");
    else if (flag == "--crop") o.micro.cropTopLeft = app::parseIntPairFlag(flag, next(), 0, "X,Y");
    else if (flag == "--target-size") o.micro.targetSize = app::parseIntPairFlag(flag, next(), 1, "W,H");
    else if (flag == "--negative-original-size")
      o.micro.negativeOriginalSize = app::parseIntPairFlag(flag, next(), 1, "W,H");
    else if (flag == "--negative-crop") o.micro.negativeCropTopLeft = app::parseIntPairFlag(flag, next(), 0, "X,Y");
    else if (flag == "--negative-target-size")
      o.micro.negativeTargetSize = app::parseIntPairFlag(flag, next(), 1, "W,H");
    else if (flag == "--refiner") {
      o.refinerPath = next();
      if (o.refinerPath.empty()) throw UsageError(flag + ": expected an SDXL refiner (a diffusers folder or .safetensors file)");
    } else if (flag == "--refiner-start") {
      std::string v = next();
      o.refinerStart = parseNumber<double>(flag, v, 0, 1);
      if (*o.refinerStart <= 0 || *o.refinerStart >= 1)
        throw UsageError(flag + ": '" + v + "' is out of range; expected a number between 0 and 1, exclusive");
    } else if (flag == "--refiner-lora") {
      o.refinerLoras.push_back(next());
      checkLoraFlag(flag, o.refinerLoras.back());
    } else if (flag == "--lora") {
      o.loras.push_back(next());
      checkLoraFlag(flag, o.loras.back());
    } else if (flag == "--lora-dir") o.loraDir = next();
    else if (flag == "--taesd") o.taesdPath = next();
    else if (flag == "--batch-count")
      o.batchCount = parseNumber<int>(flag, next(), CliLimits::kMinBatchCount, 100);
    else if (flag == "--sampler") {
      std::string v = next();
      o.sampler = sampling::parseSamplerKind(v);
      if (!o.sampler)
        throw UsageError(flag + ": unknown sampler '" + v + "'; accepted: " + sampling::samplerFlagNames());
    } else if (flag == "--device") o.device = parseNumber<uint32_t>(flag, next(), 0, 1024);
    else if (flag == "--window-size") {
      std::string v = next();
      auto x = v.find('x');
      if (x == std::string::npos) throw UsageError(flag + ": expected WIDTHxHEIGHT, got '" + v + "'");
      o.windowWidth = parseNumber<int>(flag, v.substr(0, x), 320, 8192);
      o.windowHeight = parseNumber<int>(flag, v.substr(x + 1), 240, 8192);
    } else if (flag == "--auto-generate") { noValue(); o.autoGenerate = true; }
    else if (flag == "--screenshot") o.screenshotPath = next();
    else if (flag == "--save-image") o.saveImagePath = next();
    else if (flag == "--preview-screenshot") {
      std::string v = next();
      auto colon = v.find(':');
      if (colon == std::string::npos) throw UsageError(flag + ": expected STEP:FILE, got '" + v + "'");
      o.previewScreenshotStep = parseNumber<int>(flag, v.substr(0, colon), 1, CliLimits::kMaxSteps);
      o.previewScreenshotPath = v.substr(colon + 1);
    }
    else if (flag == "--exit-after") { noValue(); o.exitAfter = true; }
    else if (flag == "--timeout") o.timeoutSeconds = parseNumber<double>(flag, next(), 0, 86400);
    else if (flag == "-h" || flag == "--help") { o.help = true; return o; }
    else if (flag == "--version") { o.version = true; return o; }
    else throw UsageError("unknown option '" + flag + "' (see sdgen-gui --help)");
  }
  if (!o.maskPath.empty() && o.initImagePath.empty()) throw UsageError("--mask needs -i/--init-img");
  // As the command line: diffusers uses the negative sizes only together and ignores either alone.
  const pipeline::SdxlMicroConditioning& m = o.micro;
  if (m.negativeOriginalSize.has_value() != m.negativeTargetSize.has_value() ||
      (m.negativeCropTopLeft && !m.negativeOriginalSize))
    throw UsageError("--negative-original-size, --negative-target-size (and --negative-crop): SDXL's negative "
                     "micro-conditioning is used only when both negative sizes are given");
  if (o.refinerStart && o.refinerPath.empty()) throw UsageError("--refiner-start needs --refiner PATH");
  if (!o.refinerLoras.empty() && o.refinerPath.empty()) throw UsageError("--refiner-lora needs --refiner PATH");
  if (o.exitAfter && !o.autoGenerate) throw UsageError("--exit-after needs --auto-generate");
  if ((!o.screenshotPath.empty() || !o.saveImagePath.empty() || !o.previewScreenshotPath.empty()) && !o.autoGenerate)
    throw UsageError("--screenshot, --preview-screenshot and --save-image need --auto-generate");
  return o;
}

std::string guiUsageText() {
  return "usage: sdgen-gui [options]\n"
         "A window for sdgen: prompt, model and settings on the left, the image, its live preview and this\n"
         "session's gallery on the right. Ctrl+Enter generates, Esc cancels.\n\n"
         "Initial values of the form:\n"
         "  -p, --prompt TEXT  -n, --negative-prompt TEXT  -m, --model PATH (default: the built-in model)\n"
         "  -s, --seed N  --steps N  --cfg-scale X  -W, --width N  -H, --height N  --sampler NAME\n"
         "  --batch-count N  --device N  --window-size WxH (default 1280x800)\n"
         "  -i, --init-img FILE  --strength X  --mask FILE   image to image / inpainting (docs/img2img.md)\n"
         "  --lora FILE[:SCALE] (repeatable)  --lora-dir DIR (for <lora:NAME:SCALE> in the prompt; docs/lora.md)\n"
         "  --refiner PATH  --refiner-start F   an SDXL refiner for the last steps (docs/sdxl.md \"Refiner\")\n"
         "  --refiner-lora FILE[:SCALE] (repeatable)  the refiner's own LoRAs (docs/lora.md)\n"
         "  --taesd PATH                TAESD weights for the live preview (docs/taesd.md)\n"
         "  --original-size W,H  --crop X,Y  --target-size W,H   SDXL micro-conditioning (docs/sdxl.md)\n"
         "  --negative-original-size W,H  --negative-crop X,Y  --negative-target-size W,H\n"
         "                       its unconditional half (both sizes, or neither)\n\n"
         "Scripted mode (tests, screenshots):\n"
         "  --auto-generate       generate once the window is up\n"
         "  --screenshot FILE     then write the window's contents as a PNG (and print the image's rectangle)\n"
         "  --save-image FILE     then write the last image as a PNG with its parameters (as sdgen does)\n"
         "  --preview-screenshot STEP:FILE  also write the window once the live preview shows step STEP\n"
         "  --exit-after          then exit: code 0 on success, 1 if generation failed or Vulkan validation\n"
         "                        (SDGEN_VALIDATION=1) reported anything\n"
         "  --timeout SECONDS     give up with code 1 after this long\n";
}

}  // namespace sdgen::gui
