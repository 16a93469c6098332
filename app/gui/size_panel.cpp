#include "app/gui/size_panel.h"

#include <imgui.h>

#include <algorithm>
#include <string>

#include "app/cli_options.h"
#include "app/size_presets.h"

namespace sdgen::gui {

void SizePanel::draw() {
  ImGui::Checkbox("The model's default size", &modelSize);
  if (modelSize) ImGui::BeginDisabled();
  const app::SizePreset* current = app::findSizePreset(width, height);
  const std::string shown = current ? app::sizePresetLabel(*current)
                                    : std::to_string(width) + " x " + std::to_string(height) + " (custom)";
  if (ImGui::BeginCombo("Size", shown.c_str())) {
    for (const app::SizePreset& p : app::sizePresets())
      if (ImGui::Selectable(app::sizePresetLabel(p).c_str(), &p == current)) width = p.width, height = p.height;
    ImGui::EndCombo();
  }
  ImGui::InputInt("Width", &width, 8, 64);
  ImGui::InputInt("Height", &height, 8, 64);
  width = std::clamp(width, app::CliLimits::kMinSize, app::CliLimits::kMaxSize);
  height = std::clamp(height, app::CliLimits::kMinSize, app::CliLimits::kMaxSize);
  if (modelSize) ImGui::EndDisabled();

  // Open at first when flags or a PNG's parameters set any of it, so what will condition the image is visible.
  if (micro.setOriginal || micro.setCrop || micro.setTarget || micro.setNegative)
    ImGui::SetNextItemOpen(true, ImGuiCond_Once);
  if (ImGui::CollapsingHeader("SDXL micro-conditioning")) {
    ImGui::TextWrapped("The sizes SDXL is told the image has (diffusers' original_size, crops_coords_top_left, "
                       "target_size); unset: the output size and (0, 0). Other models ignore them.");
    ImGui::Checkbox("Original size", &micro.setOriginal);
    if (micro.setOriginal) ImGui::InputInt2("W, H##original", micro.originalSize.data());
    ImGui::Checkbox("Crop top-left", &micro.setCrop);
    if (micro.setCrop) ImGui::InputInt2("X, Y##crop", micro.cropTopLeft.data());
    ImGui::Checkbox("Target size", &micro.setTarget);
    if (micro.setTarget) ImGui::InputInt2("W, H##target", micro.targetSize.data());
    // The unconditional half (diffusers' negative_original_size / negative_target_size, used only in pairs).
    ImGui::Checkbox("Negative original and target sizes", &micro.setNegative);
    if (micro.setNegative) {
      ImGui::InputInt2("W, H##negative original", micro.negativeOriginalSize.data());
      ImGui::InputInt2("W, H##negative target", micro.negativeTargetSize.data());
      ImGui::Checkbox("Negative crop top-left", &micro.setNegativeCrop);
      if (micro.setNegativeCrop) ImGui::InputInt2("X, Y##negative crop", micro.negativeCropTopLeft.data());
    }
    micro.clamp(app::CliLimits::kMaxSize);
  }
}

}  // namespace sdgen::gui
