// libFuzzer target: the JSON configs of a model. The first byte picks the parser (model_index.json, the text
// encoder, UNet, VAE and scheduler configs, sdgen.json); the rest is the file's text. Parsed configs also go
// through the checks openModel runs (validate*, schedulerConfigFor every sampler class).
#include <cstdint>
#include <string>

#include "app/generation_plan.h"
#include "engine/error.h"
#include "fuzz/fuzz_support.h"
#include "models/config/config_files.h"

namespace {
const sdgen::fuzz::ScratchDir& scratch() {
  static const sdgen::fuzz::ScratchDir dir;
  return dir;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sdgen;
  using namespace sdgen::models;
  if (size == 0) return 0;
  const std::string text(fuzz::asText(data + 1, size - 1));
  try {
    switch (data[0] % 6) {
      case 0: (void)parseModelIndex(text, "model_index.json"); break;
      case 1: validateClipTextConfig(parseClipTextConfig(text, "text_encoder/config.json")); break;
      case 2: validateUNetConfig(parseUNetConfig(text, "unet/config.json")); break;
      case 3: validateVaeConfig(parseVaeConfig(text, "vae/config.json")); break;
      case 4: {
        const SchedulerFile file = parseSchedulerFile(text, "scheduler/scheduler_config.json");
        for (const char* cls : {"DDIMScheduler", "EulerDiscreteScheduler", "EulerAncestralDiscreteScheduler",
                                "DPMSolverMultistepScheduler"}) {
          try {
            validateSchedulerConfig(schedulerConfigFor(file, cls));
          } catch (const Error&) {
          }
        }
        break;
      }
      case 5:
        scratch().write("sdgen.json", text);
        (void)app::readModelDefaults(scratch().path());
        break;
    }
  } catch (const Error&) {
  }
  return 0;
}
