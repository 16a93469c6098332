#include "app/generate.h"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "app/atomic_file.h"
#include "app/conv_tune_report.h"
#include "app/generation_params.h"
#include "app/generation_plan.h"
#include "app/image_decode.h"
#include "app/memory_report.h"
#include "app/png_writer.h"
#include "app/load_progress.h"
#include "app/progress.h"
#include "app/refiner_pass.h"
#include "engine/context.h"
#include "engine/error.h"
#include "models/pipeline/text_to_image.h"

namespace sdgen::app {

int runGenerate(const CliOptions& options, std::FILE* out, std::FILE* err) {
  // Everything that can be checked without the device is checked first: a missing model or an unwritable
  // output directory should not cost a model load and a denoising loop.
  pipeline::LoadOptions load;
  load.modelPath = resolveModelPath(options.modelPath);
  load.tokenizerPath = options.tokenizerPath;
  load.loras = options.loras;
  load.loraDir = options.loraDir;
  load.autotune = autotuneSettings(options);
  load.taesdPath = options.taesdPath;
  if (std::error_code ec; !options.taesdPath.empty() && !std::filesystem::exists(options.taesdPath, ec))
    throw Error("--taesd '" + options.taesdPath + "': no such file or folder");
  for (const lora::LoraSpec& l : options.loras)
    if (std::error_code ec; !std::filesystem::is_regular_file(l.path, ec))
      throw Error("--lora '" + l.path + "': no such file");
  if (!options.refinerPath.empty()) checkRefinerPath(options.refinerPath);
  const uint64_t seed = chooseSeed(options.seed);
  const auto plan = planImages(options.outputPath, seed, options.batchCount);
  for (const auto& image : plan) checkOutputDirectory(image.path);
  // The input images are read and checked before the device is touched: a bad file costs nothing.
  std::optional<pipeline::RgbImage> initImage, mask;
  if (!options.initImagePath.empty()) initImage = readImageFile(options.initImagePath);
  if (!options.maskPath.empty()) {
    mask = readImageFile(options.maskPath);
    if (mask->width != initImage->width || mask->height != initImage->height)
      throw Error("the mask '" + options.maskPath + "' is " + std::to_string(mask->width) + "x" +
                  std::to_string(mask->height) + " but the init image '" + options.initImagePath + "' is " +
                  std::to_string(initImage->width) + "x" + std::to_string(initImage->height) +
                  "; they must be the same size");
  }
  if (initImage && ((options.width && options.width != initImage->width) ||
                    (options.height && options.height != initImage->height)))
    throw Error("the init image '" + options.initImagePath + "' is " + std::to_string(initImage->width) + "x" +
                std::to_string(initImage->height) + " but -W/-H ask for " +
                std::to_string(options.width ? options.width : initImage->width) + "x" +
                std::to_string(options.height ? options.height : initImage->height) +
                "; sdgen does not resize: give an init image of the output size, or leave -W/-H out");

  // The seed goes out before any long work, so an interrupted run can still be reproduced.
  std::fprintf(out, "seed: %llu\n", static_cast<unsigned long long>(seed));
  std::fflush(out);

  ContextOptions contextOptions;
  contextOptions.deviceIndex = options.device;
  Context ctx(contextOptions);
  load.precision = resolvePrecision(options.precision, ctx.info());
  if (options.verbose) {
    std::fprintf(err, "device: %s (%s, Vulkan %s)\nmodel: %s\nprecision: %s\n", ctx.info().name.c_str(),
                 ctx.info().driverName.c_str(), ctx.info().apiVersionString().c_str(), load.modelPath.c_str(),
                 dtypeName(load.precision));
  }

  LoadProgressPrinter loadProgress(err, ProgressReporter::stderrIsTerminal());  // loads over a second
  load.progress = loadProgress.callback();
  pipeline::TextToImage textToImage(ctx, load);
  std::unique_ptr<RefinerPass> refiner;
  if (!options.refinerPath.empty())
    refiner = std::make_unique<RefinerPass>(ctx, load, options.refinerPath, options.refinerStart, textToImage,
                                            options.refinerLoras);
  // The size conditioning alone, without the aesthetic scores.
  pipeline::SdxlMicroConditioning sizes = options.micro;
  sizes.aestheticScore = pipeline::SdxlMicroConditioning{}.aestheticScore;
  sizes.negativeAestheticScore = pipeline::SdxlMicroConditioning{}.negativeAestheticScore;
  if (sizes != pipeline::SdxlMicroConditioning{} && !textToImage.isSdxlModel())
    std::fputs("warning: --original-size, --crop and --target-size condition SDXL models only; this model ignores them\n",
               err);
  if (sizes != options.micro && !refiner && !textToImage.isSdxlRefiner())
    std::fputs("warning: --aesthetic-score and --negative-aesthetic-score condition the SDXL refiner only (--refiner, "
               "or a refiner as -m); this model ignores them\n",
               err);
  ProgressReporter progress(err, ProgressReporter::stderrIsTerminal());
  TimingTotals totals;

  for (size_t i = 0; i < plan.size(); ++i) {
    pipeline::GenerationRequest request;
    request.floatPixels = false;  // the PNG needs only the bytes
    request.prompt = options.prompt;
    request.negativePrompt = options.negativePrompt;
    request.steps = options.steps;
    request.cfgScale = options.cfgScale;
    request.seed = plan[i].seed;
    request.width = options.width;
    request.height = options.height;
    request.sampler = options.sampler;
    request.karras = options.karras;
    request.exponential = options.exponential;
    request.sgmUniform = options.sgmUniform;
    request.vaeTiling = options.vaeTiling;
    request.clipSkip = options.clipSkip - 1;  // webui's 1 = last layer; the pipeline counts layers skipped
    request.promptSyntax = options.promptSyntax;
    request.initImage = initImage;
    request.mask = mask;
    request.strength = options.strength;
    request.decoder = options.vae;
    if (options.preview) request.preview = *options.preview;
    request.micro = options.micro;

    progress.begin(plan.size() > 1 ? "image " + std::to_string(i + 1) + "/" + std::to_string(plan.size()) : "");
    pipeline::GenerationHooks hooks;
    hooks.progress = [&](int step, int steps) { progress.step(step, steps); };
    if (options.preview) {  // every N steps a complete PNG (written atomically), named after the image
      hooks.preview = [&, path = plan[i].path](const pipeline::LatentPreview& p) {
        if (p.step % options.previewEvery != 0) return;
        writePngFile(previewPath(path, p.step, p.steps), p.width, p.height, p.rgb,
                     {PngText{"Comment", "sdgen preview (" + std::string(pipeline::previewDecoderName(request.preview)) +
                                             "), step " + std::to_string(p.step) + " of " + std::to_string(p.steps)}});
      };
    }
    pipeline::Image image = textToImage.generate(refiner ? refiner->baseRequest(request) : request, hooks);
    totals.add(textToImage.timings());
    if (refiner) {  // the last steps, and the decode
      image = refiner->refine(request, image, hooks);
      totals.add(refiner->pipeline().timings());
    }
    progress.end();
    for (const std::string& warning : image.warnings) std::fprintf(err, "warning: %s\n", warning.c_str());
    if (options.verbose && image.vaeTiled) std::fputs("VAE decoded in tiles (docs/vae-tiling.md)\n", err);

    GenerationParams params;
    params.prompt = options.prompt;
    params.negativePrompt = options.negativePrompt;
    params.steps = options.steps;
    params.sampler = options.sampler;
    params.karras = options.karras;
    params.exponential = options.exponential;
    params.sgmUniform = options.sgmUniform;
    params.cfgScale = options.cfgScale;
    params.seed = plan[i].seed;
    params.width = image.width;
    params.height = image.height;
    params.modelName = textToImage.modelName();
    params.clipSkip = options.clipSkip;
    params.promptSyntax = options.promptSyntax;
    if (textToImage.isSdxlModel()) params.micro = options.micro;
    if (refiner) {
      params.refinerName = refiner->modelName();
      params.refinerSwitchAt = refiner->start();
    }
    params.aestheticScores = refiner || textToImage.isSdxlRefiner();
    if (initImage) params.denoisingStrength = options.strength;
    params.version = std::string("sdgen ") + SDGEN_VERSION;
    const auto encodeStart = std::chrono::steady_clock::now();
    const std::vector<uint8_t> png =
        encodePng(image.width, image.height, image.rgb, {PngText{kParametersKeyword, formatGenerationParams(params)}});
    const auto writeStart = std::chrono::steady_clock::now();
    writeFileAtomically(plan[i].path, png);
    totals.pngEncodeMs += std::chrono::duration<double, std::milli>(writeStart - encodeStart).count();
    totals.fileWriteMs += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - writeStart).count();
    std::fprintf(out, "wrote %s (seed %llu)\n", plan[i].path.c_str(), static_cast<unsigned long long>(plan[i].seed));
    std::fflush(out);
  }
  std::fputs(formatTimingSummary(totals).c_str(), err);
  printConvTuneWarnings(textToImage.convTuner(), err);
  if (options.verbose) std::fputs(formatConvTuneSummary(textToImage.convTuner()).c_str(), err);
  if (options.verbose) std::fputs(formatMemoryReport(textToImage.memoryReport()).c_str(), err);
  return 0;
}

}  // namespace sdgen::app
