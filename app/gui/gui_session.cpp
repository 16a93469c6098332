#include "app/gui/gui_session.h"

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>

#include <string>
#include <vector>

#include "app/gui/imgui_vulkan_backend.h"
#include "engine/error.h"

namespace sdgen::gui {

namespace {

ContextOptions windowContextOptions(const GuiOptions& options) {
  ContextOptions o;
  o.deviceIndex = options.device;
  uint32_t n = 0;
  const char** names = glfwGetRequiredInstanceExtensions(&n);
  if (!names) throw Error("GLFW found no Vulkan window-system support (is a display available? try xvfb-run)");
  for (uint32_t i = 0; i < n; ++i) o.instanceExtensions.emplace_back(names[i]);
  o.deviceExtensions = {VK_KHR_SWAPCHAIN_EXTENSION_NAME};
  o.queueFamilyFilter = [](VkInstance instance, VkPhysicalDevice device, uint32_t family) {
    return glfwGetPhysicalDevicePresentationSupport(instance, device, family) == GLFW_TRUE;
  };
  o.queueFamilyRequirement = "can present to windows on this display (sdgen-gui draws with the engine's queue)";
  return o;
}

void checkVk(VkResult r) {
  if (r != VK_SUCCESS) throwVkError(r, "Dear ImGui's Vulkan backend");
}

}  // namespace

ImGuiVulkanBackend::ImGuiVulkanBackend(Context& ctx, SwapchainRenderer& renderer, TextureRenderer& textures) {
  ImGui_ImplVulkan_InitInfo info{};
  info.Instance = ctx.instance().handle();
  info.PhysicalDevice = ctx.device().physical();
  info.Device = ctx.device().handle();
  info.QueueFamily = ctx.device().queueFamily();
  info.Queue = ctx.device().queue();  // recorded only: every submit goes through sdgen::Device
  info.DescriptorPool = textures.pool();
  info.MinImageCount = SwapchainRenderer::kFramesInFlight;
  // The backend keeps this many vertex/index buffers in rotation: one per frame in flight is enough.
  info.ImageCount = SwapchainRenderer::kFramesInFlight;
  info.MSAASamples = VK_SAMPLE_COUNT_1_BIT;
  info.CheckVkResultFn = checkVk;
  if (!ImGui_ImplVulkan_Init(&info, renderer.renderPass())) throw Error("Dear ImGui's Vulkan backend failed to start");
  try {
    renderer.runOneShot([](VkCommandBuffer cb) { ImGui_ImplVulkan_CreateFontsTexture(cb); });
  } catch (...) {
    ImGui_ImplVulkan_Shutdown();
    throw;
  }
  ImGui_ImplVulkan_DestroyFontUploadObjects();
}

ImGuiVulkanBackend::~ImGuiVulkanBackend() { ImGui_ImplVulkan_Shutdown(); }

GuiSession::GuiSession(GLFWwindow* window, const GuiOptions& options)
    : window_(window),
      ctx_(windowContextOptions(options)),
      renderer_(ctx_, window),
      textures_(renderer_),
      imgui_(ctx_, renderer_, textures_),
      worker_(ctx_) {}

GuiSession::~GuiSession() {
  // The app's textures and every frame in flight must be gone before the backend, the descriptor pool and the
  // swapchain are; the worker (declared last) stops first among the members.
  if (app_) app_->dropTextures();
  renderer_.finishFrames();
}

void GuiSession::run(GuiApp& app) {
  app_ = &app;
  while (!glfwWindowShouldClose(window_) && !app.shouldExit()) {
    // Idle: wake on input only (a few times a second for the cursor); busy: ~30 frames a second for progress.
    glfwWaitEventsTimeout(app.busyOrAnimating(worker_) ? 1.0 / 30 : 0.5);
    VkCommandBuffer commands = renderer_.beginFrame();
    if (!commands) continue;
    app.update(commands, worker_, textures_);
    ImGui_ImplVulkan_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    app.draw(worker_);
    ImGui::Render();
    renderer_.beginRenderPass(VkClearColorValue{{0.09f, 0.09f, 0.1f, 1.f}});
    textures_.setFrameCommands(commands);
    ImGui_ImplVulkan_RenderDrawData(ImGui::GetDrawData(), commands);
    const bool capture = app.wantsScreenshot();
    auto shot = renderer_.endFrame(capture);
    if (capture) app.onScreenshot(shot);
  }
  worker_.cancel();
  app.noteValidationMessages(ctx_.instance().validation().count());
}

}  // namespace sdgen::gui
