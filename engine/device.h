#pragma once
// The logical device: physical-device choice, enabled features, the compute queue and a command pool.
#include <vulkan/vulkan.h>

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/device_info.h"
#include "engine/instance.h"

namespace sdgen {

struct DeviceOptions {
  // Physical device index (as listed by `sdgen --list-devices`); unset: SDGEN_DEVICE, else the best device.
  std::optional<uint32_t> index;
  // Further device extensions (e.g. VK_KHR_swapchain for a GUI presenting from sdgen's own device).
  std::vector<std::string> extensions;
  // When set, the compute queue family must also pass this test (e.g. "can present to the window");
  // `queueFamilyRequirement` says what it checks, for the error when no family passes.
  std::function<bool(VkPhysicalDevice, uint32_t queueFamily)> queueFamilyFilter;
  std::string queueFamilyRequirement;
};

// All devices the instance sees, in enumeration order.
std::vector<DeviceInfo> listDevices(const Instance& instance);

// Picks a device: explicit index, else SDGEN_DEVICE, else discrete > integrated > virtual > other > cpu.
uint32_t chooseDevice(const std::vector<DeviceInfo>& devices, const DeviceOptions& options);

class Device {
 public:
  Device(Instance& instance, const DeviceOptions& options);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  VkDevice handle() const { return device_; }
  VkPhysicalDevice physical() const { return physical_; }
  VkQueue queue() const { return queue_; }
  uint32_t queueFamily() const { return queueFamily_; }
  VkCommandPool commandPool() const { return commandPool_; }
  const DeviceInfo& info() const { return info_; }
  Instance& instance() { return instance_; }

  // Serializes vkQueueSubmit: Vulkan requires external synchronization of the queue.
  void submit(const VkSubmitInfo& submit, VkFence fence);
  // vkQueuePresentKHR on the same queue under the same lock (a GUI presenting while the engine computes
  // on another thread). Returns the result (VK_SUBOPTIMAL_KHR / VK_ERROR_OUT_OF_DATE_KHR are the caller's to
  // handle); throws on device loss.
  VkResult present(const VkPresentInfoKHR& present);
  void waitIdle();

 private:
  Instance& instance_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queueFamily_ = 0;
  VkCommandPool commandPool_ = VK_NULL_HANDLE;
  DeviceInfo info_;
  std::mutex submitMutex_;
};

}  // namespace sdgen
