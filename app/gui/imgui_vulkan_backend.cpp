// Compiles Dear ImGui's Vulkan backend from the libimgui-dev package (the path comes from CMake) in this
// translation unit, so the accessors below can read its backend data. No backend code is copied here.
#include SDGEN_IMGUI_VULKAN_BACKEND_SOURCE

#include "app/gui/imgui_vulkan_backend.h"

namespace sdgen::gui {

VkDescriptorSetLayout imguiTextureSetLayout() {
  ImGui_ImplVulkan_Data* bd = ImGui_ImplVulkan_GetBackendData();
  return bd ? bd->DescriptorSetLayout : VK_NULL_HANDLE;
}

VkPipelineLayout imguiPipelineLayout() {
  ImGui_ImplVulkan_Data* bd = ImGui_ImplVulkan_GetBackendData();
  return bd ? bd->PipelineLayout : VK_NULL_HANDLE;
}

}  // namespace sdgen::gui
