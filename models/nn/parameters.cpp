#include "models/nn/parameters.h"

#include "engine/error.h"
#include "engine/tensor_io.h"
#include "ops/conv2d_plan.h"
#include "ops/linear_geglu.h"

namespace sdgen::nn {

graph::Value DeviceTensor::value() const {
  graph::TensorView v = view;
  return {v.shape, {}, [v](const graph::Resolver&) { return graph::buffer(v); }, 0};
}

const ops::Conv2dWeights& ParameterStore::conv(const models::ScopedWeights& w, int cin, int cout,
                                               const ops::Conv2dParams& p, bool bias) {
  std::vector<float> weight = w.read("weight", {cout, cin, p.kh, p.kw});
  std::vector<float> b;
  if (bias) b = w.read("bias", {cout});
  ops::Conv2dWeightsOptions o;
  o.storage = storage_;
  o.name = w.name("weight");
  // On tensor cores in fp16 the coop algorithm runs these convs (docs/dispatch-conv.md): Winograd's fp32
  // filters, 8x the fp16 checkpoint's bytes for a 3x3 conv, would never be read.
  o.packWinograd = !ops::coopConvChosen(ctx_.info(), storage_, cin, cout);
  convs_.push_back(std::make_unique<ops::Conv2dWeights>(ctx_, cout, cin, p, weight, b, o));
  bytes_ += weight.size() * dtypeSize(storage_);
  return *convs_.back();
}

std::vector<float> ParameterStore::readLinear(const models::ScopedWeights& w, int64_t k, int64_t n) const {
  std::vector<int64_t> shape = w.shape("weight");
  if (shape.size() == 4 && shape[2] == 1 && shape[3] == 1) return w.read("weight", {n, k, 1, 1});
  return w.read("weight", {n, k});
}

const ops::LinearWeights& ParameterStore::linear(const models::ScopedWeights& w, int64_t k, int64_t n, bool bias) {
  std::vector<float> weight = readLinear(w, k, n);
  std::vector<float> b;
  if (bias) b = w.read("bias", {n});
  linears_.push_back(std::make_unique<ops::LinearWeights>(ctx_, weight, n, k, b, storage_, w.name("weight")));
  bytes_ += weight.size() * dtypeSize(storage_);
  return *linears_.back();
}

const ops::LinearWeights& ParameterStore::linearGeglu(const models::ScopedWeights& w, int64_t k, int64_t inner,
                                                      bool& fused) {
  fused = ops::gegluEpilogueChosen(ctx_.info(), storage_) && inner % 4 == 0;
  if (!fused) return linear(w, k, 2 * inner);
  std::vector<float> weight = readLinear(w, k, 2 * inner);
  std::vector<float> b = w.read("bias", {2 * inner});
  ops::interleaveGegluRows(weight, b, inner, k);
  linears_.push_back(std::make_unique<ops::LinearWeights>(ctx_, weight, 2 * inner, k, b, storage_,
                                                          w.name("weight") + " (GEGLU interleaved)"));
  bytes_ += weight.size() * dtypeSize(storage_);
  return *linears_.back();
}

const ops::LinearWeights& ParameterStore::linearConcat(const std::vector<models::ScopedWeights>& parts, int64_t k,
                                                       const std::vector<int64_t>& n, bool bias) {
  if (parts.size() != n.size() || parts.empty()) throw Error("linearConcat: one output width per part");
  std::vector<float> weight, b;
  int64_t total = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::vector<float> wi = readLinear(parts[i], k, n[i]);
    weight.insert(weight.end(), wi.begin(), wi.end());  // rows of [n_i, k] stacked: outputs side by side
    if (bias) {
      std::vector<float> bi = parts[i].read("bias", {n[i]});
      b.insert(b.end(), bi.begin(), bi.end());
    }
    total += n[i];
  }
  linears_.push_back(
      std::make_unique<ops::LinearWeights>(ctx_, weight, total, k, b, storage_, parts.front().name("weight") + " (+" +
                                                                                    std::to_string(parts.size() - 1) +
                                                                                    " fused)"));
  bytes_ += weight.size() * dtypeSize(storage_);
  return *linears_.back();
}

const DeviceTensor& ParameterStore::constants(const std::vector<float>& values, const graph::Shape& shape,
                                              const std::string& name, DType dtype) {
  if (static_cast<int64_t>(values.size()) != graph::numel(shape))
    throw Error(name + ": " + std::to_string(values.size()) + " values for shape " + graph::shapeString(shape));
  auto t = std::make_unique<DeviceTensor>();
  t->memory = uploadFloats(ctx_, values, dtype, name);
  t->view = graph::view(t->memory, dtype, shape);
  bytes_ += values.size() * dtypeSize(dtype);
  tensors_.push_back(std::move(t));
  return *tensors_.back();
}

const DeviceTensor& ParameterStore::tensor(const models::ScopedWeights& w, const std::string& leaf,
                                           const graph::Shape& shape, DType dtype) {
  return constants(w.read(leaf, std::span<const int64_t>(shape.data(), shape.size())), shape, w.name(leaf), dtype);
}

}  // namespace sdgen::nn
