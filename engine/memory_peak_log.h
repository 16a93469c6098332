#pragma once
// What was allocated at a memory pool's peak, by name: a measurement aid for where device memory goes
// (SDGEN_MEMORY_PEAK_LOG=1; MemoryPool keeps one only then). Every live allocation's name and size are held;
// each time the bytes in use pass the last recorded peak by a step (or at the first allocation), the live set is
// summarized, and report() prints that summary: totals by kind (the text in the name's last parentheses, e.g.
// "gemm layout", "winograd U") and the largest allocations.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sdgen {

class MemoryPeakLog {
 public:
  // Whether SDGEN_MEMORY_PEAK_LOG asks for one (set, and not "0").
  static bool requested();

  void allocated(const void* block, uint64_t offset, const std::string& name, uint64_t size, uint64_t inUse);
  void released(const void* block, uint64_t offset);
  // The summary of the largest peak recorded, `pool` naming the pool ("" when nothing was allocated).
  std::string report(const std::string& pool) const;

 private:
  struct Live {
    std::string name;
    uint64_t size = 0;
  };
  std::map<std::pair<const void*, uint64_t>, Live> live_;
  uint64_t recordedPeak_ = 0;
  std::vector<std::pair<std::string, uint64_t>> byKind_;   // at the recorded peak, largest first
  std::vector<std::pair<std::string, uint64_t>> largest_;  // at the recorded peak, largest first
};

}  // namespace sdgen
