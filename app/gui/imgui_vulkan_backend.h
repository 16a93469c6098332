#pragma once
// Dear ImGui's Vulkan backend (compiled from libimgui-dev's sources) plus what ImGui 1.86's backend lacks:
// images other than the font atlas. The backend binds one descriptor set (the font's) for every draw; an image
// is drawn by binding its own descriptor set, allocated with the backend's set layout, in a draw callback right
// before the image's draw command (and restoring the backend's state after it). See gui_texture.h.
#include <imgui.h>
#include <imgui_impl_vulkan.h>
#include <vulkan/vulkan.h>

namespace sdgen::gui {

// The backend's descriptor set layout (one combined image sampler, its immutable linear sampler) and pipeline
// layout. Valid between ImGui_ImplVulkan_Init and ImGui_ImplVulkan_Shutdown.
VkDescriptorSetLayout imguiTextureSetLayout();
VkPipelineLayout imguiPipelineLayout();

}  // namespace sdgen::gui
