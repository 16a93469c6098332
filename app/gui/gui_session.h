#pragma once
// Everything that lives on the Vulkan device, in destruction order: the engine's Context (created with the
// window-system extensions and a queue that can present), the swapchain, the textures' descriptor pool, Dear
// ImGui's Vulkan backend, and the generation worker. A lost device ends the session; main() starts a new one
// while the window, Dear ImGui's context and the GuiApp (its gallery kept on the host) stay.
#include <memory>

#include "app/generation_worker.h"
#include "app/gui/gui_app.h"
#include "app/gui/gui_options.h"
#include "app/gui/gui_texture.h"
#include "app/gui/swapchain_renderer.h"
#include "engine/context.h"

struct GLFWwindow;

namespace sdgen::gui {

// Dear ImGui's Vulkan backend for one session (Init with the font upload, Shutdown).
class ImGuiVulkanBackend {
 public:
  ImGuiVulkanBackend(Context& ctx, SwapchainRenderer& renderer, TextureRenderer& textures);
  ~ImGuiVulkanBackend();
  ImGuiVulkanBackend(const ImGuiVulkanBackend&) = delete;
  ImGuiVulkanBackend& operator=(const ImGuiVulkanBackend&) = delete;
};

class GuiSession {
 public:
  GuiSession(GLFWwindow* window, const GuiOptions& options);
  ~GuiSession();
  // Frames until the window closes or the app asks to exit. Throws sdgen::Error when the device fails.
  void run(GuiApp& app);

 private:
  GLFWwindow* window_;
  Context ctx_;
  SwapchainRenderer renderer_;
  TextureRenderer textures_;
  ImGuiVulkanBackend imgui_;
  GenerationWorker worker_;
  GuiApp* app_ = nullptr;
};

}  // namespace sdgen::gui
