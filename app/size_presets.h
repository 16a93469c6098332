#pragma once
// Image sizes people pick from (the GUI's size menu): SD 1.x's 512-pixel ones, SD 2.x's 768², and SDXL's
// training buckets around one megapixel (1024², 1152x896, ..., 1536x640), each labeled with its family.
#include <span>
#include <string>

namespace sdgen::app {

struct SizePreset {
  int width = 0, height = 0;
  const char* family = "";  // "SD 1.x", "SD 2.x", "SDXL"
};

std::span<const SizePreset> sizePresets();
// "1216 x 832 (SDXL)".
std::string sizePresetLabel(const SizePreset& preset);
// The preset of exactly this size, or nullptr (the GUI's menu then shows the size as typed).
const SizePreset* findSizePreset(int width, int height);

}  // namespace sdgen::app
