#pragma once
// diffusers' ResnetBlock2D (UNet and VAE): silu(norm1(x)) -> conv1 (+ time projection) -> silu(norm2) -> conv2,
// plus the shortcut (identity, or a 1x1 conv when the width changes). Four launches: two statistics, two
// convs; with a width change a fifth, the shortcut product, whose result conv2 adds in its epilogue. The
// shortcut is added to the graph right after conv1, on the scratch's side() memory, so that its launches run
// between the same barriers as conv1's (docs/architecture.md, the executor's order).
#include <optional>
#include <string>

#include "models/nn/layers.h"
#include "models/nn/parameters.h"
#include "models/weight_source.h"

namespace sdgen::networks {

struct NormWeights {
  const nn::DeviceTensor *gamma = nullptr, *beta = nullptr;
  static NormWeights load(nn::ParameterStore& p, const models::ScopedWeights& w, int64_t channels);
};

class ResnetBlock {
 public:
  ResnetBlock() = default;
  ResnetBlock(nn::ParameterStore& p, const models::ScopedWeights& w, int cin, int cout, int groups, float eps);

  int cin() const { return cin_; }
  int cout() const { return cout_; }
  // x: [B, H, W, cin] (any value, e.g. a skip concatenation); `time`, when given, is added to conv1's output
  // (an epilogue producing [B, 1, 1, cout] from conv1's result).
  graph::Value operator()(nn::Builder& b, const graph::Value& x, const nn::Epilogue& time,
                          const std::string& name) const;

 private:
  int cin_ = 0, cout_ = 0, groups_ = 32;
  float eps_ = 1e-5f;
  NormWeights norm1_, norm2_;
  const ops::Conv2dWeights *conv1_ = nullptr, *conv2_ = nullptr;
  const ops::LinearWeights* shortcut_ = nullptr;
};

}  // namespace sdgen::networks
