#pragma once
// Device-resident weights of a network, loaded from a WeightSource at build time and owned here: the recorded
// command sequences address them, so they live as long as the network. Each loader reads one tensor at a time
// (fp32 on the host, converted to the storage dtype on upload) and checks its shape against the architecture.
#include <memory>
#include <string>
#include <vector>

#include "engine/context.h"
#include "engine/dtype.h"
#include "graph/graph.h"
#include "models/weight_source.h"
#include "ops/conv2d_weights.h"
#include "ops/linear_weights.h"

namespace sdgen::nn {

// A device vector (norm scale/shift, embedding table, ...) and how to read it in an expression.
struct DeviceTensor {
  Allocation memory;
  graph::TensorView view;
  graph::Value value() const;  // a graph value with no graph tensor behind it (constant during a run)
};

class ParameterStore {
 public:
  ParameterStore(Context& ctx, DType storage) : ctx_(ctx), storage_(storage) {}
  ParameterStore(const ParameterStore&) = delete;
  ParameterStore& operator=(const ParameterStore&) = delete;

  Context& context() const { return ctx_; }
  DType storage() const { return storage_; }

  // "name.weight" [cout, cin, kh, kw] and "name.bias" [cout] (optional when !bias).
  const ops::Conv2dWeights& conv(const models::ScopedWeights& w, int cin, int cout, const ops::Conv2dParams& p,
                                 bool bias = true);
  // "name.weight" [n, k] (or a 1x1 conv [n, k, 1, 1], which on NHWC activations is the same product) and "name.bias".
  const ops::LinearWeights& linear(const models::ScopedWeights& w, int64_t k, int64_t n, bool bias = true);
  // A GEGLU projection "name.weight" [2 inner, k]: with its halves interleaved for the fused epilogue where
  // ops::gegluEpilogueChosen (then `fused` is set), as stored otherwise.
  const ops::LinearWeights& linearGeglu(const models::ScopedWeights& w, int64_t k, int64_t inner, bool& fused);
  // Several layers with the same input fused into one weight matrix: their outputs side by side, in order.
  const ops::LinearWeights& linearConcat(const std::vector<models::ScopedWeights>& parts, int64_t k,
                                         const std::vector<int64_t>& n, bool bias);
  // A tensor as stored (e.g. "norm.weight" [C]); fp32 always for vectors of norms (they are tiny).
  const DeviceTensor& tensor(const models::ScopedWeights& w, const std::string& leaf, const graph::Shape& shape,
                             DType dtype = DType::F32);
  // A tensor of given values (not from the weight source).
  const DeviceTensor& constants(const std::vector<float>& values, const graph::Shape& shape, const std::string& name,
                                DType dtype = DType::F32);

  uint64_t bytes() const { return bytes_; }

 private:
  std::vector<float> readLinear(const models::ScopedWeights& w, int64_t k, int64_t n) const;
  Context& ctx_;
  DType storage_;
  uint64_t bytes_ = 0;
  std::vector<std::unique_ptr<ops::Conv2dWeights>> convs_;
  std::vector<std::unique_ptr<ops::LinearWeights>> linears_;
  std::vector<std::unique_ptr<DeviceTensor>> tensors_;
};

}  // namespace sdgen::nn
