#include "engine/slang_library.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <type_traits>

namespace sdgen {

namespace fs = std::filesystem;

namespace {

// ISlangBlob, called through its vtable by hand: ISlangUnknown's queryInterface, addRef and release (slots 0-2),
// then getBufferPointer and getBufferSize (3, 4); on Linux each takes `this` first (the Itanium C++ ABI). Not a
// C++ class declared here: slang.h is not in the wheels that ship slangc, and a local abstract class with no
// implementation in the program lets the compiler devirtualize its calls into __cxa_pure_virtual.
struct SlangBlob {
  void* const* vtable;
};

const void* blobData(SlangBlob* b) { return reinterpret_cast<const void* (*)(SlangBlob*)>(b->vtable[3])(b); }
size_t blobSize(SlangBlob* b) { return reinterpret_cast<size_t (*)(SlangBlob*)>(b->vtable[4])(b); }
void blobRelease(SlangBlob* b) { reinterpret_cast<uint32_t (*)(SlangBlob*)>(b->vtable[2])(b); }

}  // namespace

// Slang's C API (slang.h's sp* functions; sessions and requests are opaque here).
struct SlangLibrary::Api {
  void* (*createSession)(const char*) = nullptr;
  void (*destroySession)(void*) = nullptr;
  void* (*createRequest)(void*) = nullptr;
  void (*destroyRequest)(void*) = nullptr;
  int32_t (*processArguments)(void*, const char* const*, int) = nullptr;
  int32_t (*compile)(void*) = nullptr;
  const char* (*diagnostics)(void*) = nullptr;
  int32_t (*targetCode)(void*, int, SlangBlob**) = nullptr;
  int32_t (*containerCode)(void*, SlangBlob**) = nullptr;
  int (*dependencyCount)(void*) = nullptr;
  const char* (*dependencyPath)(void*, int) = nullptr;
  const char* (*buildTag)() = nullptr;
};

std::unique_ptr<SlangLibrary> SlangLibrary::open(const std::string& slangcDir, std::string* why) {
  std::string path;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(slangcDir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("libslang-compiler.so", 0) == 0 || name == "libslang.so") path = std::max(path, e.path().string());
  }
  if (path.empty()) {
    *why = "no libslang-compiler.so* in '" + slangcDir + "'";
    return nullptr;
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle) {
    const char* e = dlerror();
    *why = "cannot load '" + path + "': " + (e ? e : "unknown error");
    return nullptr;
  }
  auto api = std::make_unique<Api>();
  bool complete = true;
  auto bind = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
    if (!fn) {
      complete = false;
      *why = "'" + path + "' has no " + name;
    }
  };
  bind(api->createSession, "spCreateSession");
  bind(api->destroySession, "spDestroySession");
  bind(api->createRequest, "spCreateCompileRequest");
  bind(api->destroyRequest, "spDestroyCompileRequest");
  bind(api->processArguments, "spProcessCommandLineArguments");
  bind(api->compile, "spCompile");
  bind(api->diagnostics, "spGetDiagnosticOutput");
  bind(api->targetCode, "spGetTargetCodeBlob");
  bind(api->containerCode, "spGetContainerCode");
  bind(api->dependencyCount, "spGetDependencyFileCount");
  bind(api->dependencyPath, "spGetDependencyFilePath");
  bind(api->buildTag, "spGetBuildTagString");
  if (!complete) {
    dlclose(handle);
    return nullptr;
  }
  return std::unique_ptr<SlangLibrary>(new SlangLibrary(handle, std::move(path), std::move(api)));
}

SlangLibrary::SlangLibrary(void* handle, std::string path, std::unique_ptr<Api> api)
    : handle_(handle), path_(std::move(path)), api_(std::move(api)) {
  const char* tag = api_->buildTag();
  version_ = tag ? tag : "";
  if (const char* v = std::getenv("SDGEN_SLANG_SESSION_CREATORS")) creatorLimit_ = std::clamp(std::atoi(v), 0, 64);
}

SlangLibrary::~SlangLibrary() {
  trimIdleSessions();  // every compile has returned its session: the owner outlives its compiles
  dlclose(handle_);
}

void* SlangLibrary::takeSession(double* createdMs) {
  const auto t0 = std::chrono::steady_clock::now();
  {
    std::unique_lock lock(mutex_);
    if (creatorLimit_ > 0) creatorFree_.wait(lock, [&] { return creating_ < creatorLimit_ || !idle_.empty(); });
    if (!idle_.empty()) {  // an idle one (perhaps given back while this thread waited): its wait is what it cost
      void* s = idle_.back();
      idle_.pop_back();
      *createdMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      return s;
    }
    mostCreating_ = std::max(mostCreating_, ++creating_);
  }
  void* s = api_->createSession(nullptr);  // outside the lock: ~0.2 s, and sessions are independent
  {
    std::lock_guard lock(mutex_);
    --creating_;
    ++made_;
    creatorFree_.notify_one();
  }
  *createdMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

SlangLibrary::SessionStats SlangLibrary::sessionStats() const {
  std::lock_guard lock(mutex_);
  return {made_, mostCreating_, creatorLimit_};
}

void SlangLibrary::giveBack(void* session) {
  std::lock_guard lock(mutex_);
  idle_.push_back(session);
  creatorFree_.notify_one();
}

void SlangLibrary::trimIdleSessions() {
  std::vector<void*> sessions;
  {
    std::lock_guard lock(mutex_);
    sessions.swap(idle_);
  }
  for (void* s : sessions) api_->destroySession(s);
}

size_t SlangLibrary::idleSessions() const {
  std::lock_guard lock(mutex_);
  return idle_.size();
}

SlangLibrary::Result SlangLibrary::compile(const std::vector<std::string>& args, Output output) {
  Result result;
  void* session = takeSession(&result.sessionMs);
  if (!session) {
    result.diagnostics = "Slang could not create a session (" + path_ + ")";
    return result;
  }
  void* request = api_->createRequest(session);
  if (!request) {
    giveBack(session);
    result.diagnostics = "Slang could not create a compile request (" + path_ + ")";
    return result;
  }
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  // slangc's `-o x.slang-module` asks for the module container (spGetContainerCode); slangc writes it, the
  // library only keeps it: the path is never written here.
  const std::string modulePath = "sdgen-module.slang-module";
  if (output == Output::Module) {
    argv.push_back("-o");
    argv.push_back(modulePath.c_str());
  }
  const bool parsed = api_->processArguments(request, argv.data(), int(argv.size())) >= 0;
  const bool compiled = parsed && api_->compile(request) >= 0;
  if (const char* d = api_->diagnostics(request)) result.diagnostics = d;
  if (compiled) {
    SlangBlob* blob = nullptr;
    const int32_t got =
        output == Output::Module ? api_->containerCode(request, &blob) : api_->targetCode(request, 0, &blob);
    if (got >= 0 && blob) {
      result.code.assign(static_cast<const char*>(blobData(blob)), blobSize(blob));
      blobRelease(blob);
    }
    const int n = api_->dependencyCount(request);
    for (int i = 0; i < n; ++i)
      if (const char* p = api_->dependencyPath(request, i)) result.deps.emplace_back(p);
    result.ok = !result.code.empty();
  }
  api_->destroyRequest(request);
  giveBack(session);
  return result;
}

}  // namespace sdgen
