#pragma once
// Compute pipelines built from SPIR-V, a persisted VkPipelineCache, and the kernel registry that compiles
// each distinct KernelSource once (in parallel when many are requested together).
#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/slang_compiler.h"

namespace sdgen {

class Device;

// Every sdgen kernel receives one push-constant block: the address of its parameter block and of the
// sequence's uniform slots (runtime scalars such as the timestep, changeable between replays).
struct PushConstants {
  VkDeviceAddress params = 0;
  VkDeviceAddress uniforms = 0;
};

class ComputePipeline {
 public:
  ComputePipeline(Device& device, VkPipelineCache cache, VkPipelineLayout layout, const std::vector<uint32_t>& spirv,
                  const KernelSource& source);
  ~ComputePipeline();
  ComputePipeline(const ComputePipeline&) = delete;
  ComputePipeline& operator=(const ComputePipeline&) = delete;

  VkPipeline handle() const { return pipeline_; }
  const std::string& name() const { return name_; }

 private:
  Device& device_;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  std::string name_;
};

class KernelRegistry {
 public:
  KernelRegistry(Device& device, SlangCompiler& compiler);
  ~KernelRegistry();  // saves the pipeline cache
  KernelRegistry(const KernelRegistry&) = delete;
  KernelRegistry& operator=(const KernelRegistry&) = delete;

  // Returns the pipeline for a kernel, compiling it on first use.
  const ComputePipeline& get(const KernelSource& source);
  // Compiles all kernels concurrently (one slangc per core) and creates their pipelines.
  void prepare(const std::vector<KernelSource>& sources);
  VkPipelineLayout layout() const { return layout_; }
  SlangCompiler& compiler() { return compiler_; }
  size_t size() const;

 private:
  std::string cachePath() const;
  Device& device_;
  SlangCompiler& compiler_;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<ComputePipeline>> pipelines_;
};

}  // namespace sdgen
