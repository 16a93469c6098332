// The cuDNN reference plugin (see cudnn_reference_abi.h): times cuDNN's fastest forward convolution for one
// problem. Built only when CMake finds the CUDA toolkit and cuDNN; loaded by sdgen at run time (dlopen).
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/reference/cudnn_reference_abi.h"

namespace {

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Failure(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw Failure(std::string(what) + ": " + cudnnGetErrorString(s));
}

void setError(char* error, size_t size, const std::string& message) {
  if (!error || !size) return;
  std::snprintf(error, size, "%s", message.c_str());
}

// The plugin's one handle (init/shutdown bracket its use; the plugin is a process-wide resource by nature).
struct Session {
  cudnnHandle_t handle = nullptr;
  std::string device;
};
Session* session = nullptr;

template <class T>
struct DeviceBuffer {
  T* ptr = nullptr;
  explicit DeviceBuffer(size_t count) { check(cudaMalloc(&ptr, std::max<size_t>(count, 1) * sizeof(T)), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// Descriptors, released on every path.
struct Descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  Descriptors() {
    check(cudnnCreateTensorDescriptor(&x), "cudnnCreateTensorDescriptor");
    check(cudnnCreateTensorDescriptor(&y), "cudnnCreateTensorDescriptor");
    check(cudnnCreateFilterDescriptor(&w), "cudnnCreateFilterDescriptor");
    check(cudnnCreateConvolutionDescriptor(&conv), "cudnnCreateConvolutionDescriptor");
  }
  ~Descriptors() {
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyConvolutionDescriptor(conv);
  }
};

struct Events {
  cudaEvent_t a = nullptr, b = nullptr;
  Events() {
    check(cudaEventCreate(&a), "cudaEventCreate");
    check(cudaEventCreate(&b), "cudaEventCreate");
  }
  ~Events() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
};

const char* algorithmName(cudnnConvolutionFwdAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "implicit_gemm";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "implicit_precomp_gemm";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "gemm";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "direct";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "fft";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "fft_tiling";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "winograd";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "winograd_nonfused";
    default: return "unknown";
  }
}

// Host fp32 -> device buffer of the tensor type.
void upload(const std::vector<float>& host, void* device, bool fp16) {
  if (!fp16) {
    check(cudaMemcpy(device, host.data(), host.size() * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    return;
  }
  std::vector<__half> h(host.size());
  for (size_t i = 0; i < host.size(); ++i) h[i] = __float2half_rn(host[i]);
  check(cudaMemcpy(device, h.data(), h.size() * 2, cudaMemcpyHostToDevice), "cudaMemcpy");
}

void download(const void* device, size_t count, bool fp16, float* host) {
  if (!fp16) {
    check(cudaMemcpy(host, device, count * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
    return;
  }
  std::vector<__half> h(count);
  check(cudaMemcpy(h.data(), device, count * 2, cudaMemcpyDeviceToHost), "cudaMemcpy");
  for (size_t i = 0; i < count; ++i) host[i] = __half2float(h[i]);
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double pos = q * double(v.size() - 1);
  size_t lo = size_t(pos), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

void runConv(const SdgenCudnnConv& c, SdgenCudnnTiming& t) {
  if (!session) throw Failure("sdgen_cudnn_reference_init was not called");
  if (c.n <= 0 || c.cin <= 0 || c.cout <= 0 || c.h <= 0 || c.w <= 0 || c.k <= 0 || c.stride <= 0 || c.pad < 0 ||
      c.reps < 1 || c.warmup < 0)
    throw Failure("invalid convolution problem or repetition counts");
  const bool fp16 = c.fp16 != 0;
  const cudnnDataType_t dt = fp16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  const int ho = (c.h + 2 * c.pad - c.k) / c.stride + 1, wo = (c.w + 2 * c.pad - c.k) / c.stride + 1;
  if (ho <= 0 || wo <= 0) throw Failure("the output would be empty");
  const size_t inCount = size_t(c.n) * c.h * c.w * c.cin, wCount = size_t(c.cout) * c.cin * c.k * c.k,
               outCount = size_t(c.n) * ho * wo * c.cout;

  Descriptors d;
  check(cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NHWC, dt, c.n, c.cin, c.h, c.w), "input descriptor");
  check(cudnnSetFilter4dDescriptor(d.w, dt, CUDNN_TENSOR_NHWC, c.cout, c.cin, c.k, c.k), "filter descriptor");
  check(cudnnSetConvolution2dDescriptor(d.conv, c.pad, c.pad, c.stride, c.stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                        CUDNN_DATA_FLOAT),
        "convolution descriptor");
  // fp16: tensor cores with fp32 accumulation; fp32: plain FMA (TF32 off, as the anchors were measured).
  check(cudnnSetConvolutionMathType(d.conv, fp16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH), "math type");
  int on = 0, oc = 0, oh = 0, ow = 0;
  check(cudnnGetConvolution2dForwardOutputDim(d.conv, d.x, d.w, &on, &oc, &oh, &ow), "output dimensions");
  if (on != c.n || oc != c.cout || oh != ho || ow != wo) throw Failure("cuDNN's output shape differs from sdgen's");
  check(cudnnSetTensor4dDescriptor(d.y, CUDNN_TENSOR_NHWC, dt, c.n, c.cout, ho, wo), "output descriptor");

  // Filter [Cout, Cin, k, k] -> KRSC (NHWC filter layout).
  std::vector<float> input(c.input, c.input + inCount), filter(wCount);
  for (int co = 0; co < c.cout; ++co)
    for (int ci = 0; ci < c.cin; ++ci)
      for (int ky = 0; ky < c.k; ++ky)
        for (int kx = 0; kx < c.k; ++kx)
          filter[((size_t(co) * c.k + ky) * c.k + kx) * c.cin + ci] = c.weights[((size_t(co) * c.cin + ci) * c.k + ky) * c.k + kx];
  const size_t elem = fp16 ? 2 : 4;
  DeviceBuffer<unsigned char> x(inCount * elem), w(wCount * elem), y(outCount * elem);
  upload(input, x.ptr, fp16);
  upload(filter, w.ptr, fp16);

  // The fastest algorithm, measured by cuDNN on these buffers (workspace up to 1 GiB).
  size_t freeBytes = 0, totalBytes = 0;
  check(cudaMemGetInfo(&freeBytes, &totalBytes), "cudaMemGetInfo");
  const size_t workspaceLimit = std::min<size_t>(size_t(1) << 30, freeBytes / 2);
  DeviceBuffer<unsigned char> findWorkspace(workspaceLimit);
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  const float one = 1.f, zero = 0.f;
  check(cudnnFindConvolutionForwardAlgorithmEx(session->handle, d.x, x.ptr, d.w, w.ptr, d.conv, d.y, y.ptr,
                                               CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf, findWorkspace.ptr,
                                               workspaceLimit),
        "cudnnFindConvolutionForwardAlgorithmEx");
  const cudnnConvolutionFwdAlgoPerf_t* best = nullptr;
  for (int i = 0; i < found && !best; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= workspaceLimit) best = &perf[i];
  if (!best) throw Failure("cuDNN found no forward algorithm for this problem");
  check(cudnnSetConvolutionMathType(d.conv, best->mathType), "math type of the chosen algorithm");
  std::snprintf(t.algorithm, sizeof t.algorithm, "%s%s", algorithmName(best->algo),
                best->mathType == CUDNN_TENSOR_OP_MATH ? " (tensor ops)" : "");

  auto forward = [&] {
    check(cudnnConvolutionForward(session->handle, &one, d.x, x.ptr, d.w, w.ptr, d.conv, best->algo,
                                  findWorkspace.ptr, best->memory, &zero, d.y, y.ptr),
          "cudnnConvolutionForward");
  };
  for (int i = 0; i < c.warmup; ++i) forward();
  check(cudaDeviceSynchronize(), "warm-up");
  Events ev;
  std::vector<double> ms;
  for (int i = 0; i < c.reps; ++i) {
    check(cudaEventRecord(ev.a), "cudaEventRecord");
    forward();
    check(cudaEventRecord(ev.b), "cudaEventRecord");
    check(cudaEventSynchronize(ev.b), "cudaEventSynchronize");
    float elapsed = 0;
    check(cudaEventElapsedTime(&elapsed, ev.a, ev.b), "cudaEventElapsedTime");
    ms.push_back(elapsed);
  }
  double sum = 0, sq = 0;
  for (double v : ms) sum += v;
  const double mean = sum / double(ms.size());
  for (double v : ms) sq += (v - mean) * (v - mean);
  t.median_ms = percentile(ms, 0.5);
  t.mean_ms = mean;
  t.std_ms = std::sqrt(sq / double(ms.size()));
  t.min_ms = *std::min_element(ms.begin(), ms.end());
  t.p10_ms = percentile(ms, 0.1);
  t.p90_ms = percentile(ms, 0.9);
  std::snprintf(t.device, sizeof t.device, "%s", session->device.c_str());

  if (c.output) {
    download(y.ptr, outCount, fp16, c.output);
    if (c.bias)
      for (size_t i = 0; i < outCount; ++i) c.output[i] += c.bias[i % size_t(c.cout)];
  }
}

}  // namespace

extern "C" {

int sdgen_cudnn_reference_abi(void) { return SDGEN_CUDNN_REFERENCE_ABI; }

int sdgen_cudnn_reference_init(char* error, size_t errorSize) {
  try {
    if (session) return 0;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0)
      throw Failure(std::string("no CUDA device (") + (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") + ")");
    check(cudaSetDevice(0), "cudaSetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    auto s = new Session;
    if (cudnnStatus_t st = cudnnCreate(&s->handle); st != CUDNN_STATUS_SUCCESS) {
      delete s;
      check(st, "cudnnCreate");
    }
    const size_t v = cudnnGetVersion();
    s->device = std::string(prop.name) + ", cuDNN " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) +
                "." + std::to_string(v % 100);
    session = s;
    return 0;
  } catch (const std::exception& e) {
    setError(error, errorSize, e.what());
    return 1;
  }
}

int sdgen_cudnn_reference_conv(const SdgenCudnnConv* conv, SdgenCudnnTiming* timing, char* error, size_t errorSize) {
  try {
    if (!conv || !timing) throw Failure("null argument");
    *timing = SdgenCudnnTiming{};
    runConv(*conv, *timing);
    return 0;
  } catch (const std::exception& e) {
    setError(error, errorSize, e.what());
    return 1;
  }
}

void sdgen_cudnn_reference_shutdown(void) {
  if (!session) return;
  cudnnDestroy(session->handle);
  delete session;
  session = nullptr;
}

}  // extern "C"
