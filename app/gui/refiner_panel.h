#pragma once
// The form's SDXL refiner (docs/gui.md): a refiner model for the last steps and where it takes over, as sdgen's
// --refiner PATH --refiner-start F (docs/sdxl.md "Refiner"). The generation worker keeps it loaded beside the base.
#include <string>

#include "app/generation_worker.h"

namespace sdgen::gui {

struct RefinerPanel {
  std::string path;    // empty: no refiner
  double start = 0.8;  // the share of the schedule the base model runs (diffusers' denoising_end)
  std::string loras;   // the refiner's own LoRAs, FILE[:SCALE] per line (as sdgen's --refiner-lora)

  // A collapsing header "SDXL refiner" (open when a refiner is set): the model path, the switch and its LoRAs.
  void draw();
  // The job's refiner fields when a path is set: the path resolved as a model path (throws naming it), the switch
  // rounded to the slider's two decimals (the parameters text then reads as typed: 0.8, not 0.800000011920929),
  // the LoRA lines parsed (throws naming a line without a file).
  void apply(app::GenerationJob& job) const;
};

}  // namespace sdgen::gui
