#include "engine/slang_compiler.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>

#include "engine/content_hash.h"
#include "engine/error.h"
#include "engine/file_util.h"
#include "engine/process.h"
#include "engine/slang_library.h"
#include "engine/slang_modules.h"

namespace sdgen {

namespace fs = std::filesystem;

std::string defaultSlangc() {
  if (const char* s = std::getenv("SDGEN_SLANGC"); s && *s) return s;
  return SDGEN_DEFAULT_SLANGC;
}

std::string defaultShaderDir() {
  if (const char* s = std::getenv("SDGEN_SHADER_DIR"); s && *s) return s;
  return SDGEN_DEFAULT_SHADER_DIR;
}

std::string KernelSource::displayName() const {
  if (!label.empty()) return label;
  if (!module.empty()) return module + ":" + entry;
  return "generated-" + requestKey().substr(0, 12);
}

std::string KernelSource::requestKey() const {
  ContentHash h;
  h.field(module).field(generated).field(entry).field(std::to_string(requiredSubgroupSize));
  for (auto& [k, v] : defines) h.field(k).field(v);
  for (auto& c : capabilities) h.field(c);
  if (optimize) h.field("optimize");  // a distinct pipeline from the -O0 one
  return h.hex();
}

// Compiler flags that affect the output; part of every cache key. Kernels compile at -O0 (spirv-opt's passes
// made most kernels slower on the H100, docs/perf.md) unless KernelSource::optimize asks for -O2;
// SDGEN_SLANG_OPT=0|1|2|3 forces one level for every kernel (experiments).
static const std::vector<std::string> kFlags = {"-target", "spirv", "-stage", "compute", "-fvk-use-scalar-layout",
                                                "-matrix-layout-row-major"};

static const char* forcedOptLevel() {
  const char* v = std::getenv("SDGEN_SLANG_OPT");
  if (v && v[0] >= '0' && v[0] <= '3' && v[1] == 0) return v;
  return nullptr;
}

// The flags of kFlags that apply to a module (no target or stage: a module is Slang's IR, not SPIR-V).
static const std::vector<std::string> kModuleFlags = {"-fvk-use-scalar-layout", "-matrix-layout-row-major"};

SlangCompiler::SlangCompiler(std::string slangc, std::string shaderDir, std::string cacheDir,
                             bool precompiledModules)
    : slangc_(std::move(slangc)), shaderDir_(std::move(shaderDir)), cacheDir_(std::move(cacheDir)) {
  if (!fs::exists(slangc_))
    throw Error("Slang compiler not found at '" + slangc_ + "' (run scripts/setup.sh, or set SDGEN_SLANGC)");
  if (!fs::is_directory(shaderDir_))
    throw Error("shader directory not found: '" + shaderDir_ + "' (set SDGEN_SHADER_DIR)");
  // spirv-opt lives in the slang-glslang library that slangc (and its library) loads from its own directory.
  const std::string dir = fs::path(slangc_).parent_path().string();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind("libslang-glslang-", 0) == 0) optimizer_ = true;
  const char* inProcess = std::getenv("SDGEN_SLANG_IN_PROCESS");
  if (inProcess && std::string(inProcess) == "0") subprocessReason_ = "SDGEN_SLANG_IN_PROCESS=0";
  else library_ = SlangLibrary::open(dir, &subprocessReason_);
  if (library_) {
    version_ = library_->version();  // the same text as `slangc -v`: cache keys do not depend on the mode
    if (version_.empty()) {
      library_.reset();
      subprocessReason_ = "the library reports no version";
    }
  }
  if (!library_) {
    auto r = runProcess({slangc_, "-v"});
    if (r.exitCode != 0) throw Error("'" + slangc_ + " -v' failed: " + r.output);
    version_ = r.output;
    while (!version_.empty() && (version_.back() == '\n' || version_.back() == '\r')) version_.pop_back();
  }
  const char* modules = std::getenv("SDGEN_SLANG_MODULES");
  if (precompiledModules && !(modules && std::string(modules) == "0"))
    modules_ = std::make_unique<SlangModuleCache>(shaderDir_, cacheDir_, version_, kModuleFlags,
                                                  [this](const std::vector<std::string>& args) {
                                                    return compileModule(args);
                                                  });
}

size_t SlangCompiler::modulesCompiled() const { return modules_ ? modules_->compiled() : 0; }

