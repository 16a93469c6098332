#include "app/size_presets.h"

#include <array>

namespace sdgen::app {

namespace {
// SDXL's buckets: the aspect ratios it was trained on at about 1024² pixels (multiples of 64), as the SDXL
// report and webui/ComfyUI list them; SD 1.x at 512 and SD 2.x (768-v) at 768.
constexpr std::array<SizePreset, 13> kPresets{{
    {512, 512, "SD 1.x"},   {512, 768, "SD 1.x"},   {768, 512, "SD 1.x"},   {768, 768, "SD 2.x"},
    {1024, 1024, "SDXL"},   {1152, 896, "SDXL"},    {896, 1152, "SDXL"},    {1216, 832, "SDXL"},
    {832, 1216, "SDXL"},    {1344, 768, "SDXL"},    {768, 1344, "SDXL"},    {1536, 640, "SDXL"},
    {640, 1536, "SDXL"},
}};
}  // namespace

std::span<const SizePreset> sizePresets() { return kPresets; }

std::string sizePresetLabel(const SizePreset& p) {
  return std::to_string(p.width) + " x " + std::to_string(p.height) + " (" + p.family + ")";
}

const SizePreset* findSizePreset(int width, int height) {
  for (const SizePreset& p : kPresets)
    if (p.width == width && p.height == height) return &p;
  return nullptr;
}

}  // namespace sdgen::app
