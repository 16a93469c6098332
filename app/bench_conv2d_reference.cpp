#include "app/bench_conv2d_reference.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include "app/reference/cudnn_reference_abi.h"
#include "engine/error.h"

namespace sdgen::app {

namespace {
constexpr const char* kPluginFile = "libsdgen_cudnn_reference.so";
constexpr const char* kUnavailable = "cuDNN reference unavailable: ";
}  // namespace

struct CudnnReference::Api {
  SdgenCudnnInitFn init = nullptr;
  SdgenCudnnConvFn conv = nullptr;
  SdgenCudnnShutdownFn shutdown = nullptr;
};

std::string CudnnReference::pluginLocation() {
  if (const char* env = std::getenv("SDGEN_CUDNN_PLUGIN"); env && *env) return env;
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return kPluginFile;
  return (exe.parent_path() / kPluginFile).string();
}

std::unique_ptr<CudnnReference> CudnnReference::open() {
  const std::string path = pluginLocation();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw Error(std::string(kUnavailable) + "no plugin at '" + path +
                "' (it is built when CMake finds the CUDA toolkit and cuDNN; SDGEN_CUDNN_PLUGIN names another path)");
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    throw Error(std::string(kUnavailable) + "cannot load '" + path + "': " + (why ? why : "unknown error") +
                " (are the CUDA runtime and cuDNN libraries on the library path?)");
  }
  auto fail = [&](const std::string& why) {
    dlclose(handle);
    throw Error(std::string(kUnavailable) + "'" + path + "': " + why);
  };
  auto abi = reinterpret_cast<SdgenCudnnAbiFn>(dlsym(handle, "sdgen_cudnn_reference_abi"));
  auto api = std::make_unique<Api>();
  api->init = reinterpret_cast<SdgenCudnnInitFn>(dlsym(handle, "sdgen_cudnn_reference_init"));
  api->conv = reinterpret_cast<SdgenCudnnConvFn>(dlsym(handle, "sdgen_cudnn_reference_conv"));
  api->shutdown = reinterpret_cast<SdgenCudnnShutdownFn>(dlsym(handle, "sdgen_cudnn_reference_shutdown"));
  if (!abi || !api->init || !api->conv || !api->shutdown) fail("not an sdgen cuDNN reference plugin (missing symbols)");
  if (abi() != SDGEN_CUDNN_REFERENCE_ABI)
    fail("plugin interface version " + std::to_string(abi()) + ", sdgen expects " +
         std::to_string(SDGEN_CUDNN_REFERENCE_ABI) + " (rebuild the plugin)");
  char error[512] = {};
  if (api->init(error, sizeof error) != 0) fail(error);
  return std::unique_ptr<CudnnReference>(new CudnnReference(handle, path, std::move(api)));
}

CudnnReference::CudnnReference(void* handle, std::string path, std::unique_ptr<Api> api)
    : handle_(handle), path_(std::move(path)), api_(std::move(api)) {}

CudnnReference::~CudnnReference() {
  api_->shutdown();
  dlclose(handle_);
}

ReferenceTiming CudnnReference::run(const ReferenceConvProblem& p, const std::vector<float>& input,
                                    const std::vector<float>& weights, const std::vector<float>& bias) {
  const int ho = (p.h + 2 * p.pad - p.k) / p.stride + 1, wo = (p.w + 2 * p.pad - p.k) / p.stride + 1;
  if (input.size() != size_t(p.n) * p.h * p.w * p.cin || weights.size() != size_t(p.cout) * p.cin * p.k * p.k ||
      bias.size() != size_t(p.cout) || ho <= 0 || wo <= 0)
    throw Error("cuDNN reference: host buffers do not match the problem");
  ReferenceTiming t;
  t.output.resize(size_t(p.n) * ho * wo * p.cout);
  SdgenCudnnConv c{p.n, p.cin, p.cout, p.h, p.w, p.k, p.stride, p.pad, p.fp16 ? 1 : 0, p.warmup, p.reps,
                   input.data(), weights.data(), bias.data(), t.output.data()};
  SdgenCudnnTiming timing{};
  char error[512] = {};
  if (api_->conv(&c, &timing, error, sizeof error) != 0) throw Error(std::string("cuDNN reference: ") + error);
  t.medianMs = timing.median_ms, t.meanMs = timing.mean_ms, t.stdMs = timing.std_ms, t.minMs = timing.min_ms;
  t.p10Ms = timing.p10_ms, t.p90Ms = timing.p90_ms;
  t.algorithm = timing.algorithm;
  device_ = timing.device;
  return t;
}

}  // namespace sdgen::app
