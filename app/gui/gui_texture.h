#pragma once
// Images shown in the window: a device-local RGBA8 VkImage per image with a descriptor set in Dear ImGui's
// backend layout. Pixels go host -> staging buffer -> image by commands recorded into the frame's own command
// buffer, so drawing an image never reads anything back to the CPU.
#include <imgui.h>
#include <vulkan/vulkan.h>

#include <cstdint>
#include <span>

#include "app/gui/swapchain_renderer.h"

namespace sdgen::gui {

// Owns the descriptor pool (Dear ImGui's font set comes from it too) and knows the frame being recorded, which
// the draw callback of every image needs.
class TextureRenderer {
 public:
  explicit TextureRenderer(SwapchainRenderer& renderer);
  ~TextureRenderer();
  TextureRenderer(const TextureRenderer&) = delete;
  TextureRenderer& operator=(const TextureRenderer&) = delete;

  VkDescriptorPool pool() const { return pool_; }
  SwapchainRenderer& renderer() { return renderer_; }
  // The command buffer ImGui_ImplVulkan_RenderDrawData records into this frame.
  void setFrameCommands(VkCommandBuffer commands) { frame_ = commands; }
  VkCommandBuffer frameCommands() const { return frame_; }

 private:
  SwapchainRenderer& renderer_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer frame_ = VK_NULL_HANDLE;
};

class GuiTexture {
 public:
  GuiTexture(TextureRenderer& textures, int width, int height);
  ~GuiTexture();  // the Vulkan objects are retired until the frames that may use them have finished
  GuiTexture(const GuiTexture&) = delete;
  GuiTexture& operator=(const GuiTexture&) = delete;

  // Records the upload of `rgb` (width * height * 3 bytes) into `commands`, outside any render pass.
  void upload(VkCommandBuffer commands, std::span<const uint8_t> rgb);
  // Draws the image like ImGui::Image (an item of `size`), binding this texture for its draw command only.
  void draw(ImVec2 size);

  int width() const { return width_; }
  int height() const { return height_; }
  bool ready() const { return uploaded_; }

 private:
  static void bindCallback(const ImDrawList* list, const ImDrawCmd* cmd);

  TextureRenderer& textures_;
  int width_, height_;
  VkImage image_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkImageView view_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
  bool uploaded_ = false;
};

}  // namespace sdgen::gui
