#pragma once
// TAESD, diffusers' AutoencoderTiny (models/formats/taesd_files.h, docs/taesd.md), from the graph's ops: 3x3
// convolutions whose epilogues carry the ReLUs and the blocks' residual adds, nearest 2x upsampling read by the
// following convolution, and the input/output scalings as lazy elementwise maps that fold into the first and
// last convolutions.
//   decoder: x = tanh(z / 3) * 3; ReLU(conv(x)); per stage: blocks, then [upsample 2x, conv without bias] except
//            after the last stage, whose conv (with bias) writes the image; image = out * 2 - 1 (not clamped).
//   encoder: x = (image + 1) / 2; per stage: conv (the first from the image, the others stride 2 without bias),
//            blocks; conv to the latents (no distribution: nothing is sampled).
//   block:   ReLU(conv(ReLU(conv(ReLU(conv(x))))) + x).
#include <vector>

#include "graph/graph.h"
#include "models/formats/taesd_files.h"
#include "models/nn/layers.h"
#include "models/nn/parameters.h"
#include "models/weight_source.h"

namespace sdgen::networks {

// One AutoencoderTinyBlock: three 3x3 convs with bias, ReLUs between, ReLU(last + x).
class TaesdBlock {
 public:
  TaesdBlock(nn::ParameterStore& p, const models::ScopedWeights& w, int channels);
  graph::Value operator()(nn::Builder& b, const graph::Value& x, const std::string& name) const;

 private:
  const ops::Conv2dWeights* convs_[3] = {};
};

class TaesdDecoder {
 public:
  // Throws naming the file and tensor when one is missing or mis-shaped; loads every weight (a transaction).
  TaesdDecoder(nn::ParameterStore& params, const models::TaesdConfig& config, const models::WeightSource& weights);

  const models::TaesdConfig& config() const { return config_; }
  int upscale() const { return config_.upscale(); }

  // latents [1, h, w, latentChannels] NHWC as given to AutoencoderTiny.decode (already / scaling factor) ->
  // writes [1, h*s, w*s, outChannels], in [-1, 1] before the pipeline's clamp.
  void build(nn::Builder& b, const graph::Value& latents, graph::TensorId out) const;

 private:
  models::TaesdConfig config_;
  const ops::Conv2dWeights* convIn_ = nullptr;
  struct Stage {
    std::vector<TaesdBlock> blocks;
    const ops::Conv2dWeights* conv = nullptr;  // after the upsampling; the output conv for the last stage
  };
  std::vector<Stage> stages_;
};

class TaesdEncoder {
 public:
  TaesdEncoder(nn::ParameterStore& params, const models::TaesdConfig& config, const models::WeightSource& weights);

  const models::TaesdConfig& config() const { return config_; }
  int downscale() const { return config_.downscale(); }

  // image [1, H, W, inChannels] NHWC in [-1, 1], H and W multiples of downscale() -> writes the latents
  // [1, H/s, W/s, latentChannels] (AutoencoderTiny.encode(...).latents; times the scaling factor for the UNet).
  void build(nn::Builder& b, const graph::Value& image, graph::TensorId latents) const;

 private:
  models::TaesdConfig config_;
  struct Stage {
    const ops::Conv2dWeights* conv = nullptr;  // the first stage's from the image, then stride 2
    std::vector<TaesdBlock> blocks;
  };
  std::vector<Stage> stages_;
  const ops::Conv2dWeights* convOut_ = nullptr;
};

}  // namespace sdgen::networks
