#pragma once
// diffusers' AutoencoderKL encoder (for image to image): conv_in, down blocks of ResNets each followed (but the
// last) by a stride-2 3x3 conv over the image padded by one zero row and column at the bottom and right, the
// mid block (ResNet, single-head self-attention, ResNet), silu(group norm) read by conv_out, then quant_conv
// (1x1). The result is the diagonal Gaussian's moments: mean and log-variance. Epsilon 1e-6 throughout.
#include <optional>
#include <vector>

#include "graph/graph.h"
#include "models/config/model_config.h"
#include "models/networks/resnet_block.h"
#include "models/networks/vae_decoder.h"
#include "models/nn/layers.h"
#include "models/weight_source.h"

namespace sdgen::networks {

class VaeEncoder {
 public:
  VaeEncoder(nn::ParameterStore& params, const models::VaeConfig& config, const models::WeightSource& weights);

  const models::VaeConfig& config() const { return config_; }
  int downscale() const { return 1 << (static_cast<int>(config_.blockOutChannels.size()) - 1); }

  // image [B, H, W, inChannels] NHWC in [-1, 1], H and W multiples of downscale() -> writes the moments
  // [B, H/s, W/s, 2 * latentChannels]: channels [0, C) the mean, [C, 2C) the log-variance (not yet clamped to
  // [-30, 20] as diffusers' DiagonalGaussianDistribution does). Latents for the UNet: mean * scaling factor.
  void build(nn::Builder& b, const graph::Value& image, graph::TensorId moments) const;

 private:
  models::VaeConfig config_;
  const ops::Conv2dWeights *convIn_ = nullptr, *convOut_ = nullptr;
  struct Level {
    std::vector<ResnetBlock> resnets;
    const ops::Conv2dWeights* downsample = nullptr;
  };
  std::vector<Level> down_;
  ResnetBlock mid1_, mid2_;
  std::optional<SpatialSelfAttention> midAttention_;
  NormWeights normOut_;
  const ops::LinearWeights* quant_ = nullptr;
};

}  // namespace sdgen::networks
