#pragma once
// Slang modules compiled once (serialized .slang-module files, which Slang's import loads instead of parsing,
// checking and lowering the source again): each kernel compile parsed every module it imports — sdgen, expr, the
// GEMM and conv modules — in a fresh compile request, most of a typical kernel's compile (0.235 -> 0.054 s for a
// conv kernel in-process on the 2-core machine; docs/perf.md "Residency", session 53).
//
// A module's file is keyed by its content: the compiler version and flags, its own text and source path, the
// keys of the modules it imports (so a change anywhere below it makes a new key), the capabilities, and the
// defines whose names appear in its imports' texts (modules see the command line's defines, nothing else).
// Files live in <cache>/slang-modules/<key>.slang-module (beside it <key>.slang-module.sum, its checksum); a kernel
// compile gets a folder of links named by the import paths (conv/gemm_core.slang-module) to the files of exactly
// its imports, searched before the shader folder. An import the scan cannot follow (a missing file, a cycle, a module that does not compile) leaves
// the kernel to Slang's own search of the sources: the same SPIR-V, and Slang's diagnostics.
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sdgen {

class SlangModuleCache {
 public:
  // Compiles a module given slangc's arguments (source, -I..., flags; no -o) into its serialized form, or
  // nullopt where it does not compile.
  using ModuleCompiler = std::function<std::optional<std::string>(const std::vector<std::string>& args)>;

  SlangModuleCache(std::string shaderDir, std::string cacheDir, std::string compilerVersion,
                   std::vector<std::string> flags, ModuleCompiler compile);

  // The folder to search before the shader folder for a kernel of this source text (in `kernelDir`) whose imports
  // resolve in the shader folder, with every imported module compiled; nullopt where it cannot be made (the
  // sources then).
  std::optional<std::string> prepare(const std::string& kernelText, const std::string& kernelDir,
                                     const std::vector<std::pair<std::string, std::string>>& defines,
                                     const std::vector<std::string>& capabilities);

  // A kernel that failed to compile on `folder` (prepare's) but compiled from the sources: Slang rejected a
  // module file that passed its checksum. Removes the folder and the module files it links to, so that they are
  // compiled again.
  void discard(const std::string& folder);

  // Modules compiled by this cache (not found on disk) since it was made.
  size_t compiled() const;

  // The module names a Slang source imports (`import a.b;`, `__exported import a.b;`), in order.
  static std::vector<std::string> importsOf(const std::string& text);

 private:
  struct Module {
    std::string name, path, text;
    std::vector<std::string> imports;
    std::string key;  // see the file comment; empty until keyed
  };
  using Defines = std::vector<std::pair<std::string, std::string>>;
  // Loads `name` and its imports into `graph` (depth first; false on a missing file or a cycle).
  // `fromDir`: the importing file's folder, which Slang searches first.
  bool load(const std::string& name, const std::string& fromDir, std::map<std::string, Module>& graph,
            std::vector<std::string>& visiting, std::vector<std::string>& order) const;
  // Every module `name` imports, itself excluded, directly or not.
  static std::vector<std::string> closureOf(const std::string& name, const std::map<std::string, Module>& graph);
  std::optional<std::string> linkFolder(const std::vector<std::string>& names,
                                        const std::map<std::string, Module>& graph);
  // Compiles `m` once per process (other threads asking for the same key wait for that compile).
  bool ensureCompiled(const Module& m, const std::map<std::string, Module>& graph, const Defines& defines,
                      const std::vector<std::string>& capabilities);
  // The compile itself: true where the module's file is on disk afterwards.
  bool compileModule(const Module& m, const std::map<std::string, Module>& graph, const Defines& defines,
                     const std::vector<std::string>& capabilities);
  std::string fileOf(const std::string& key) const;
  // Whether the module file of `key` is there and matches the checksum written after it (`<file>.sum`): a cache
  // folder is hostile, and Slang aborts on some corrupt modules instead of reading the sources.
  bool intact(const std::string& key) const;
  // Whether an existing link folder holds exactly the links to the files of `names`.
  bool linksIntact(const std::string& folder, const std::vector<std::string>& names,
                   const std::map<std::string, Module>& graph) const;

  std::string shaderDir_, root_, version_;
  std::vector<std::string> flags_;
  ModuleCompiler compile_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_future<bool>> inFlight_;  // by key: compiled (or found) in this process
  size_t compiled_ = 0;
};

}  // namespace sdgen
