#include "engine/device.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/fault_injection.h"
#include "engine/pipeline_stats.h"
#include "engine/vk_compat.h"

namespace sdgen {

std::vector<DeviceInfo> listDevices(const Instance& instance) {
  std::vector<DeviceInfo> out;
  auto devices = instance.physicalDevices();
  for (uint32_t i = 0; i < devices.size(); ++i) out.push_back(queryDeviceInfo(instance.handle(), devices[i], i));
  return out;
}

static int typeRank(const std::string& type) {
  if (type == "discrete") return 0;
  if (type == "integrated") return 1;
  if (type == "virtual") return 2;
  if (type == "other") return 3;
  return 4;  // cpu (lavapipe): the fallback when nothing else exists
}

uint32_t chooseDevice(const std::vector<DeviceInfo>& devices, const DeviceOptions& options) {
  if (devices.empty()) throw Error("no Vulkan device found (install mesa-vulkan-drivers for the CPU driver lavapipe)");
  std::optional<uint32_t> index = options.index;
  std::string source = "--device";
  if (!index) {
    if (const char* env = std::getenv("SDGEN_DEVICE"); env && *env) {
      char* end = nullptr;
      long v = std::strtol(env, &end, 10);
      if (*end != '\0' || v < 0) throw Error(std::string("SDGEN_DEVICE: expected a device index, got '") + env + "'");
      index = static_cast<uint32_t>(v);
      source = "SDGEN_DEVICE";
    }
  }
  if (index) {
    if (*index >= devices.size())
      throw Error(source + " " + std::to_string(*index) + ": only " + std::to_string(devices.size()) +
                  " Vulkan device(s) exist (see sdgen --list-devices)");
    return *index;
  }
  uint32_t best = 0;
  for (uint32_t i = 1; i < devices.size(); ++i)
    if (typeRank(devices[i].type) < typeRank(devices[best].type)) best = i;
  return best;
}

Device::Device(Instance& instance, const DeviceOptions& options) : instance_(instance) {
  auto infos = listDevices(instance);
  uint32_t index = chooseDevice(infos, options);
  physical_ = instance.physicalDevices()[index];
  info_ = infos[index];

  if (VK_API_VERSION_MINOR(info_.apiVersion) < 3 && VK_API_VERSION_MAJOR(info_.apiVersion) == 1)
    throw Error("device '" + info_.name + "' supports Vulkan " + info_.apiVersionString() + "; sdgen needs 1.3");
  if (!info_.bufferDeviceAddress || !info_.shaderInt64)
    throw Error("device '" + info_.name + "' lacks bufferDeviceAddress/shaderInt64, which every sdgen kernel uses");

  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n, families.data());
  bool found = false;
  for (uint32_t i = 0; i < n && !found; ++i)
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
        (!options.queueFamilyFilter || options.queueFamilyFilter(physical_, i))) {
      queueFamily_ = i;
      found = true;
    }
  if (!found && options.queueFamilyFilter)
    throw Error("device '" + info_.name + "' has no compute queue family that " +
                (options.queueFamilyRequirement.empty() ? std::string("passes the caller's check")
                                                        : options.queueFamilyRequirement));
  if (!found) throw Error("device '" + info_.name + "' has no compute queue");
  if (families[queueFamily_].timestampValidBits == 0) info_.timestampsSupported = false;

  std::vector<const char*> extensions;
  if (info_.memoryBudget) extensions.push_back(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  if (!options.extensions.empty()) {
    uint32_t count = 0;
    vkEnumerateDeviceExtensionProperties(physical_, nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> available(count);
    vkEnumerateDeviceExtensionProperties(physical_, nullptr, &count, available.data());
    for (const auto& wanted : options.extensions) {
      bool present = false;
      for (const auto& a : available) present = present || wanted == a.extensionName;
      if (!present) throw Error("device '" + info_.name + "' lacks extension " + wanted);
      extensions.push_back(wanted.c_str());
    }
  }

  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR coop{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  VkPhysicalDeviceShaderBfloat16FeaturesKHR bf16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR};
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV coop2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executableInfo{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};

  // Query what is supported, then enable exactly the features sdgen uses.
  VkPhysicalDeviceVulkan12Features s12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features s11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &s12};
  VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &s11};
  vkGetPhysicalDeviceFeatures2(physical_, &supported);

  features.features.shaderInt64 = VK_TRUE;
  features.features.shaderInt16 = supported.features.shaderInt16;
  f12.bufferDeviceAddress = VK_TRUE;
  f12.shaderFloat16 = info_.shaderFloat16;
  f12.shaderInt8 = s12.shaderInt8;
  f12.storageBuffer8BitAccess = s12.storageBuffer8BitAccess;
  f12.vulkanMemoryModel = s12.vulkanMemoryModel;
  f12.vulkanMemoryModelDeviceScope = s12.vulkanMemoryModelDeviceScope;
  f12.timelineSemaphore = s12.timelineSemaphore;
  f12.hostQueryReset = s12.hostQueryReset;
  f11.storageBuffer16BitAccess = info_.storage16Bit;
  f11.uniformAndStorageBuffer16BitAccess = s11.uniformAndStorageBuffer16BitAccess;
  f13.synchronization2 = VK_TRUE;
  f13.maintenance4 = VK_TRUE;
  f13.subgroupSizeControl = info_.subgroupSizeControl;
  f13.computeFullSubgroups = info_.computeFullSubgroups;

  features.pNext = &f11;
  f11.pNext = &f12;
  f12.pNext = &f13;
  void** tail = &f13.pNext;
  if (info_.coopMatrixKHR) {
    extensions.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
    coop.cooperativeMatrix = VK_TRUE;
    *tail = &coop;
    tail = &coop.pNext;
  }
  if (info_.bfloat16) {
    extensions.push_back(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
    bf16.shaderBFloat16Type = VK_TRUE;
    *tail = &bf16;
    tail = &bf16.pNext;
  }
  if (info_.coopMatrix2Softmax || info_.coopMatrixWorkgroupScope) {
    extensions.push_back(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME);
    coop2.cooperativeMatrixReductions = info_.coopMatrix2Softmax;
    coop2.cooperativeMatrixConversions = info_.coopMatrix2Softmax;
    coop2.cooperativeMatrixWorkgroupScope = info_.coopMatrixWorkgroupScope;
    coop2.cooperativeMatrixFlexibleDimensions = info_.coopMatrixWorkgroupScope;
    coop2.cooperativeMatrixTensorAddressing = info_.coopMatrixWorkgroupScope;
    *tail = &coop2;
    tail = &coop2.pNext;
  }

  if (pipelineStatsRequested()) {
    uint32_t count = 0;
    vkEnumerateDeviceExtensionProperties(physical_, nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> available(count);
    vkEnumerateDeviceExtensionProperties(physical_, nullptr, &count, available.data());
    for (const auto& a : available)
      if (std::strcmp(a.extensionName, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) == 0) info_.pipelineStats = true;
    if (info_.pipelineStats) {
      extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
      executableInfo.pipelineExecutableInfo = VK_TRUE;
      *tail = &executableInfo;
      tail = &executableInfo.pNext;
    } else {
      std::fprintf(stderr, "sdgen: SDGEN_PIPELINE_STATS: device '%s' lacks %s\n", info_.name.c_str(),
                   VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    }
  }

  // A validation layer older than an extension reports its feature struct as unknown and the extension as
  // unsupported; those messages say nothing about sdgen's use of the API, so exactly they are not counted.
  // Shaders using such an extension's SPIR-V capability get the same treatment (`shaderNeedles`).
  auto tolerateNewerThanLayer = [&](const char* extension, uint32_t sinceHeader, int sType,
                                    std::vector<std::string> shaderNeedles = {}) {
    uint32_t layer = instance.validationLayerVersion();
    if (!layer || VK_API_VERSION_MINOR(layer) > VK_API_VERSION_MINOR(sinceHeader) ||
        (VK_API_VERSION_MINOR(layer) == VK_API_VERSION_MINOR(sinceHeader) &&
         VK_API_VERSION_PATCH(layer) >= VK_API_VERSION_PATCH(sinceHeader)))
      return;
    instance.validation().suppress(std::string("Device Extension ") + extension + " is not supported by this layer");
    instance.validation().suppress("unknown VkStructureType (" + std::to_string(sType) + ")");
    for (auto& n : shaderNeedles) instance.validation().suppress(n);
  };
  if (info_.coopMatrixKHR)
    // Debian's layer (1.3.239) predates SPV_KHR_cooperative_matrix: its SPIR-V checks reject the capability
    // (operand 6022, CooperativeMatrixKHR) and the extension of the tensor-core kernels.
    tolerateNewerThanLayer(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME, VK_MAKE_API_VERSION(0, 1, 3, 255), 1000506000,
                           {"Invalid capability operand: 6022",
                            "A SPIR-V Capability (Unhandled OpCapability) was declared that is not supported by Vulkan",
                            "A SPIR-V Extension (SPV_KHR_cooperative_matrix) was declared that is not supported"});
  if (info_.coopMatrix2Softmax || info_.coopMatrixWorkgroupScope)
    tolerateNewerThanLayer(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME, VK_MAKE_API_VERSION(0, 1, 3, 303), 1000593000,
                           {"A SPIR-V Extension (SPV_NV_cooperative_matrix2) was declared that is not supported"});
  if (info_.bfloat16)
    tolerateNewerThanLayer(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME, VK_MAKE_API_VERSION(0, 1, 4, 311), 1000141000);

  float priority = 1.0f;
  VkDeviceQueueCreateInfo queueInfo{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queueInfo.queueFamilyIndex = queueFamily_;
  queueInfo.queueCount = 1;
  queueInfo.pQueuePriorities = &priority;

  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &features};
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queueInfo;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  vkCheck(vkCreateDevice(physical_, &info, nullptr, &device_), "vkCreateDevice");
  vkGetDeviceQueue(device_, queueFamily_, 0, &queue_);

  VkCommandPoolCreateInfo poolInfo{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  poolInfo.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  poolInfo.queueFamilyIndex = queueFamily_;
  vkCheck(vkCreateCommandPool(device_, &poolInfo, nullptr, &commandPool_), "vkCreateCommandPool");
}

Device::~Device() {
  if (device_) {
    vkDeviceWaitIdle(device_);
    if (commandPool_) vkDestroyCommandPool(device_, commandPool_, nullptr);
    vkDestroyDevice(device_, nullptr);
  }
}

void Device::submit(const VkSubmitInfo& submit, VkFence fence) {
  std::lock_guard lock(submitMutex_);
  VkResult r = injectFault(FaultKind::SubmitLost) ? VK_ERROR_DEVICE_LOST : vkQueueSubmit(queue_, 1, &submit, fence);
  if (r == VK_ERROR_DEVICE_LOST) throw Error("GPU device lost ('" + info_.name + "'): the driver reset the device");
  vkCheck(r, "vkQueueSubmit");
}

VkResult Device::present(const VkPresentInfoKHR& present) {
  std::lock_guard lock(submitMutex_);
  VkResult r = vkQueuePresentKHR(queue_, &present);
  if (r == VK_ERROR_DEVICE_LOST) throw Error("GPU device lost ('" + info_.name + "'): the driver reset the device");
  return r;
}

// vkDeviceWaitIdle needs every queue of the device externally synchronized, hence the queue lock.
void Device::waitIdle() {
  std::lock_guard lock(submitMutex_);
  vkCheck(vkDeviceWaitIdle(device_), "vkDeviceWaitIdle");
}

}  // namespace sdgen
