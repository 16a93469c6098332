#include "app/memory_report.h"

#include <cstdio>

namespace sdgen::app {

std::string formatMemoryReport(const pipeline::MemoryReport& r) {
  auto mib = [](uint64_t b) { return double(b) / (1 << 20); };
  char buf[200];
  std::string s = "memory (MiB):\n";
  uint64_t weights = 0, arenas = 0;
  for (const pipeline::ComponentMemory& c : r.components) {
    std::snprintf(buf, sizeof buf, "  %-15s weights %9.1f   arena %8.1f   loaded in %.1f ms\n", c.name.c_str(),
                  mib(c.weightBytes), mib(c.arenaBytes), c.loadMs);
    s += buf;
    weights += c.weightBytes;
    arenas += c.arenaBytes;
  }
  std::snprintf(buf, sizeof buf, "  %-15s weights %9.1f   arena %8.1f   conv scratch %.1f\n", "total", mib(weights),
                mib(arenas), mib(r.convScratchBytes));
  s += buf;
  std::snprintf(buf, sizeof buf, "  weight stream   %.1f MiB in %llu batches, %.1f ms (reading files %.1f ms)\n",
                mib(r.streamedBytes), static_cast<unsigned long long>(r.streamBatches), r.streamMs, r.streamReadMs);
  s += buf;
  if (r.peakProcessBytes > 0)
    std::snprintf(buf, sizeof buf, "  peak            %.1f (process, VK_EXT_memory_budget); sdgen's blocks %.1f\n",
                  mib(r.peakProcessBytes), mib(r.peakAllocatedBytes));
  else
    std::snprintf(buf, sizeof buf, "  peak            %.1f (sdgen's device memory blocks; no VK_EXT_memory_budget)\n",
                  mib(r.peakAllocatedBytes));
  s += buf;
  return s;
}

}  // namespace sdgen::app
