#include "engine/device_info.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "engine/vk_compat.h"

namespace sdgen {

static std::string componentName(int t) {
  switch (t) {
    case 0: return "f16";
    case 1: return "f32";
    case 2: return "f64";
    case 3: return "s8";
    case 4: return "s16";
    case 5: return "s32";
    case 6: return "s64";
    case 7: return "u8";
    case 8: return "u16";
    case 9: return "u32";
    case 10: return "u64";
    case kVkComponentTypeBFloat16: return "bf16";
    default: return "type" + std::to_string(t);
  }
}

static std::string scopeName(int s) {
  switch (s) {
    case 1: return "device";
    case 2: return "workgroup";
    case 3: return "subgroup";
    case 5: return "queue-family";
    default: return "scope" + std::to_string(s);
  }
}

static bool hasExtension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  for (auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

DeviceInfo queryDeviceInfo(VkInstance instance, VkPhysicalDevice pd, uint32_t index) {
  DeviceInfo info;
  info.index = index;

  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
  info.memoryBudget = hasExtension(exts, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  bool coopExt = hasExtension(exts, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  bool bf16Ext = hasExtension(exts, VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
  bool coop2Ext = hasExtension(exts, VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME);
  for (const char* name : {"VK_NV_cooperative_matrix2", "VK_NV_cooperative_vector", "VK_EXT_shader_float8",
                           "VK_KHR_shader_integer_dot_product", "VK_KHR_shader_subgroup_rotate"})
    if (hasExtension(exts, name)) info.extensionsOfNote.push_back(name);

  VkPhysicalDeviceSubgroupSizeControlProperties sizeControl{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, &sizeControl};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, &subgroup};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &driver};
  vkGetPhysicalDeviceProperties2(pd, &props);
  const auto& p = props.properties;
  info.name = p.deviceName;
  info.driverName = driver.driverName;
  info.driverInfo = driver.driverInfo;
  info.vendorId = p.vendorID;
  info.deviceId = p.deviceID;
  info.apiVersion = p.apiVersion;
  std::memcpy(info.pipelineCacheUUID, p.pipelineCacheUUID, VK_UUID_SIZE);
  switch (p.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: info.type = "discrete"; break;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: info.type = "integrated"; break;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: info.type = "virtual"; break;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: info.type = "cpu"; break;
    default: info.type = "other";
  }
  info.subgroupSize = subgroup.subgroupSize;
  info.minSubgroupSize = sizeControl.minSubgroupSize ? sizeControl.minSubgroupSize : subgroup.subgroupSize;
  info.maxSubgroupSize = sizeControl.maxSubgroupSize ? sizeControl.maxSubgroupSize : subgroup.subgroupSize;
  info.sharedMemoryPerWorkgroup = p.limits.maxComputeSharedMemorySize;
  info.maxWorkgroupInvocations = p.limits.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    info.maxWorkgroupSize[i] = p.limits.maxComputeWorkGroupSize[i];
    info.maxWorkgroupCount[i] = p.limits.maxComputeWorkGroupCount[i];
  }
  info.maxStorageBufferRange = p.limits.maxStorageBufferRange;
  info.maxPushConstantsSize = p.limits.maxPushConstantsSize;
  info.timestampPeriodNs = p.limits.timestampPeriod;
  info.timestampsSupported = p.limits.timestampComputeAndGraphics;

  VkPhysicalDeviceMaintenance4Properties m4{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES};
  VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &m4};
  vkGetPhysicalDeviceProperties2(pd, &props2);
  info.maxBufferSize = m4.maxBufferSize;
  // The multiprocessor count (NVIDIA: VK_NV_shader_sm_builtins; no other vendor's count is read yet): the
  // wave-balanced split-K rule of the tensor-core GEMM needs it (ops::chooseWaveSplit), and is off without it.
  if (hasExtension(exts, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) {
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 p3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sm};
    vkGetPhysicalDeviceProperties2(pd, &p3);
    info.multiprocessors = sm.shaderSMCount;
  }

  VkPhysicalDeviceShaderBfloat16FeaturesKHR bf16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR coop{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV coop2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f13};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &f12};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f11};
  void** tail = &f13.pNext;
  if (coopExt) { *tail = &coop; tail = &coop.pNext; }
  if (bf16Ext) { *tail = &bf16; tail = &bf16.pNext; }
  if (coopExt && coop2Ext) { *tail = &coop2; tail = &coop2.pNext; }
  vkGetPhysicalDeviceFeatures2(pd, &features);
  info.shaderFloat16 = f12.shaderFloat16;
  info.storage16Bit = f11.storageBuffer16BitAccess;
  info.shaderInt64 = features.features.shaderInt64;
  info.bufferDeviceAddress = f12.bufferDeviceAddress;
  info.subgroupSizeControl = f13.subgroupSizeControl;
  info.computeFullSubgroups = f13.computeFullSubgroups;
  info.coopMatrixKHR = coopExt && coop.cooperativeMatrix;
  info.bfloat16 = bf16Ext && bf16.shaderBFloat16Type;
  info.coopMatrix2Softmax = info.coopMatrixKHR && coop2Ext && coop2.cooperativeMatrixReductions &&
                            coop2.cooperativeMatrixConversions;
  // Only on request (SDGEN_COOP_WORKGROUP_SCOPE=1, bench/wg_gemm_bench): no engine kernel uses workgroup-scope
  // matrices (4-5x slower than gemm_coop.slang on the H200, docs/perf.md session 18), the driver reserves shared
  // memory for them, and validation layers older than the extension reject its properties structure.
  const char* wgScope = std::getenv("SDGEN_COOP_WORKGROUP_SCOPE");
  info.coopMatrixWorkgroupScope = wgScope && std::strcmp(wgScope, "1") == 0 && info.coopMatrixKHR && coop2Ext &&
                                  coop2.cooperativeMatrixWorkgroupScope && coop2.cooperativeMatrixFlexibleDimensions &&
                                  coop2.cooperativeMatrixTensorAddressing;
  if (info.coopMatrixWorkgroupScope) {
    VkPhysicalDeviceCooperativeMatrix2PropertiesNV limits{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &limits};
    vkGetPhysicalDeviceProperties2(pd, &p2);
    info.coopMatrixWorkgroupMaxSize = limits.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
    info.coopMatrixFlexibleMaxDimension = limits.cooperativeMatrixFlexibleDimensionsMaxDimension;
    info.coopMatrixWorkgroupReservedShared = limits.cooperativeMatrixWorkgroupScopeReservedSharedMemory;
    auto* getFlexible = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV"));
    if (getFlexible) {
      uint32_t count = 0;
      getFlexible(pd, &count, nullptr);
      std::vector<VkCooperativeMatrixFlexibleDimensionsPropertiesNV> shapes(count);
      for (auto& s : shapes) s = {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV};
      getFlexible(pd, &count, shapes.data());
      for (auto& s : shapes)
        info.coopMatrixFlexibleShapes.push_back({s.MGranularity, s.NGranularity, s.KGranularity,
                                                 componentName(s.AType), componentName(s.BType),
                                                 componentName(s.CType), componentName(s.ResultType),
                                                 scopeName(s.scope), s.workgroupInvocations});
    }
    if (info.coopMatrixFlexibleShapes.empty()) info.coopMatrixWorkgroupScope = false;
  }

  if (info.coopMatrixKHR) {
    auto* getProps = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
    if (getProps) {
      uint32_t count = 0;
      getProps(pd, &count, nullptr);
      std::vector<VkCooperativeMatrixPropertiesKHR> shapes(count);
      for (auto& s : shapes) s = {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR};
      getProps(pd, &count, shapes.data());
      for (auto& s : shapes)
        info.coopMatrixShapes.push_back({s.MSize, s.NSize, s.KSize, componentName(s.AType), componentName(s.BType),
                                         componentName(s.CType), componentName(s.ResultType), scopeName(s.scope)});
    }
  }

  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 mem{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2,
                                        info.memoryBudget ? &budget : nullptr};
  vkGetPhysicalDeviceMemoryProperties2(pd, &mem);
  for (uint32_t i = 0; i < mem.memoryProperties.memoryHeapCount; ++i) {
    MemoryHeapInfo h;
    h.size = mem.memoryProperties.memoryHeaps[i].size;
    h.deviceLocal = mem.memoryProperties.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
    h.budget = info.memoryBudget ? budget.heapBudget[i] : h.size;
    h.usage = info.memoryBudget ? budget.heapUsage[i] : 0;
    info.heaps.push_back(h);
  }
  return info;
}

