#pragma once
// Where a cold start's kernel compile time goes (SDGEN_COMPILE_LOG=1; KernelRegistry keeps one only then): per
// compiled kernel, the Slang compile (SPIR-V, from the compiler's cache where it hit) and the driver's pipeline
// creation, measured on the worker (or waiting thread) that ran it. report() prints the totals and every kernel,
// slowest first, with the source module or label it came from, its place in completion order (#N) and whether
// it was the first compile of its thread ("first": a thread's first compile also pays for its Slang session).
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace sdgen {

class CompileLog {
 public:
  static bool requested();  // SDGEN_COMPILE_LOG set, and not "0"
  CompileLog();

  void add(std::string name, double slangMs, double pipelineMs);  // on the thread that compiled it
  std::string report() const;

 private:
  struct Entry {
    std::string name;
    double slangMs = 0, pipelineMs = 0;
    size_t order = 0;        // completion order, from 1
    bool threadFirst = false;  // the first compile this log saw on its thread
  };
  const uint64_t id_;  // unique in the process: which logs a thread has added to (not an address, reused)
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
};

}  // namespace sdgen
