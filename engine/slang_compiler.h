#pragma once
// Turns Slang kernels into SPIR-V with slangc's compiler, with a content-hashed on-disk cache. The compiler
// runs in-process (SlangLibrary: slangc's library and command line, no process per kernel) unless
// SDGEN_SLANG_IN_PROCESS=0 or the library does not load; then slangc runs as a process per kernel.
// A cache entry is valid when the compiler version, the request, and the content of every source file the
// compiler read (from its depfile) are unchanged, so a second run compiles nothing. The modules kernels import
// are compiled once into the same cache (engine/slang_modules.h), not parsed again by every kernel.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sdgen {

struct KernelSource {
  // A .slang file relative to the shader directory, e.g. "basic/fill.slang". Empty when `generated` is set.
  std::string module;
  // Generated wrapper source (for example a kernel specialized on an expression type); it may import modules
  // from the shader directory. Written to the cache directory so diagnostics point at a real file.
  std::string generated;
  std::string entry = "main";
  std::vector<std::pair<std::string, std::string>> defines;
  std::vector<std::string> capabilities;  // slangc -capability values, e.g. "spvCooperativeMatrixKHR"
  uint32_t requiredSubgroupSize = 0;       // 0: the driver's choice
  std::string label;                       // for logs and profiles; defaults to module or a hash
  // Run spirv-opt (-O2) on this kernel: only where measured faster (the driver's code differs a lot for large
  // cooperative-matrix tiles; for most kernels -O0 is as fast or faster). Needs the slang-glslang library
  // beside slangc (scripts/setup.sh); without it the kernel is compiled at -O0 and a warning says so once.
  bool optimize = false;

  std::string displayName() const;
  std::string requestKey() const;  // hash of everything in the request (not of the files it reads)
};

struct CompileStats {
  std::atomic<uint64_t> compiled{0};
  std::atomic<uint64_t> cacheHits{0};
};

class SlangLibrary;
class SlangModuleCache;

class SlangCompiler {
 public:
  // precompiledModules: kernels import modules compiled once (engine/slang_modules.h); off, or with
  // SDGEN_SLANG_MODULES=0, every compile parses its imports' sources (the reference the tests compare with).
  SlangCompiler(std::string slangc, std::string shaderDir, std::string cacheDir, bool precompiledModules = true);
  ~SlangCompiler();

  std::vector<uint32_t> compile(const KernelSource& source);
  // Where the calling thread's last compile() spent its time besides Slang's work on the kernel (the compile
  // log, engine/compile_log.h): making a Slang session, and preparing the precompiled modules (compiling them,
  // or waiting for another thread's compile of them).
  struct Breakdown {
    double sessionMs = 0, modulesMs = 0;
  };
  static Breakdown lastOnThisThread();
  const std::string& version() const { return version_; }
  const std::string& cacheDir() const { return cacheDir_; }
  const std::string& shaderDir() const { return shaderDir_; }
  const CompileStats& stats() const { return stats_; }
  // Modules this compiler compiled (not found in the cache); 0 without precompiled modules.
  size_t modulesCompiled() const;
  bool precompiledModules() const { return modules_ != nullptr; }
  // Whether -O2 requests can be honoured (the slang-glslang library sits beside slangc).
  bool optimizerAvailable() const { return optimizer_; }
  // Whether kernels compile in-process (else one slangc process each), and why not where they do not.
  bool inProcess() const { return library_ != nullptr; }
  const std::string& subprocessReason() const { return subprocessReason_; }
  // Frees the in-process compiler's idle sessions (~165 MB of host memory each); the next compile makes one.
  void trimIdleSessions();

 private:
  bool tryCache(const std::string& key, std::vector<uint32_t>* spirv);
  // Compiles `input` (the kernel's source file) to SPIR-V and caches it under `key`; with the precompiled modules
  // of `modulesFolder` ahead of the shader folder where given.
  std::vector<uint32_t> compileSpirv(const KernelSource& source, const std::string& key, const std::string& input,
                                     const std::string& level, const std::optional<std::string>& modulesFolder);
  // A module's serialized form (slangc's -o x.slang-module), in-process or through slangc.
  std::optional<std::string> compileModule(const std::vector<std::string>& args);
  std::string slangc_, shaderDir_, cacheDir_, version_, subprocessReason_;
  std::unique_ptr<SlangLibrary> library_;
  std::unique_ptr<SlangModuleCache> modules_;
  bool optimizer_ = false;
  std::atomic<bool> warnedNoOptimizer_{false};
  CompileStats stats_;
};

// Resolves slangc and the shader directory: SDGEN_SLANGC / SDGEN_SHADER_DIR, else the build-time paths.
std::string defaultSlangc();
std::string defaultShaderDir();

}  // namespace sdgen