std::optional<std::string> SlangCompiler::compileModule(const std::vector<std::string>& args) {
  if (library_) {
    SlangLibrary::Result r = library_->compile(args, SlangLibrary::Output::Module);
    if (!r.ok) return std::nullopt;
    return std::move(r.code);
  }
  static std::atomic<uint64_t> serial{0};
  const std::string tmp = cacheDir_ + "/slang-modules/module.tmp" + std::to_string(::getpid()) + "_" +
                          std::to_string(serial++) + ".slang-module";
  fs::create_directories(cacheDir_ + "/slang-modules");
  std::vector<std::string> command = {slangc_};
  command.insert(command.end(), args.begin(), args.end());
  command.insert(command.end(), {"-o", tmp});
  auto r = runProcess(command);
  std::optional<std::string> code = readFile(tmp);
  std::error_code ec;
  fs::remove(tmp, ec);
  if (r.exitCode != 0) return std::nullopt;
  return code;
}

SlangCompiler::~SlangCompiler() = default;

void SlangCompiler::trimIdleSessions() {
  if (library_) library_->trimIdleSessions();
}

// Parses a make-style depfile: "target: dep1 dep2 \\\n dep3"; spaces inside names are escaped with '\'.
static std::vector<std::string> parseDepfile(const std::string& text) {
  std::vector<std::string> deps;
  size_t colon = text.find(": ");
  if (colon == std::string::npos) return deps;
  std::string cur;
  for (size_t i = colon + 2; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size() && text[i + 1] == ' ') {
      cur += ' ';
      ++i;
    } else if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) {
      continue;
    } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      if (!cur.empty()) deps.push_back(cur), cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) deps.push_back(cur);
  return deps;
}

// Slang tags OpSource with its own source-language id (11), which validators older than 2024 (Debian 12's)
// reject. The tag is informational only, so it is rewritten to SourceLanguageUnknown (0).
static void normalizeSourceLanguage(std::string* blob) {
  const size_t words = blob->size() / 4;
  auto word = [&](size_t i) {
    uint32_t w;
    std::memcpy(&w, blob->data() + 4 * i, 4);
    return w;
  };
  for (size_t i = 5; i < words;) {
    uint32_t w = word(i);
    uint32_t opcode = w & 0xffff, count = w >> 16;
    if (count == 0) break;
    if (opcode == 3 /* OpSource */ && count >= 2) {
      uint32_t unknown = 0;
      std::memcpy(blob->data() + 4 * (i + 1), &unknown, 4);
    }
    i += count;
  }
}

bool SlangCompiler::tryCache(const std::string& key, std::vector<uint32_t>* spirv) {
  auto manifest = readFileChecked(cacheDir_ + "/spirv/" + key + ".deps");
  if (!manifest) return false;
  std::istringstream in(*manifest);
  std::string hash, path;
  while (in >> hash && std::getline(in >> std::ws, path)) {
    auto content = readFile(path);
    if (!content || hashHex(*content) != hash) return false;
  }
  auto blob = readFileChecked(cacheDir_ + "/spirv/" + key + ".spv");  // a corrupt module would reach the driver
  if (!blob || blob->size() % 4 != 0 || blob->empty()) return false;
  spirv->resize(blob->size() / 4);
  std::memcpy(spirv->data(), blob->data(), blob->size());
  return true;
}

static thread_local SlangCompiler::Breakdown tLastBreakdown;

SlangCompiler::Breakdown SlangCompiler::lastOnThisThread() { return tLastBreakdown; }

