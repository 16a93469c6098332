#pragma once
/* The C interface of the optional cuDNN reference plugin (libsdgen_cudnn_reference.so, app/reference/). sdgen
 * itself never links CUDA: `sdgen --bench-conv2d --reference cudnn` dlopens the plugin and calls these functions.
 * Every tensor crosses the interface as fp32 host memory in sdgen's layouts; the plugin converts to the
 * precision asked for, runs cuDNN on NHWC tensors (channels_last, as the PyTorch anchors were measured) and
 * returns fp32 results. Functions return 0 on success, else non-zero with a message in `error`. */
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SDGEN_CUDNN_REFERENCE_ABI 1

typedef struct SdgenCudnnConv {
  int n, cin, cout, h, w, k, stride, pad; /* square kernel k x k, zero padding `pad` on every side */
  int fp16;                               /* 1: fp16 tensors, fp32 accumulation (tensor cores); 0: fp32, TF32 off */
  int warmup, reps;                       /* untimed, then timed forward passes (reps >= 1) */
  const float* input;                     /* [n, h, w, cin] */
  const float* weights;                   /* [cout, cin, k, k] (PyTorch layout) */
  const float* bias;                      /* [cout]; added on the host to `output`, not timed (cuDNN's forward has none) */
  float* output;                          /* [n, ho, wo, cout], written from the last timed pass */
} SdgenCudnnConv;

typedef struct SdgenCudnnTiming {
  double median_ms, mean_ms, std_ms, min_ms, p10_ms, p90_ms; /* per forward pass, CUDA events */
  char algorithm[64];                                        /* cuDNN's fastest forward algorithm, by name */
  char device[128];                                          /* the CUDA device and the cuDNN version */
} SdgenCudnnTiming;

typedef int (*SdgenCudnnAbiFn)(void);
typedef int (*SdgenCudnnInitFn)(char* error, size_t errorSize);
typedef int (*SdgenCudnnConvFn)(const SdgenCudnnConv* conv, SdgenCudnnTiming* timing, char* error, size_t errorSize);
typedef void (*SdgenCudnnShutdownFn)(void);

int sdgen_cudnn_reference_abi(void);                     /* SDGEN_CUDNN_REFERENCE_ABI */
int sdgen_cudnn_reference_init(char* error, size_t errorSize); /* picks CUDA device 0, creates the cuDNN handle */
int sdgen_cudnn_reference_conv(const SdgenCudnnConv* conv, SdgenCudnnTiming* timing, char* error, size_t errorSize);
void sdgen_cudnn_reference_shutdown(void);

#ifdef __cplusplus
}
#endif
