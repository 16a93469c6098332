#pragma once
// The driver's own statistics of a compiled kernel (VK_KHR_pipeline_executable_properties: registers, spills,
// shared memory, instruction counts as the driver names them), printed to stderr per pipeline when
// SDGEN_PIPELINE_STATS=1 and the device has the extension. A kernel-tuning aid: it shows whether a tile's
// accumulators fit in registers, which timings alone only suggest.
#include <vulkan/vulkan.h>

#include <string>

namespace sdgen {

// SDGEN_PIPELINE_STATS is set to a non-empty value other than "0".
bool pipelineStatsRequested();

// One line per executable of `pipeline`: "sdgen: pipeline stats NAME [EXECUTABLE]: Key=value, ...".
// Failures of the query are reported on the line itself (a diagnostic never throws).
void printPipelineStats(VkDevice device, VkPipeline pipeline, const std::string& name);

}  // namespace sdgen