std::vector<uint32_t> SlangCompiler::compile(const KernelSource& source) {
  tLastBreakdown = {};
  std::string level = source.optimize ? "-O2" : "-O0";
  if (const char* forced = forcedOptLevel()) level = std::string("-O") + forced;
  if (level != "-O0" && !optimizer_) {
    if (!warnedNoOptimizer_.exchange(true))
      std::fprintf(stderr, "sdgen: warning: no slang-glslang library beside %s: kernels meant for spirv-opt are "
                   "compiled at -O0 and run slower (scripts/setup.sh installs it)\n", slangc_.c_str());
    level = "-O0";
  }
  ContentHash keyHash;
  // The shader folder too: another folder's modules (SDGEN_SHADER_DIR) are another kernel, even where the first
  // folder's files, which the cached entry's dependencies name, are still there unchanged.
  keyHash.field(version_).field(source.requestKey()).field(level).field(fs::absolute(shaderDir_).string());
  for (auto& f : kFlags) keyHash.field(f);
  const std::string key = keyHash.hex();

  std::vector<uint32_t> spirv;
  if (tryCache(key, &spirv)) {
    stats_.cacheHits++;
    return spirv;
  }

  std::string input;
  std::optional<std::string> text;
  if (!source.generated.empty()) {
    input = cacheDir_ + "/generated/" + key + ".slang";
    writeFileAtomic(input, source.generated);
    text = source.generated;
  } else {
    input = shaderDir_ + "/" + source.module;
    if (!fs::exists(input)) throw Error("kernel source not found: " + input);
    text = readFile(input);
  }
  // The precompiled imports first, where they could be made (else Slang reads the sources, as before).
  std::optional<std::string> folder;
  if (modules_ && text) {
    const auto t0 = std::chrono::steady_clock::now();
    folder = modules_->prepare(*text, fs::path(input).parent_path().string(), source.defines, source.capabilities);
    tLastBreakdown.modulesMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  std::vector<uint32_t> out;
  try {
    out = compileSpirv(source, key, input, level, folder);
  } catch (const Error&) {
    if (!folder) throw;
    // From the sources: Slang's own diagnostics where the kernel is wrong; where it is right, a module file Slang
    // rejected (one that passed its checksum) is removed, to be compiled again.
    out = compileSpirv(source, key, input, level, std::nullopt);
    modules_->discard(*folder);
  }
  return out;
}

std::vector<uint32_t> SlangCompiler::compileSpirv(const KernelSource& source, const std::string& key,
                                                  const std::string& input, const std::string& level,
                                                  const std::optional<std::string>& modulesFolder) {
  std::vector<std::string> args = {input, "-entry", source.entry};
  if (modulesFolder) args.insert(args.end(), {"-I", *modulesFolder});
  args.insert(args.end(), {"-I", shaderDir_});
  args.insert(args.end(), kFlags.begin(), kFlags.end());
  args.push_back(level);
  for (auto& [k, v] : source.defines) args.push_back("-D" + k + (v.empty() ? "" : "=" + v));
  for (auto& c : source.capabilities) args.insert(args.end(), {"-capability", c});

  std::optional<std::string> blob;
  std::vector<std::string> deps;
  if (library_) {
    SlangLibrary::Result r = library_->compile(args);
    tLastBreakdown.sessionMs += r.sessionMs;
    if (!r.ok)
      throw Error("Slang compilation of '" + source.displayName() + "' failed (" + input + "):\n" + r.diagnostics);
    blob = std::move(r.code);
    deps = std::move(r.deps);
  } else {
    // Unique per process and call: concurrent compilers (parallel tests, prepare()) may build the same key.
    static std::atomic<uint64_t> serial{0};
    const std::string tmp = cacheDir_ + "/spirv/" + key + ".tmp" + std::to_string(::getpid()) + "_" +
                            std::to_string(serial++);
    fs::create_directories(cacheDir_ + "/spirv");
    args.insert(args.begin(), slangc_);
    args.insert(args.end(), {"-o", tmp + ".spv", "-depfile", tmp + ".d"});
    auto r = runProcess(args);
    blob = readFile(tmp + ".spv");
    auto depText = readFile(tmp + ".d");
    std::error_code ec;
    fs::remove(tmp + ".spv", ec);
    fs::remove(tmp + ".d", ec);
    if (r.exitCode != 0 || !blob || blob->empty())
      throw Error("Slang compilation of '" + source.displayName() + "' failed (" + input + "):\n" + r.output);
    deps = parseDepfile(depText.value_or(""));
  }
  if (blob->size() % 4 != 0)
    throw Error("Slang compilation of '" + source.displayName() + "' returned " + std::to_string(blob->size()) +
                " bytes, not whole SPIR-V words");

  normalizeSourceLanguage(&*blob);
  std::string manifest;
  for (auto& dep : deps) {
    auto content = readFile(dep);
    if (!content) continue;  // not a file we can re-check (should not happen); treated as not invalidating
    manifest += hashHex(*content) + " " + fs::absolute(dep).string() + "\n";
  }
  fs::create_directories(cacheDir_ + "/spirv");
  writeFileChecked(cacheDir_ + "/spirv/" + key + ".spv", *blob);
  writeFileChecked(cacheDir_ + "/spirv/" + key + ".deps", manifest);
  stats_.compiled++;
  std::vector<uint32_t> spirv(blob->size() / 4);
  std::memcpy(spirv.data(), blob->data(), blob->size());
  return spirv;
}

}  // namespace sdgen
