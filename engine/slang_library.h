#pragma once
// The Slang compiler library (libslang-compiler, the one slangc itself loads), used in-process: slangc pays
// ~0.25 s per kernel to load the library and Slang's core module before it compiles anything (half of a typical
// kernel's 0.5 s on the 2-core machine; a cold SD 1.5 run on the H100 compiles 9.6 -> 7.6 s without it,
// docs/perf.md "Residency"). Here each compile takes a
// global session (the core module loaded once) from a pool and runs slangc's own command line through Slang's
// C API (spProcessCommandLineArguments), so the SPIR-V is byte for byte slangc's (tests/vulkan).
//
// Slang's sessions are not thread-safe: each concurrent compile has its own, created on demand (~0.2 s and
// ~165 MB of host memory each) and kept for the next compile until trimIdleSessions().
// The library is opened with RTLD_NODELETE: its static state outlives any one compiler.
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sdgen {

class SlangLibrary {
 public:
  // The library beside slangc (libslang-compiler.so.*), or null with the reason in *why.
  static std::unique_ptr<SlangLibrary> open(const std::string& slangcDir, std::string* why);
  ~SlangLibrary();
  SlangLibrary(const SlangLibrary&) = delete;
  SlangLibrary& operator=(const SlangLibrary&) = delete;

  // Slang's build tag, the text `slangc -v` prints (e.g. "2026.14.1").
  const std::string& version() const { return version_; }
  const std::string& path() const { return path_; }

  struct Result {
    bool ok = false;
    std::string code;                // the first target's code (SPIR-V words), or the module (Output::Module)
    std::vector<std::string> deps;   // every source file the compile read, as slangc's -depfile lists them
    std::string diagnostics;         // warnings and errors, as slangc prints them
    double sessionMs = 0;            // getting a session: making one, or waiting for one (~0 where one was idle)
  };
  // What a compile returns: the first target's code, or the serialized module slangc writes for
  // `-o name.slang-module` (the arguments then name no target; engine/slang_modules.h).
  enum class Output { Target, Module };
  // Compiles one request given as slangc's arguments (without the program name, -o or -depfile).
  Result compile(const std::vector<std::string>& args, Output output = Output::Target);
  // Destroys the sessions no compile is using (their memory back to the system).
  void trimIdleSessions();
  size_t idleSessions() const;
  struct SessionStats {
    int made = 0;          // sessions made so far
    int mostAtOnce = 0;    // the most made at the same time
    int limit = 0;         // how many may be made at once (0: any number)
  };
  SessionStats sessionStats() const;

  struct Api;  // the C entry points (slang_library.cpp)

 private:
  SlangLibrary(void* handle, std::string path, std::unique_ptr<Api> api);
  void* takeSession(double* createdMs);
  void giveBack(void* session);

  void* handle_ = nullptr;
  std::string path_, version_;
  std::unique_ptr<Api> api_;
  mutable std::mutex mutex_;
  std::vector<void*> idle_;
  // How many sessions may be made at once (SDGEN_SLANG_SESSION_CREATORS overrides; 0: any number). Making one loads
  // Slang's core module, ~0.2 s alone, but a cold start's 16 compile threads all making theirs at once took 2-4 s
  // each (contention inside Slang): at most 2 at once cut the H100's cold kernel compile 11.4 -> 6.6 s (session
  // 54, docs/perf.md), and a thread that waits often gets a session another compile gave back.
  int creatorLimit_ = 2, creating_ = 0, mostCreating_ = 0, made_ = 0;
  std::condition_variable creatorFree_;
};

}  // namespace sdgen
