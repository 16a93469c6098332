#include "engine/pipeline_stats.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace sdgen {

bool pipelineStatsRequested() {
  const char* v = std::getenv("SDGEN_PIPELINE_STATS");
  return v && *v && std::strcmp(v, "0") != 0;
}

static std::string statValue(const VkPipelineExecutableStatisticKHR& s) {
  switch (s.format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: return s.value.b32 ? "true" : "false";
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: return std::to_string(s.value.i64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: return std::to_string(s.value.u64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: return std::to_string(s.value.f64);
    default: return "?";
  }
}

void printPipelineStats(VkDevice device, VkPipeline pipeline, const std::string& name) {
  auto* getExecutables = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
      vkGetDeviceProcAddr(device, "vkGetPipelineExecutablePropertiesKHR"));
  auto* getStatistics = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      vkGetDeviceProcAddr(device, "vkGetPipelineExecutableStatisticsKHR"));
  if (!getExecutables || !getStatistics) {
    std::fprintf(stderr, "sdgen: pipeline stats %s: VK_KHR_pipeline_executable_properties not loaded\n", name.c_str());
    return;
  }
  VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  info.pipeline = pipeline;
  uint32_t count = 0;
  if (getExecutables(device, &info, &count, nullptr) != VK_SUCCESS) {
    std::fprintf(stderr, "sdgen: pipeline stats %s: query failed\n", name.c_str());
    return;
  }
  std::vector<VkPipelineExecutablePropertiesKHR> executables(count, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  getExecutables(device, &info, &count, executables.data());
  for (uint32_t e = 0; e < count; ++e) {
    VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    ei.pipeline = pipeline;
    ei.executableIndex = e;
    uint32_t n = 0;
    std::string line = "sdgen: pipeline stats " + name + " [" + executables[e].name + "]:";
    if (getStatistics(device, &ei, &n, nullptr) == VK_SUCCESS) {
      std::vector<VkPipelineExecutableStatisticKHR> stats(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
      getStatistics(device, &ei, &n, stats.data());
      for (uint32_t i = 0; i < n; ++i) line += std::string(i ? ", " : " ") + stats[i].name + "=" + statValue(stats[i]);
    } else {
      line += " statistics query failed";
    }
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

}  // namespace sdgen
