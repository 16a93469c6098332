#pragma once
// Where a cold start's kernel compile time goes (SDGEN_COMPILE_LOG=1; KernelRegistry keeps one only then): per
// compiled kernel, the Slang compile (SPIR-V, from the compiler's cache where it hit) and the driver's pipeline
// creation, measured on the worker (or waiting thread) that ran it. report() prints the totals and every kernel,
// slowest first, with the source module or label it came from.
#include <mutex>
#include <string>
#include <vector>

namespace sdgen {

class CompileLog {
 public:
  static bool requested();  // SDGEN_COMPILE_LOG set, and not "0"

  void add(std::string name, double slangMs, double pipelineMs);
  std::string report() const;

 private:
  struct Entry {
    std::string name;
    double slangMs = 0, pipelineMs = 0;
  };
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
};

}  // namespace sdgen
