#pragma once
// Where a cold start's kernel compile time goes (SDGEN_COMPILE_LOG=1; KernelRegistry keeps one only then): per
// compiled kernel, the Slang compile (SPIR-V, from the compiler's cache where it hit) and the driver's pipeline
// creation, measured on the worker (or waiting thread) that ran it; of the Slang time, what went to making a
// Slang session and to the precompiled modules (compiled, or waited for). report() prints the totals and every kernel,
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

  // On the thread that compiled it. Of slangMs: sessionMs making a Slang session, modulesMs preparing the
  // precompiled modules (SlangCompiler::Breakdown).
  void add(std::string name, double slangMs, double pipelineMs, double sessionMs = 0, double modulesMs = 0);
  std::string report() const;

 private:
  struct Entry {
    std::string name;
    double slangMs = 0, pipelineMs = 0, sessionMs = 0, modulesMs = 0;
    size_t order = 0;        // completion order, from 1
    bool threadFirst = false;  // the first compile this log saw on its thread
  };
  const uint64_t id_;  // unique in the process: which logs a thread has added to (not an address, reused)
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
};

}  // namespace sdgen
