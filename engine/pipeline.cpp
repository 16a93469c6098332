#include "engine/pipeline.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <thread>

#include "engine/device.h"
#include "engine/error.h"
#include "engine/file_util.h"

namespace sdgen {

ComputePipeline::ComputePipeline(Device& device, VkPipelineCache cache, VkPipelineLayout layout,
                                 const std::vector<uint32_t>& spirv, const KernelSource& source)
    : device_(device), name_(source.displayName()) {
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = spirv.size() * 4;
  mi.pCode = spirv.data();
  vkCheck(vkCreateShaderModule(device.handle(), &mi, nullptr, &module_), ("vkCreateShaderModule " + name_).c_str());

  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module_;
  ci.stage.pName = "main";
  if (source.requiredSubgroupSize) {
    const auto& info = device.info();
    if (!info.subgroupSizeControl || source.requiredSubgroupSize < info.minSubgroupSize ||
        source.requiredSubgroupSize > info.maxSubgroupSize)
      throw Error("kernel " + name_ + " requires subgroup size " + std::to_string(source.requiredSubgroupSize) +
                  ", which device '" + info.name + "' cannot provide");
    subgroup.requiredSubgroupSize = source.requiredSubgroupSize;
    ci.stage.pNext = &subgroup;
  }
  ci.layout = layout;
  VkResult r = vkCreateComputePipelines(device.handle(), cache, 1, &ci, nullptr, &pipeline_);
  if (r != VK_SUCCESS) {
    vkDestroyShaderModule(device.handle(), module_, nullptr);
    throwVkError(r, ("vkCreateComputePipelines " + name_).c_str());
  }
}

ComputePipeline::~ComputePipeline() {
  vkDestroyPipeline(device_.handle(), pipeline_, nullptr);
  vkDestroyShaderModule(device_.handle(), module_, nullptr);
}

KernelRegistry::KernelRegistry(Device& device, SlangCompiler& compiler) : device_(device), compiler_(compiler) {
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants)};
  VkPipelineLayoutCreateInfo li{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  li.pushConstantRangeCount = 1;
  li.pPushConstantRanges = &range;
  vkCheck(vkCreatePipelineLayout(device.handle(), &li, nullptr, &layout_), "vkCreatePipelineLayout");

  auto data = readFile(cachePath());
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  if (data) {  // the driver validates the header (vendor, device, UUID) and ignores a foreign blob
    ci.initialDataSize = data->size();
    ci.pInitialData = data->data();
  }
  if (vkCreatePipelineCache(device.handle(), &ci, nullptr, &cache_) != VK_SUCCESS) {
    ci.initialDataSize = 0;
    ci.pInitialData = nullptr;
    vkCheck(vkCreatePipelineCache(device.handle(), &ci, nullptr, &cache_), "vkCreatePipelineCache");
  }
}

std::string KernelRegistry::cachePath() const {
  char uuid[2 * VK_UUID_SIZE + 1];
  for (unsigned i = 0; i < VK_UUID_SIZE; ++i) std::snprintf(uuid + 2 * i, 3, "%02x", device_.info().pipelineCacheUUID[i]);
  return compiler_.cacheDir() + "/pipelines-" + uuid + ".bin";
}

KernelRegistry::~KernelRegistry() {
  size_t size = 0;
  if (vkGetPipelineCacheData(device_.handle(), cache_, &size, nullptr) == VK_SUCCESS && size > 0) {
    std::string data(size, '\0');
    if (vkGetPipelineCacheData(device_.handle(), cache_, &size, data.data()) == VK_SUCCESS) {
      try {
        writeFileAtomic(cachePath(), data);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "sdgen: warning: pipeline cache not saved: %s\n", e.what());
      }
    }
  }
  pipelines_.clear();
  vkDestroyPipelineCache(device_.handle(), cache_, nullptr);
  vkDestroyPipelineLayout(device_.handle(), layout_, nullptr);
}

const ComputePipeline& KernelRegistry::get(const KernelSource& source) {
  const std::string key = source.requestKey();
  {
    std::lock_guard lock(mutex_);
    auto it = pipelines_.find(key);
    if (it != pipelines_.end()) return *it->second;
  }
  auto spirv = compiler_.compile(source);
  auto pipeline = std::make_unique<ComputePipeline>(device_, cache_, layout_, spirv, source);
  std::lock_guard lock(mutex_);
  auto [it, inserted] = pipelines_.emplace(key, std::move(pipeline));
  return *it->second;
}

void KernelRegistry::prepare(const std::vector<KernelSource>& sources) {
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failureMutex;
  auto worker = [&] {
    for (size_t i; (i = next++) < sources.size();) {
      try {
        get(sources[i]);
      } catch (...) {
        std::lock_guard lock(failureMutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  unsigned n = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), sources.size()));
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < n; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

size_t KernelRegistry::size() const {
  std::lock_guard lock(mutex_);
  return pipelines_.size();
}

}  // namespace sdgen
