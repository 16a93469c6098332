#pragma once
// What a physical device is and can do: the record printed by `sdgen --list-devices` and used by kernel selection.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sdgen {

struct CoopMatrixShape {
  uint32_t m = 0, n = 0, k = 0;
  std::string aType, bType, cType, resultType;  // "f16", "f32", "bf16", "s8", ...
  std::string scope;                            // "subgroup", "workgroup", ...
  uint32_t invocations = 0;  // flexible (VK_NV_cooperative_matrix2) shapes: the workgroup size they need, else 0
};

struct MemoryHeapInfo {
  uint64_t size = 0;
  uint64_t budget = 0;  // VK_EXT_memory_budget when available, else size
  uint64_t usage = 0;
  bool deviceLocal = false;
};

struct DeviceInfo {
  uint32_t index = 0;
  std::string name;
  std::string driverName;
  std::string driverInfo;
  std::string type;  // "discrete", "integrated", "virtual", "cpu", "other"
  uint32_t vendorId = 0, deviceId = 0;
  uint32_t apiVersion = 0;
  uint8_t pipelineCacheUUID[VK_UUID_SIZE] = {};

  uint32_t subgroupSize = 0, minSubgroupSize = 0, maxSubgroupSize = 0;
  uint32_t sharedMemoryPerWorkgroup = 0;
  uint32_t maxWorkgroupInvocations = 0;
  uint32_t maxWorkgroupSize[3] = {};
  uint32_t maxWorkgroupCount[3] = {};
  uint64_t maxStorageBufferRange = 0;
  uint64_t maxBufferSize = 0;
  uint32_t maxPushConstantsSize = 0;
  uint32_t multiprocessors = 0;  // SMs (VK_NV_shader_sm_builtins); 0: not known
  float timestampPeriodNs = 0;
  bool timestampsSupported = false;
  std::vector<MemoryHeapInfo> heaps;

  // Optional features: true when present on the device (and enabled by Device when present).
  bool shaderFloat16 = false;
  bool storage16Bit = false;
  bool shaderInt64 = false;
  bool bufferDeviceAddress = false;
  bool subgroupSizeControl = false;
  bool computeFullSubgroups = false;
  bool memoryBudget = false;
  bool coopMatrixKHR = false;
  bool bfloat16 = false;
  // VK_NV_cooperative_matrix2's row reductions and accumulator -> operand conversions (enabled together when
  // both are supported): the tensor-core attention keeps its softmax in accumulators (flash_coop2.slang).
  bool coopMatrix2Softmax = false;
  // VK_NV_cooperative_matrix2's workgroup-scope matrices with flexible dimensions and tensor addressing, where
  // the driver stages the operands through shared memory itself (shaders/linear/gemm_wg.slang): reported and
  // enabled only under SDGEN_COOP_WORKGROUP_SCOPE=1 (engine/device_info.cpp says why). coopMatrixFlexibleShapes
  // lists the granularities (m, n, k) per type combination, scope and workgroup size.
  bool coopMatrixWorkgroupScope = false;
  std::vector<CoopMatrixShape> coopMatrixFlexibleShapes;
  uint32_t coopMatrixWorkgroupMaxSize = 0, coopMatrixFlexibleMaxDimension = 0, coopMatrixWorkgroupReservedShared = 0;
  // VK_KHR_pipeline_executable_properties, enabled only when SDGEN_PIPELINE_STATS asks for the driver's
  // per-kernel statistics (engine/pipeline_stats.h).
  bool pipelineStats = false;
  std::vector<CoopMatrixShape> coopMatrixShapes;
  // Present (not enabled) extensions that kernels to come may use, listed by --list-devices so that a
  // GPU's support is known before code depends on it (e.g. VK_NV_cooperative_matrix2's row reductions).
  std::vector<std::string> extensionsOfNote;

  std::string apiVersionString() const;
  // Multi-line human-readable description.
  std::string describe() const;
  bool hasCoopMatrix(uint32_t m, uint32_t n, uint32_t k, const std::string& ab, const std::string& c) const;
  // Whether workgroup-scope matrices of m x k (A, fp16) times k x n (B, fp16) into m x n (`c`) run in workgroups of
  // `invocations`: a flexible shape of that scope, types and size whose granularities divide m, n, k.
  bool hasWorkgroupCoopMatrix(uint32_t m, uint32_t n, uint32_t k, const std::string& c, uint32_t invocations) const;
};

DeviceInfo queryDeviceInfo(VkInstance instance, VkPhysicalDevice pd, uint32_t index);

}  // namespace sdgen
