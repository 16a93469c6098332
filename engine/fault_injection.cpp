#include "engine/fault_injection.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string_view>

#include "engine/error.h"

namespace sdgen {

namespace {

constexpr std::array<std::string_view, kFaultKindCount> kNames = {"alloc", "read", "pipeline", "submit-lost"};

struct FaultState {
  std::atomic<bool> active{false};
  std::array<std::atomic<uint64_t>, kFaultKindCount> target{};  // 0: no fault of this kind
  std::array<std::atomic<uint64_t>, kFaultKindCount> count{};
};

FaultState& state() {
  static FaultState s;
  return s;
}

void applyPlan(const std::string& spec) {
  std::array<uint64_t, kFaultKindCount> target{};
  size_t begin = 0;
  while (begin < spec.size()) {
    size_t end = spec.find(',', begin);
    if (end == std::string::npos) end = spec.size();
    const std::string_view item = std::string_view(spec).substr(begin, end - begin);
    begin = end + 1;
    const size_t colon = item.find(':');
    size_t kind = kFaultKindCount;
    for (size_t k = 0; k < kFaultKindCount && colon != std::string_view::npos; ++k)
      if (item.substr(0, colon) == kNames[k]) kind = k;
    uint64_t n = 0;
    bool digits = colon != std::string_view::npos && colon + 1 < item.size() && item.size() - colon <= 19;
    for (size_t i = colon + 1; digits && i < item.size(); ++i) {
      if (item[i] < '0' || item[i] > '9') digits = false;
      else n = n * 10 + uint64_t(item[i] - '0');
    }
    if (kind == kFaultKindCount || !digits || n == 0)
      throw Error("SDGEN_FAULT: '" + std::string(item) +
                  "' is not KIND:N with KIND one of alloc, read, pipeline, submit-lost and N >= 1");
    target[kind] = n;
  }
  FaultState& s = state();
  s.active.store(false);
  for (int k = 0; k < kFaultKindCount; ++k) {
    s.target[k].store(target[k]);
    s.count[k].store(0);
  }
  s.active.store(!spec.empty());
}

void planFromEnvironment() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (const char* spec = std::getenv("SDGEN_FAULT")) applyPlan(spec);
  });
}

}  // namespace

bool injectFault(FaultKind kind) {
  planFromEnvironment();
  FaultState& s = state();
  if (!s.active.load(std::memory_order_relaxed)) return false;
  const int k = int(kind);
  const uint64_t n = s.count[k].fetch_add(1) + 1;
  return n == s.target[k].load();
}

void setFaultPlan(const std::string& spec) {
  planFromEnvironment();  // so a later first check cannot replace this plan by the environment's
  applyPlan(spec);
}

uint64_t faultOperationCount(FaultKind kind) { return state().count[int(kind)].load(); }

}  // namespace sdgen
