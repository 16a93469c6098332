#pragma once
// The Vulkan instance, with optional validation layers whose messages go to one counted sink.
#include <vulkan/vulkan.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace sdgen {

// Collects validation messages. Tests fail when count() grows during a test.
class ValidationSink {
 public:
  void report(VkDebugUtilsMessageSeverityFlagBitsEXT severity, const char* message);
  size_t count() const { return count_.load(); }
  std::vector<std::string> messages() const;
  void setEcho(bool echo) { echo_ = echo; }
  // Messages containing `needle` are not counted: used only for messages a validation layer emits because it
  // predates an extension the device enables (the layer cannot validate what it does not know).
  void suppress(std::string needle);
  size_t suppressedCount() const { return suppressed_.load(); }

 private:
  std::atomic<size_t> count_{0};
  std::atomic<size_t> suppressed_{0};
  std::vector<std::string> suppressions_;
  mutable std::mutex mutex_;
  std::vector<std::string> messages_;
  bool echo_ = true;
};

struct InstanceOptions {
  // Enable VK_LAYER_KHRONOS_validation. Default: the SDGEN_VALIDATION environment variable (1/0).
  bool validation = false;
  std::string applicationName = "sdgen";
  // Further instance extensions, e.g. the window-system surface extensions a GUI needs
  // (glfwGetRequiredInstanceExtensions). A missing one fails with an Error naming it.
  std::vector<std::string> extensions;
};

// Reads SDGEN_VALIDATION; unset means off.
bool validationRequestedByEnvironment();

class Instance {
 public:
  explicit Instance(const InstanceOptions& options);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  bool validationEnabled() const { return validation_; }
  // VK_LAYER_KHRONOS_validation's spec version (0 when validation is off).
  uint32_t validationLayerVersion() const { return layerVersion_; }
  ValidationSink& validation() { return sink_; }
  std::vector<VkPhysicalDevice> physicalDevices() const;

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  bool validation_ = false;
  uint32_t layerVersion_ = 0;
  ValidationSink sink_;
};

}  // namespace sdgen
