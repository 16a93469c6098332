#pragma once
// The weights of a linear layer y = x W^T + b, packed once at load time into the layout the GEMM kernel
// (shaders/linear/gemm.slang, PackedB) reads: W^T as [K][NP], NP = N rounded up to a multiple of 8 with zero
// columns (16-byte fp16 rows for the tensor-core kernel), in fp32 or fp16 storage; the bias (if any) as fp32 [NP]. Rows of 4 aligned columns make every
// weight load one aligned 16-byte (fp32) or 8-byte (fp16) access with a single bounds check.
#include <cstdint>
#include <span>
#include <string>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "engine/dtype.h"

namespace sdgen::ops {

class LinearWeights {
 public:
  // `weight` is [N, K] row-major (torch nn.Linear layout: N outputs, K inputs); `bias` is empty or N values.
  // Packed on the host (the reference for the device packing, and for tests and benches that make weights).
  LinearWeights(Context& ctx, std::span<const float> weight, int64_t n, int64_t k, std::span<const float> bias,
                DType storage, const std::string& name = "linear");
  // Memory only, contents undefined: a loader fills it on the device (ops/weight_pack.h, nn::WeightStream).
  static LinearWeights allocate(Context& ctx, int64_t n, int64_t k, bool bias, DType storage,
                                const std::string& name = "linear");

  int64_t outFeatures() const { return n_; }
  int64_t inFeatures() const { return k_; }
  int64_t paddedOut() const { return np_; }  // NP: the packed row length
  DType storage() const { return storage_; }
  bool hasBias() const { return static_cast<bool>(bias_); }
  const std::string& name() const { return name_; }

  VkDeviceAddress weightAddress() const { return weight_.address(); }
  const Allocation& weightMemory() const { return weight_; }  // [K][NP] in storage()
  const Allocation& biasMemory() const { return bias_; }      // fp32 [NP]; empty when !hasBias()
  VkDeviceAddress biasAddress() const { return bias_ ? bias_.address() : 0; }
  // The memory a kernel reading these weights touches (for hazard tracking).
  std::vector<MemRange> ranges() const;

 private:
  LinearWeights(Context& ctx, int64_t n, int64_t k, bool bias, DType storage, const std::string& name);
  int64_t n_ = 0, k_ = 0, np_ = 0;
  DType storage_ = DType::F32;
  std::string name_;
  Allocation weight_, bias_;
};

}  // namespace sdgen::ops
