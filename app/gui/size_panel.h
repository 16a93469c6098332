#pragma once
// The GUI's image size: the model's default or a width and height, typed or picked from the size presets
// (app/size_presets.h: SD 1.x, SD 2.x and SDXL's buckets), and SDXL's micro-conditioning (original size, crop,
// target size; models without added conditioning ignore it, and the window says so).
#include "app/micro_conditioning_fields.h"

namespace sdgen::gui {

struct SizePanel {
  bool modelSize = true;  // the model's default size (sdgen.json, else 512² / 768² / 1024² by family)
  int width = 512, height = 512;
  app::MicroConditioningFields micro;

  // The widgets inside the controls column (an ImGui item width is pushed by the caller).
  void draw();
};

}  // namespace sdgen::gui
