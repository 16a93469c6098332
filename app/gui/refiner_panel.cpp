#include "app/gui/refiner_panel.h"

#include <algorithm>
#include <cmath>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app/generation_plan.h"

namespace sdgen::gui {

void RefinerPanel::draw() {
  if (!path.empty()) ImGui::SetNextItemOpen(true, ImGuiCond_Once);
  if (!ImGui::CollapsingHeader("SDXL refiner")) return;
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##refiner", "refiner model (folder or .safetensors; empty: none)", &path);
  const double lo = 0.01, hi = 0.99;
  ImGui::SliderScalar("Switch at", ImGuiDataType_Double, &start, &lo, &hi, "%.2f");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("the share of the schedule the base model runs before the refiner takes over");
  ImGui::TextUnformatted("Refiner LoRAs: FILE[:SCALE] per line (its UNet and text encoder; not the base's)");
  ImGui::InputTextMultiline("##refinerloras", &loras, ImVec2(-1, ImGui::GetTextLineHeight() * 2.5f));
}

void RefinerPanel::apply(app::GenerationJob& job) const {
  if (path.empty()) return;
  job.refinerPath = app::resolveModelPath(path);
  job.refinerStart = std::clamp(std::round(start * 100.0) / 100.0, 0.01, 0.99);
  job.refinerLabel = "the refiner '" + path + "'";
  job.refinerLoras = lora::parseLoraLines(loras, "refiner LoRA");
}

}  // namespace sdgen::gui
