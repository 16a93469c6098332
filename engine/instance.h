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

 private:
  std::atomic<size_t> count_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> messages_;
  bool echo_ = true;
};

struct InstanceOptions {
  // Enable VK_LAYER_KHRONOS_validation. Default: the SDGEN_VALIDATION environment variable (1/0).
  bool validation = false;
  std::string applicationName = "sdgen";
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
  ValidationSink& validation() { return sink_; }
  std::vector<VkPhysicalDevice> physicalDevices() const;

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  bool validation_ = false;
  ValidationSink sink_;
};

}  // namespace sdgen
