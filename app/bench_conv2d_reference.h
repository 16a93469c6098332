#pragma once
// The cuDNN reference of `sdgen --bench-conv2d --reference cudnn`: loads the optional plugin
// libsdgen_cudnn_reference.so (app/reference/) at run time, so sdgen never links CUDA. The plugin is looked for
// in SDGEN_CUDNN_PLUGIN (a path), else next to the sdgen executable.
#include <memory>
#include <string>
#include <vector>

namespace sdgen::app {

struct ReferenceConvProblem {
  int n = 0, cin = 0, cout = 0, h = 0, w = 0, k = 0, stride = 1, pad = 0;
  bool fp16 = false;
  int warmup = 3, reps = 20;
};

struct ReferenceTiming {
  double medianMs = 0, meanMs = 0, stdMs = 0, minMs = 0, p10Ms = 0, p90Ms = 0;
  std::string algorithm;
  std::vector<float> output;  // NHWC, bias included
};

class CudnnReference {
 public:
  // Loads the plugin and opens CUDA device 0. Throws sdgen::Error starting "cuDNN reference unavailable: " with
  // what is missing (the plugin file, a symbol, the CUDA device).
  static std::unique_ptr<CudnnReference> open();
  ~CudnnReference();
  CudnnReference(const CudnnReference&) = delete;
  CudnnReference& operator=(const CudnnReference&) = delete;

  const std::string& device() const { return device_; }  // known after the first run()
  const std::string& pluginPath() const { return path_; }

  // input [n, h, w, cin], weights [cout, cin, k, k], bias [cout] (fp32 host values, already rounded to the
  // precision). Throws sdgen::Error with cuDNN's message.
  ReferenceTiming run(const ReferenceConvProblem& p, const std::vector<float>& input, const std::vector<float>& weights,
                      const std::vector<float>& bias);

  // Where the plugin is looked for: SDGEN_CUDNN_PLUGIN, else next to the running executable.
  static std::string pluginLocation();

 private:
  struct Api;
  CudnnReference(void* handle, std::string path, std::unique_ptr<Api> api);
  void* handle_;
  std::string path_, device_;
  std::unique_ptr<Api> api_;
};

}  // namespace sdgen::app
