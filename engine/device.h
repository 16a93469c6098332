#pragma once
// The logical device: physical-device choice, enabled features, the compute queue and a command pool.
#include <vulkan/vulkan.h>

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