std::string DeviceInfo::apiVersionString() const {
  return std::to_string(VK_API_VERSION_MAJOR(apiVersion)) + "." + std::to_string(VK_API_VERSION_MINOR(apiVersion)) +
         "." + std::to_string(VK_API_VERSION_PATCH(apiVersion));
}

bool DeviceInfo::hasCoopMatrix(uint32_t m, uint32_t n, uint32_t k, const std::string& ab, const std::string& c) const {
  for (auto& s : coopMatrixShapes)
    if (s.m == m && s.n == n && s.k == k && s.aType == ab && s.bType == ab && s.cType == c && s.scope == "subgroup")
      return true;
  return false;
}

bool DeviceInfo::hasWorkgroupCoopMatrix(uint32_t m, uint32_t n, uint32_t k, const std::string& c,
                                        uint32_t invocations) const {
  if (!coopMatrixWorkgroupScope || std::max({m, n, k}) > coopMatrixFlexibleMaxDimension ||
      invocations > coopMatrixWorkgroupMaxSize)
    return false;
  for (auto& s : coopMatrixFlexibleShapes)
    if (s.scope == "workgroup" && s.invocations == invocations && s.aType == "f16" && s.bType == "f16" &&
        s.cType == c && s.resultType == c && s.m && s.n && s.k && m % s.m == 0 && n % s.n == 0 && k % s.k == 0)
      return true;
  return false;
}

