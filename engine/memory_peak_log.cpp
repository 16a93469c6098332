#include "engine/memory_peak_log.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace sdgen {

namespace {
// A new summary only every 8 MiB of growth: each one walks every live allocation.
constexpr uint64_t kPeakStep = 8ull << 20;
constexpr size_t kLargestShown = 40;

std::string kindOf(const std::string& name) {
  const size_t close = name.rfind(')'), open = name.rfind('(');
  if (close == std::string::npos || open == std::string::npos || open > close) return name;
  return name.substr(open + 1, close - open - 1);
}

std::vector<std::pair<std::string, uint64_t>> sortedBySize(std::map<std::string, uint64_t> m, size_t keep) {
  std::vector<std::pair<std::string, uint64_t>> v(m.begin(), m.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (v.size() > keep) v.resize(keep);
  return v;
}
}  // namespace

bool MemoryPeakLog::requested() {
  const char* v = std::getenv("SDGEN_MEMORY_PEAK_LOG");
  return v && *v && std::strcmp(v, "0") != 0;
}

void MemoryPeakLog::allocated(const void* block, uint64_t offset, const std::string& name, uint64_t size,
                              uint64_t inUse) {
  live_[{block, offset}] = Live{name, size};
  if (inUse < recordedPeak_ + kPeakStep && recordedPeak_ > 0) return;
  recordedPeak_ = inUse;
  std::map<std::string, uint64_t> kinds, names;
  for (const auto& [key, a] : live_) {
    kinds[kindOf(a.name)] += a.size;
    names[a.name] += a.size;
  }
  byKind_ = sortedBySize(std::move(kinds), 1000);
  largest_ = sortedBySize(std::move(names), kLargestShown);
}

void MemoryPeakLog::released(const void* block, uint64_t offset) { live_.erase({block, offset}); }

std::string MemoryPeakLog::report(const std::string& pool) const {
  if (recordedPeak_ == 0) return "";
  auto mib = [](uint64_t b) { return double(b) / (1 << 20); };
  char buf[400];
  std::snprintf(buf, sizeof buf, "sdgen: memory peak log, %s pool: %.1f MiB in use at the recorded peak\n",
                pool.c_str(), mib(recordedPeak_));
  std::string s = buf;
  for (const auto& [kind, bytes] : byKind_) {
    if (bytes < (1u << 20)) break;
    std::snprintf(buf, sizeof buf, "  kind %9.1f MiB  %.200s\n", mib(bytes), kind.c_str());
    s += buf;
  }
  for (const auto& [name, bytes] : largest_) {
    std::snprintf(buf, sizeof buf, "  name %9.1f MiB  %.200s\n", mib(bytes), name.c_str());
    s += buf;
  }
  return s;
}

}  // namespace sdgen
