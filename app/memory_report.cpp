#include "app/memory_report.h"

#include <cstdio>

namespace sdgen::app {

std::string formatMemoryReport(const pipeline::MemoryReport& r) {
  auto mib = [](uint64_t b) { return double(b) / (1 << 20); };
  char buf[200];
  std::string s = "memory (MiB):\n";
  uint64_t weights = 0, buffers = 0;
  for (const pipeline::ComponentMemory& c : r.components) {
    std::snprintf(buf, sizeof buf, "  %-15s weights %9.1f   planned arena %8.1f   buffers %6.1f   loaded in %.1f ms\n",
                  c.name.c_str(), mib(c.weightBytes), mib(c.arenaBytes), mib(c.bufferBytes), c.loadMs);
    s += buf;
    weights += c.weightBytes;
    buffers += c.bufferBytes;
  }
  // The planned arenas share one allocation (the largest plan): its size, not their sum, is what is held.
  // The conv scratch beside its largest need: the difference is growth steps kept for recorded graphs.
  std::snprintf(buf, sizeof buf,
                "  %-15s weights %9.1f   shared arena  %8.1f   buffers %6.1f   conv scratch %.1f (largest need %.1f)\n",
                "total", mib(weights), mib(r.sharedArenaBytes), mib(buffers), mib(r.convScratchBytes),
                mib(r.convScratchNeedBytes));
  s += buf;
  std::snprintf(buf, sizeof buf,
                "  weight stream   %.1f MiB in %llu batches, %llu tensors packed in place by the host, %.1f ms "
                "(reading files%s %.1f ms)\n",
                mib(r.streamedBytes), static_cast<unsigned long long>(r.streamBatches),
                static_cast<unsigned long long>(r.streamHostTensors), r.streamMs,
                r.streamHostTensors ? " and packing" : "", r.streamReadMs);
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
