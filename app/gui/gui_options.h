#pragma once
// sdgen-gui's command line: initial values of the form, and the scripted mode used by tests and for the
// documentation's screenshot (--auto-generate ... --screenshot FILE --exit-after).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/pipeline/micro_conditioning.h"
#include "models/sampling/sampler_kind.h"

namespace sdgen::gui {

struct GuiOptions {
  // Initial form values (unset: the form's defaults).
  std::string prompt, negativePrompt, modelPath;
  std::optional<uint64_t> seed;
  std::optional<int> steps, width, height, batchCount;
  std::optional<float> cfgScale;
  // Image to image: the init image, its strength, an inpainting mask (as sdgen's -i, --strength, --mask).
  std::string initImagePath, maskPath;
  std::optional<float> strength;
  // LoRAs (docs/lora.md): --lora FILE[:SCALE] (repeatable, as written) and --lora-dir for <lora:NAME> tags.
  std::vector<std::string> loras;
  std::string loraDir;
  // --taesd PATH (docs/taesd.md): the live preview decodes with TAESD instead of the latent-to-RGB projection.
  std::string taesdPath;
  // SDXL's micro-conditioning (as sdgen's --original-size W,H, --crop X,Y, --target-size W,H).
  pipeline::SdxlMicroConditioning micro;
  // An SDXL refiner for the last steps (as sdgen's --refiner PATH --refiner-start F).
  std::string refinerPath;
  std::optional<double> refinerStart;
  std::vector<std::string> refinerLoras;  // --refiner-lora FILE[:SCALE], repeatable: the refiner's own LoRAs
  std::optional<sampling::SamplerKind> sampler;
  std::optional<uint32_t> device;
  int windowWidth = 1280, windowHeight = 800;

  // Scripted mode.
  bool autoGenerate = false;   // press Generate once the window is up
  std::string screenshotPath;  // after the generation: the window as a PNG
  std::string saveImagePath;   // after the generation: the last result as a PNG with its parameters
  std::string previewScreenshotPath;  // during the generation: the window once the live preview shows step N
  int previewScreenshotStep = 1;
  bool exitAfter = false;      // close after the screenshot; exit code 1 if the generation failed
  double timeoutSeconds = 0;   // scripted mode: give up (exit code 1) after this long; 0 = never

  bool help = false, version = false;
};

// args: argv[1..]. Throws app::UsageError naming the flag.
GuiOptions parseGuiCommandLine(const std::vector<std::string>& args);
std::string guiUsageText();

}  // namespace sdgen::gui
