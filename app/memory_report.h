#pragma once
// The `sdgen -v` memory lines: per component (text encoder, UNet, VAE decoder) its resident weights, the arenas of
// its recorded graphs and its load time; the shared conv scratch; the weight stream; and the process's peak
// device memory, from VK_EXT_memory_budget where the device has it, else the engine's own block counter.
#include <string>

#include "models/pipeline/text_to_image.h"

namespace sdgen::app {

std::string formatMemoryReport(const pipeline::MemoryReport& report);

}  // namespace sdgen::app
