#pragma once
// diffusers' AutoencoderKL decoder: post_quant_conv (1x1: a product over channels), conv_in, the mid block
// (ResNet, single-head self-attention with its own group norm, ResNet), up blocks of ResNets with nearest
// upsampling read by the following conv, then silu(group norm) read by conv_out. Epsilon 1e-6 throughout.
#include <optional>
#include <vector>

#include "graph/graph.h"
#include "models/config/model_config.h"
#include "models/networks/resnet_block.h"
#include "models/nn/layers.h"
#include "models/weight_source.h"

namespace sdgen::networks {

// The VAE's single-head spatial self-attention (mid block).
class SpatialSelfAttention {
 public:
  SpatialSelfAttention() = default;
  SpatialSelfAttention(nn::ParameterStore& p, const models::ScopedWeights& w, int channels, int groups);
  graph::Value operator()(nn::Builder& b, const graph::Value& x, const std::string& name) const;

 private:
  int channels_ = 0, groups_ = 32;
  NormWeights norm_;
  const ops::LinearWeights *qkv_ = nullptr, *out_ = nullptr;
};

// Throws naming the field unless every block width is positive and divisible by norm_num_groups.
void checkVaeChannels(const models::VaeConfig& config);

class VaeDecoder {
 public:
  VaeDecoder(nn::ParameterStore& params, const models::VaeConfig& config, const models::WeightSource& weights);

  const models::VaeConfig& config() const { return config_; }
  int upscale() const { return 1 << (static_cast<int>(config_.blockOutChannels.size()) - 1); }

  // latents [B, h, w, latentChannels] NHWC, already divided by the scaling factor -> writes [B, h*s, w*s, out].
  void build(nn::Builder& b, const graph::Value& latents, graph::TensorId out) const;

 private:
  models::VaeConfig config_;
  const ops::LinearWeights* postQuant_ = nullptr;
  const ops::Conv2dWeights *convIn_ = nullptr, *convOut_ = nullptr;
  ResnetBlock mid1_, mid2_;
  std::optional<SpatialSelfAttention> midAttention_;
  struct Level {
    std::vector<ResnetBlock> resnets;
    const ops::Conv2dWeights* upsample = nullptr;
  };
  std::vector<Level> up_;
  NormWeights normOut_;
};

}  // namespace sdgen::networks
