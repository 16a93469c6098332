#include "app/gui/swapchain_renderer.h"

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "engine/error.h"

namespace sdgen::gui {

namespace {

constexpr uint64_t kNoTimeout = std::numeric_limits<uint64_t>::max();

bool isBgr(VkFormat f) { return f == VK_FORMAT_B8G8R8A8_UNORM || f == VK_FORMAT_B8G8R8A8_SRGB; }

}  // namespace

SwapchainRenderer::SwapchainRenderer(Context& ctx, GLFWwindow* window)
    : ctx_(ctx), window_(window), device_(ctx.device().handle()) {
  Device& dev = ctx.device();
  VkPhysicalDevice physical = dev.physical();
  vkCheck(glfwCreateWindowSurface(ctx.instance().handle(), window, nullptr, &surface_), "glfwCreateWindowSurface");
  try {
    VkBool32 supported = VK_FALSE;
    vkCheck(vkGetPhysicalDeviceSurfaceSupportKHR(physical, dev.queueFamily(), surface_, &supported),
            "vkGetPhysicalDeviceSurfaceSupportKHR");
    if (!supported)
      throw Error("device '" + dev.info().name + "': its compute queue family " + std::to_string(dev.queueFamily()) +
                  " cannot present to this window's surface; sdgen-gui renders with the engine's own queue");

    uint32_t n = 0;
    vkGetPhysicalDeviceSurfaceFormatsKHR(physical, surface_, &n, nullptr);
    std::vector<VkSurfaceFormatKHR> formats(n);
    vkGetPhysicalDeviceSurfaceFormatsKHR(physical, surface_, &n, formats.data());
    if (formats.empty()) throw Error("the window surface offers no image formats");
    // UNORM so images are shown with the bytes the engine produced (the PNGs hold the same sRGB-encoded bytes).
    format_ = formats[0];
    bool chosen = false;
    for (VkFormat wanted : {VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_R8G8B8A8_UNORM})
      for (auto& f : formats)
        if (!chosen && f.format == wanted && f.colorSpace == VK_COLOR_SPACE_SRGB_NONLINEAR_KHR) {
          format_ = f;
          chosen = true;
        }

    VkAttachmentDescription color{};
    color.format = format_.format;
    color.samples = VK_SAMPLE_COUNT_1_BIT;
    color.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    color.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    color.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
    color.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    color.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    color.finalLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    VkAttachmentReference ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkSubpassDescription subpass{};
    subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
    subpass.colorAttachmentCount = 1;
    subpass.pColorAttachments = &ref;
    // The image is written once the acquire semaphore (waited at this stage) has signaled.
    VkSubpassDependency dependency{};
    dependency.srcSubpass = VK_SUBPASS_EXTERNAL;
    dependency.dstSubpass = 0;
    dependency.srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    dependency.dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    dependency.dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    VkRenderPassCreateInfo rp{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
    rp.attachmentCount = 1;
    rp.pAttachments = &color;
    rp.subpassCount = 1;
    rp.pSubpasses = &subpass;
    rp.dependencyCount = 1;
    rp.pDependencies = &dependency;
    vkCheck(vkCreateRenderPass(device_, &rp, nullptr, &renderPass_), "vkCreateRenderPass");

    // The GUI's own command pool: command pools are externally synchronized and the engine's belongs to the worker.
    VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = dev.queueFamily();
    vkCheck(vkCreateCommandPool(device_, &pool, nullptr, &pool_), "vkCreateCommandPool");
    for (auto& s : slots_) {
      VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
      alloc.commandPool = pool_;
      alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      alloc.commandBufferCount = 1;
      vkCheck(vkAllocateCommandBuffers(device_, &alloc, &s.commands), "vkAllocateCommandBuffers");
      VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
      fence.flags = VK_FENCE_CREATE_SIGNALED_BIT;
      vkCheck(vkCreateFence(device_, &fence, nullptr, &s.done), "vkCreateFence");
      VkSemaphoreCreateInfo sem{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
      vkCheck(vkCreateSemaphore(device_, &sem, nullptr, &s.acquired), "vkCreateSemaphore");
    }
    createSwapchain();
  } catch (...) {
    release();  // the destructor does not run for a constructor that threw
    throw;
  }
}

SwapchainRenderer::~SwapchainRenderer() { release(); }

void SwapchainRenderer::release() {
  waitAllFrames();
  runRetired(std::numeric_limits<uint64_t>::max());
  destroySwapchain();
  for (auto& s : slots_) {
    if (s.acquired) vkDestroySemaphore(device_, s.acquired, nullptr);
    if (s.done) vkDestroyFence(device_, s.done, nullptr);
    s = FrameSlot{};
  }
  if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
  if (renderPass_) vkDestroyRenderPass(device_, renderPass_, nullptr);
  if (surface_) vkDestroySurfaceKHR(ctx_.instance().handle(), surface_, nullptr);
  pool_ = VK_NULL_HANDLE;
  renderPass_ = VK_NULL_HANDLE;
  surface_ = VK_NULL_HANDLE;
}

void SwapchainRenderer::waitAllFrames() {
  for (auto& s : slots_)
    if (s.done) vkWaitForFences(device_, 1, &s.done, VK_TRUE, kNoTimeout);
  completedFrame_ = frameNumber_;
}

void SwapchainRenderer::finishFrames() {
  waitAllFrames();
  runRetired(std::numeric_limits<uint64_t>::max());
}

void SwapchainRenderer::runRetired(uint64_t completedFrame) {
  auto it = std::stable_partition(retired_.begin(), retired_.end(),
                                  [&](const Retired& r) { return r.frame > completedFrame; });
  std::vector<Retired> due(std::make_move_iterator(it), std::make_move_iterator(retired_.end()));
  retired_.erase(it, retired_.end());
  for (auto& r : due) r.destroy();
}

void SwapchainRenderer::retire(std::function<void()> destroy) { retired_.push_back({frameNumber_, std::move(destroy)}); }

void SwapchainRenderer::createSwapchain() {
  VkPhysicalDevice physical = ctx_.device().physical();
  VkSurfaceCapabilitiesKHR caps;
  vkCheck(vkGetPhysicalDeviceSurfaceCapabilitiesKHR(physical, surface_, &caps),
          "vkGetPhysicalDeviceSurfaceCapabilitiesKHR");
  int fbw = 0, fbh = 0;
  glfwGetFramebufferSize(window_, &fbw, &fbh);
  if (caps.currentExtent.width != 0xFFFFFFFFu) {
    extent_ = caps.currentExtent;
  } else {
    extent_.width = std::clamp<uint32_t>(uint32_t(std::max(fbw, 0)), caps.minImageExtent.width, caps.maxImageExtent.width);
    extent_.height =
        std::clamp<uint32_t>(uint32_t(std::max(fbh, 0)), caps.minImageExtent.height, caps.maxImageExtent.height);
  }
  if (extent_.width == 0 || extent_.height == 0) {  // minimized: try again later
    needsRecreate_ = true;
    return;
  }
  canCapture_ = (caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_SRC_BIT) != 0;
  uint32_t count = std::max(caps.minImageCount + 1, 2u);
  if (caps.maxImageCount) count = std::min(count, caps.maxImageCount);

  VkSwapchainCreateInfoKHR info{VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR};
  info.surface = surface_;
  info.minImageCount = count;
  info.imageFormat = format_.format;
  info.imageColorSpace = format_.colorSpace;
  info.imageExtent = extent_;
  info.imageArrayLayers = 1;
  info.imageUsage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | (canCapture_ ? VK_IMAGE_USAGE_TRANSFER_SRC_BIT : 0);
  info.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
  info.preTransform = caps.currentTransform;
  info.compositeAlpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
  if (!(caps.supportedCompositeAlpha & VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR))
    info.compositeAlpha = VkCompositeAlphaFlagBitsKHR(caps.supportedCompositeAlpha & -caps.supportedCompositeAlpha);
  info.presentMode = VK_PRESENT_MODE_FIFO_KHR;  // always available; paces the UI to the display
  info.clipped = VK_TRUE;
  VkSwapchainKHR old = swapchain_;
  info.oldSwapchain = old;
  vkCheck(vkCreateSwapchainKHR(device_, &info, nullptr, &swapchain_), "vkCreateSwapchainKHR");
  if (old) vkDestroySwapchainKHR(device_, old, nullptr);

  uint32_t n = 0;
  vkGetSwapchainImagesKHR(device_, swapchain_, &n, nullptr);
  std::vector<VkImage> images(n);
  vkGetSwapchainImagesKHR(device_, swapchain_, &n, images.data());
  images_.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    SwapImage& s = images_[i];
    s.image = images[i];
    VkImageViewCreateInfo view{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view.image = s.image;
    view.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view.format = format_.format;
    view.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCheck(vkCreateImageView(device_, &view, nullptr, &s.view), "vkCreateImageView");
    VkFramebufferCreateInfo fb{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
    fb.renderPass = renderPass_;
    fb.attachmentCount = 1;
    fb.pAttachments = &s.view;
    fb.width = extent_.width;
    fb.height = extent_.height;
    fb.layers = 1;
    vkCheck(vkCreateFramebuffer(device_, &fb, nullptr, &s.framebuffer), "vkCreateFramebuffer");
    VkSemaphoreCreateInfo sem{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    vkCheck(vkCreateSemaphore(device_, &sem, nullptr, &s.rendered), "vkCreateSemaphore");
  }
  needsRecreate_ = false;
}

void SwapchainRenderer::destroySwapchain() {
  for (auto& s : images_) {
    if (s.rendered) vkDestroySemaphore(device_, s.rendered, nullptr);
    if (s.framebuffer) vkDestroyFramebuffer(device_, s.framebuffer, nullptr);
    if (s.view) vkDestroyImageView(device_, s.view, nullptr);
  }
  images_.clear();
  if (swapchain_) vkDestroySwapchainKHR(device_, swapchain_, nullptr);
  swapchain_ = VK_NULL_HANDLE;
}

VkCommandBuffer SwapchainRenderer::beginFrame() {
  int fbw = 0, fbh = 0;
  glfwGetFramebufferSize(window_, &fbw, &fbh);
  if (fbw <= 0 || fbh <= 0) return VK_NULL_HANDLE;
  if (needsRecreate_ || !swapchain_ || uint32_t(fbw) != extent_.width || uint32_t(fbh) != extent_.height) {
    waitAllFrames();
    runRetired(completedFrame_);
    // Keep the old swapchain alive as oldSwapchain; only its per-image objects go now.
    for (auto& s : images_) {
      vkDestroySemaphore(device_, s.rendered, nullptr);
      vkDestroyFramebuffer(device_, s.framebuffer, nullptr);
      vkDestroyImageView(device_, s.view, nullptr);
    }
    images_.clear();
    createSwapchain();
    if (needsRecreate_) return VK_NULL_HANDLE;
  }

  FrameSlot& s = slots_[(frameNumber_ + 1) % kFramesInFlight];
  vkCheck(vkWaitForFences(device_, 1, &s.done, VK_TRUE, kNoTimeout), "vkWaitForFences (frame)");
  completedFrame_ = std::max(completedFrame_, s.frameNumber);
  runRetired(completedFrame_);

  VkResult r = vkAcquireNextImageKHR(device_, swapchain_, kNoTimeout, s.acquired, VK_NULL_HANDLE, &imageIndex_);
  if (r == VK_ERROR_OUT_OF_DATE_KHR) {
    needsRecreate_ = true;
    return VK_NULL_HANDLE;
  }
  if (r == VK_SUBOPTIMAL_KHR) needsRecreate_ = true;  // still usable for this frame
  else vkCheck(r, "vkAcquireNextImageKHR");

  ++frameNumber_;
  slot_ = uint32_t(frameNumber_ % kFramesInFlight);
  s.frameNumber = frameNumber_;
  vkCheck(vkResetCommandBuffer(s.commands, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkCheck(vkBeginCommandBuffer(s.commands, &begin), "vkBeginCommandBuffer");
  return s.commands;
}

void SwapchainRenderer::beginRenderPass(const VkClearColorValue& clearColor) {
  VkClearValue clear{};
  clear.color = clearColor;
  VkRenderPassBeginInfo info{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
  info.renderPass = renderPass_;
  info.framebuffer = images_[imageIndex_].framebuffer;
  info.renderArea.extent = extent_;
  info.clearValueCount = 1;
  info.pClearValues = &clear;
  vkCmdBeginRenderPass(slots_[slot_].commands, &info, VK_SUBPASS_CONTENTS_INLINE);
}

std::optional<Screenshot> SwapchainRenderer::endFrame(bool capture) {
  FrameSlot& s = slots_[slot_];
  SwapImage& img = images_[imageIndex_];
  vkCmdEndRenderPass(s.commands);

  capture = capture && canCapture_;
  VkBuffer readback = VK_NULL_HANDLE;
  VkDeviceMemory readbackMemory = VK_NULL_HANDLE;
  const VkDeviceSize bytes = VkDeviceSize(extent_.width) * extent_.height * 4;
  if (capture) {
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = bytes;
    bi.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    vkCheck(vkCreateBuffer(device_, &bi, nullptr, &readback), "vkCreateBuffer (screenshot)");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device_, readback, &req);
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = memoryType(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                            VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    vkCheck(vkAllocateMemory(device_, &ai, nullptr, &readbackMemory), "vkAllocateMemory (screenshot)");
    vkCheck(vkBindBufferMemory(device_, readback, readbackMemory, 0), "vkBindBufferMemory (screenshot)");

    VkImageMemoryBarrier toCopy{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    toCopy.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    toCopy.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    toCopy.oldLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    toCopy.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    toCopy.srcQueueFamilyIndex = toCopy.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    toCopy.image = img.image;
    toCopy.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCmdPipelineBarrier(s.commands, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                         0, nullptr, 0, nullptr, 1, &toCopy);
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {extent_.width, extent_.height, 1};
    vkCmdCopyImageToBuffer(s.commands, img.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback, 1, &region);
    VkImageMemoryBarrier toPresent = toCopy;
    toPresent.srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    toPresent.dstAccessMask = 0;
    toPresent.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    toPresent.newLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    VkBufferMemoryBarrier toHost{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
    toHost.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    toHost.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    toHost.srcQueueFamilyIndex = toHost.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    toHost.buffer = readback;
    toHost.size = VK_WHOLE_SIZE;
    vkCmdPipelineBarrier(s.commands, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 0, nullptr, 1, &toHost,
                         1, &toPresent);
  }
  vkCheck(vkEndCommandBuffer(s.commands), "vkEndCommandBuffer");

  VkPipelineStageFlags waitStage = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.waitSemaphoreCount = 1;
  submit.pWaitSemaphores = &s.acquired;
  submit.pWaitDstStageMask = &waitStage;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &s.commands;
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &img.rendered;
  vkCheck(vkResetFences(device_, 1, &s.done), "vkResetFences");
  ctx_.device().submit(submit, s.done);  // under the engine's queue lock

  VkPresentInfoKHR present{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
  present.waitSemaphoreCount = 1;
  present.pWaitSemaphores = &img.rendered;
  present.swapchainCount = 1;
  present.pSwapchains = &swapchain_;
  present.pImageIndices = &imageIndex_;
  VkResult r = ctx_.device().present(present);
  if (r == VK_ERROR_OUT_OF_DATE_KHR || r == VK_SUBOPTIMAL_KHR) needsRecreate_ = true;
  else vkCheck(r, "vkQueuePresentKHR");

  std::optional<Screenshot> shot;
  if (capture) {
    vkCheck(vkWaitForFences(device_, 1, &s.done, VK_TRUE, kNoTimeout), "vkWaitForFences (screenshot)");
    void* mapped = nullptr;
    vkCheck(vkMapMemory(device_, readbackMemory, 0, bytes, 0, &mapped), "vkMapMemory (screenshot)");
    shot = Screenshot{int(extent_.width), int(extent_.height), {}};
    shot->rgb.resize(size_t(extent_.width) * extent_.height * 3);
    const auto* px = static_cast<const uint8_t*>(mapped);
    const bool bgr = isBgr(format_.format);
    for (size_t i = 0; i < size_t(extent_.width) * extent_.height; ++i) {
      shot->rgb[i * 3 + 0] = px[i * 4 + (bgr ? 2 : 0)];
      shot->rgb[i * 3 + 1] = px[i * 4 + 1];
      shot->rgb[i * 3 + 2] = px[i * 4 + (bgr ? 0 : 2)];
    }
    vkUnmapMemory(device_, readbackMemory);
    vkDestroyBuffer(device_, readback, nullptr);
    vkFreeMemory(device_, readbackMemory, nullptr);
  }
  return shot;
}

void SwapchainRenderer::runOneShot(const std::function<void(VkCommandBuffer)>& record) {
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  vkCheck(vkAllocateCommandBuffers(device_, &alloc, &cb), "vkAllocateCommandBuffers");
  VkFence fence = VK_NULL_HANDLE;
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkResult r = vkCreateFence(device_, &fi, nullptr, &fence);
  auto cleanup = [&] {
    if (fence) vkDestroyFence(device_, fence, nullptr);
    vkFreeCommandBuffers(device_, pool_, 1, &cb);
  };
  try {
    vkCheck(r, "vkCreateFence");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkCheck(vkBeginCommandBuffer(cb, &begin), "vkBeginCommandBuffer");
    record(cb);
    vkCheck(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cb;
    ctx_.device().submit(submit, fence);
    vkCheck(vkWaitForFences(device_, 1, &fence, VK_TRUE, kNoTimeout), "vkWaitForFences (one-shot)");
  } catch (...) {
    cleanup();
    throw;
  }
  cleanup();
}

uint32_t SwapchainRenderer::memoryType(uint32_t typeBits, VkMemoryPropertyFlags flags) const {
  VkPhysicalDeviceMemoryProperties props;
  vkGetPhysicalDeviceMemoryProperties(ctx_.device().physical(), &props);
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i)
    if ((typeBits & (1u << i)) && (props.memoryTypes[i].propertyFlags & flags) == flags) return i;
  throw Error("no Vulkan memory type with the properties the GUI needs");
}

}  // namespace sdgen::gui
