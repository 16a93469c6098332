#pragma once
// The window's Vulkan side on the engine's own device: surface, swapchain, render pass and frames in flight.
// Every queue submission and present goes through sdgen::Device (under its queue lock), because the generation
// worker submits compute work to the same VkQueue from another thread; nothing here calls vkDeviceWaitIdle or
// vkQueueWaitIdle (those would need the queue too) - frames are waited for with their own fences.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "engine/context.h"

struct GLFWwindow;

namespace sdgen::gui {

// One rendered frame read back to the host, 8-bit RGB, top row first.
struct Screenshot {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
};

class SwapchainRenderer {
 public:
  static constexpr uint32_t kFramesInFlight = 2;

  // Throws sdgen::Error when the device's queue cannot present to the window's surface.
  SwapchainRenderer(Context& ctx, GLFWwindow* window);
  ~SwapchainRenderer();
  SwapchainRenderer(const SwapchainRenderer&) = delete;
  SwapchainRenderer& operator=(const SwapchainRenderer&) = delete;

  // Waits for the frame slot, acquires a swapchain image and begins the slot's command buffer (uploads may be
  // recorded into it before beginRenderPass). VK_NULL_HANDLE: nothing to draw into now (minimized window).
  VkCommandBuffer beginFrame();
  void beginRenderPass(const VkClearColorValue& clear);
  // Ends the render pass, submits and presents. With `capture` (and canCapture()), the image is also copied to
  // the host; the copy waits for the frame.
  std::optional<Screenshot> endFrame(bool capture);

  // Runs `destroy` once every frame recorded so far has completed on the device.
  void retire(std::function<void()> destroy);
  // Waits for every submitted frame and runs every retired destruction (before tearing down what frames use).
  void finishFrames();
  // Records and runs one-shot commands (the font upload), waiting for them.
  void runOneShot(const std::function<void(VkCommandBuffer)>& record);

  VkRenderPass renderPass() const { return renderPass_; }
  VkExtent2D extent() const { return extent_; }
  bool canCapture() const { return canCapture_; }
  VkDevice device() const { return device_; }
  uint32_t memoryType(uint32_t typeBits, VkMemoryPropertyFlags flags) const;

 private:
  struct FrameSlot {
    VkCommandBuffer commands = VK_NULL_HANDLE;
    VkFence done = VK_NULL_HANDLE;
    VkSemaphore acquired = VK_NULL_HANDLE;
    uint64_t frameNumber = 0;
  };
  struct SwapImage {
    VkImage image = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
    VkFramebuffer framebuffer = VK_NULL_HANDLE;
    VkSemaphore rendered = VK_NULL_HANDLE;  // per image: a present may still wait on it when the slot comes back
  };
  struct Retired {
    uint64_t frame;
    std::function<void()> destroy;
  };

  void release();
  void createSwapchain();
  void destroySwapchain();
  void waitAllFrames();
  void runRetired(uint64_t completedFrame);

  Context& ctx_;
  GLFWwindow* window_;
  VkDevice device_;
  VkSurfaceKHR surface_ = VK_NULL_HANDLE;
  VkSurfaceFormatKHR format_{};
  VkRenderPass renderPass_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkSwapchainKHR swapchain_ = VK_NULL_HANDLE;
  VkExtent2D extent_{};
  bool canCapture_ = false;
  bool needsRecreate_ = false;
  std::vector<SwapImage> images_;
  FrameSlot slots_[kFramesInFlight];
  uint32_t slot_ = 0, imageIndex_ = 0;
  uint64_t frameNumber_ = 0;       // frames begun so far
  uint64_t completedFrame_ = 0;    // every frame up to this one has finished
  std::vector<Retired> retired_;
};

}  // namespace sdgen::gui