std::string DeviceInfo::describe() const {
  std::ostringstream o;
  auto mib = [](uint64_t b) { return std::to_string(b >> 20) + " MiB"; };
  o << "device " << index << ": " << name << " (" << type << ")\n"
    << "  driver: " << driverName << " " << driverInfo << ", Vulkan " << apiVersionString() << "\n"
    << "  subgroup: " << subgroupSize << " (range " << minSubgroupSize << ".." << maxSubgroupSize << ")\n"
    << "  shared memory per workgroup: " << sharedMemoryPerWorkgroup << " bytes\n"
    << "  multiprocessors: " << (multiprocessors ? std::to_string(multiprocessors) : std::string("unknown")) << "\n"
    << "  max workgroup: " << maxWorkgroupInvocations << " invocations (" << maxWorkgroupSize[0] << "x"
    << maxWorkgroupSize[1] << "x" << maxWorkgroupSize[2] << ")\n"
    << "  max storage buffer range: " << mib(maxStorageBufferRange) << ", max buffer: " << mib(maxBufferSize) << "\n"
    << "  timestamps: " << (timestampsSupported ? "yes" : "no") << ", period " << timestampPeriodNs << " ns\n";
  for (size_t i = 0; i < heaps.size(); ++i)
    o << "  heap " << i << ": " << mib(heaps[i].size) << (heaps[i].deviceLocal ? " device-local" : " host")
      << ", budget " << mib(heaps[i].budget) << (memoryBudget ? "" : " (no VK_EXT_memory_budget)") << "\n";
  o << "  features: shaderFloat16=" << shaderFloat16 << " storage16=" << storage16Bit
    << " bufferDeviceAddress=" << bufferDeviceAddress << " subgroupSizeControl=" << subgroupSizeControl
    << " cooperativeMatrixKHR=" << coopMatrixKHR << " bfloat16=" << bfloat16
    << " coopMatrix2Softmax=" << coopMatrix2Softmax << " coopMatrixWorkgroupScope=" << coopMatrixWorkgroupScope
    << "\n";
  if (!extensionsOfNote.empty()) {
    o << "  extensions of note:";
    for (const std::string& e : extensionsOfNote) o << " " << e;
    o << "\n";
  }
  if (!coopMatrixShapes.empty()) {
    o << "  cooperative matrix shapes (MxNxK A/B -> C/Result, scope):\n";
    for (auto& s : coopMatrixShapes)
      o << "    " << s.m << "x" << s.n << "x" << s.k << " " << s.aType << "/" << s.bType << " -> " << s.cType << "/"
        << s.resultType << ", " << s.scope << "\n";
  }
  if (!coopMatrixFlexibleShapes.empty()) {
    o << "  flexible cooperative matrix granularities (MxNxK A/B -> C/Result, scope, invocations; max dimension "
      << coopMatrixFlexibleMaxDimension << ", max workgroup " << coopMatrixWorkgroupMaxSize << ", reserved shared "
      << coopMatrixWorkgroupReservedShared << " bytes):\n";
    for (auto& s : coopMatrixFlexibleShapes)
      o << "    " << s.m << "x" << s.n << "x" << s.k << " " << s.aType << "/" << s.bType << " -> " << s.cType << "/"
        << s.resultType << ", " << s.scope << ", " << s.invocations << "\n";
  }
  return o.str();
}

}  // namespace sdgen
