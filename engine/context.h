#pragma once
// The device context: the one object that owns the Vulkan instance, device, memory, kernel compiler and
// pipelines. Everything else receives it by reference; there is no other global state.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/device.h"
#include "engine/instance.h"
#include "engine/memory.h"
#include "engine/pipeline.h"
#include "engine/slang_compiler.h"

namespace sdgen {

struct ContextOptions {
  std::optional<bool> validation;        // unset: SDGEN_VALIDATION
  std::optional<uint32_t> deviceIndex;   // unset: SDGEN_DEVICE, else the best device
  std::string cacheDir;                  // unset: SDGEN_CACHE_DIR, else ~/.cache/sdgen
  std::string slangc;                    // unset: SDGEN_SLANGC, else tools/slang/bin/slangc
  std::string shaderDir;                 // unset: SDGEN_SHADER_DIR, else the source tree's shaders/
  // For a GUI that renders and presents with the engine's own device (see app/gui): extra instance and device
  // extensions, and a test the compute queue family must pass (present support), given the instance.
  std::vector<std::string> instanceExtensions;
  std::vector<std::string> deviceExtensions;
  std::function<bool(VkInstance, VkPhysicalDevice, uint32_t queueFamily)> queueFamilyFilter;
  std::string queueFamilyRequirement;  // what the filter checks, for the error message
};

class Context {
 public:
  explicit Context(const ContextOptions& options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Instance& instance() { return *instance_; }
  Device& device() { return *device_; }
  MemoryManager& memory() { return *memory_; }
  SlangCompiler& compiler() { return *compiler_; }
  KernelRegistry& kernels() { return *kernels_; }
  const DeviceInfo& info() const { return device_->info(); }

  // Device-local allocation.
  Allocation allocate(uint64_t bytes, const std::string& what) {
    return memory_->allocate(MemoryKind::Device, bytes, what);
  }
  // Blocking host<->device transfers through staging memory, streamed in chunks so host memory stays small.
  void upload(const Allocation& dst, uint64_t offset, std::span<const uint8_t> bytes);
  void download(const Allocation& src, uint64_t offset, std::span<uint8_t> bytes);

 private:
  std::unique_ptr<Instance> instance_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<MemoryManager> memory_;
  std::unique_ptr<SlangCompiler> compiler_;
  std::unique_ptr<KernelRegistry> kernels_;
};

}  // namespace sdgen
