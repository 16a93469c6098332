#include "engine/compile_log.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

namespace sdgen {

bool CompileLog::requested() {
  const char* v = std::getenv("SDGEN_COMPILE_LOG");
  return v && *v && std::strcmp(v, "0") != 0;
}

CompileLog::CompileLog() : id_([] {
  static std::atomic<uint64_t> next{1};
  return next++;
}()) {}

void CompileLog::add(std::string name, double slangMs, double pipelineMs, double sessionMs, double modulesMs) {
  if (name.size() > 160) name.resize(160);  // labels quote generated names: keep lines bounded
  // The logs this thread has added to (a registry's workers serve one log; tests make several).
  thread_local std::vector<uint64_t> seenBy;
  const bool first = std::find(seenBy.begin(), seenBy.end(), id_) == seenBy.end();
  if (first) seenBy.push_back(id_);
  std::lock_guard lock(mutex_);
  entries_.push_back({std::move(name), slangMs, pipelineMs, sessionMs, modulesMs, entries_.size() + 1, first});
}

std::string CompileLog::report() const {
  std::lock_guard lock(mutex_);
  std::vector<Entry> sorted = entries_;
  std::sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) {
    return a.slangMs + a.pipelineMs > b.slangMs + b.pipelineMs;
  });
  double slang = 0, pipeline = 0, sessions = 0, modules = 0;
  // By the name's first word (a module path or a label's op: "conv2d", "autotune", "gemm_coop"...).
  std::map<std::string, std::pair<int, double>> byFirstWord;
  for (const Entry& e : sorted) {
    slang += e.slangMs;
    pipeline += e.pipelineMs;
    sessions += e.sessionMs;
    modules += e.modulesMs;
    auto& [count, ms] = byFirstWord[e.name.substr(0, e.name.find(' '))];
    ++count;
    ms += e.slangMs + e.pipelineMs;
  }
  std::string out;
  char line[320];
  std::snprintf(line, sizeof line,
                "sdgen: compile log: %zu kernels, Slang %.1f s (making sessions %.1f s, modules %.1f s), pipelines "
                "%.1f s (summed over threads)\n",
                sorted.size(), slang / 1e3, sessions / 1e3, modules / 1e3, pipeline / 1e3);
  out += line;
  for (const auto& [word, v] : byFirstWord) {
    std::snprintf(line, sizeof line, "  first word  %5d kernels %8.1f s  %s\n", v.first, v.second / 1e3, word.c_str());
    out += line;
  }
  for (const Entry& e : sorted) {
    std::snprintf(line, sizeof line,
                  "  kernel  slang %7.1f ms (session %6.1f, modules %6.1f)  pipeline %7.1f ms  #%-4zu %-5s  %s\n",
                  e.slangMs, e.sessionMs, e.modulesMs, e.pipelineMs, e.order, e.threadFirst ? "first" : "",
                  e.name.c_str());
    out += line;
  }
  return out;
}

}  // namespace sdgen
