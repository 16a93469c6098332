#pragma once
// The VAE encoder stage of image to image and inpainting: pixels in [-1, 1] (NHWC, on the host) to the encoder's
// moments (mean and log-variance, NHWC), with one compiled graph and its buffers per image size. The encoder's
// weights are loaded on the first use, so text to image never pays for them.
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "engine/context.h"
#include "engine/dtype.h"
#include "graph/executor.h"
#include "models/config/model_config.h"
#include "models/networks/vae_encoder.h"
#include "models/nn/parameters.h"
#include "models/weight_source.h"
#include "ops/conv2d_scratch.h"

namespace sdgen::pipeline {

class ImageEncoder {
 public:
  ImageEncoder(Context& ctx, nn::ParameterStore& params, const models::VaeConfig& config,
               const models::WeightSource& weights, DType dtype, ops::Conv2dScratch& scratch,
               graph::SharedArena* arena = nullptr);

  int downscale() const { return encoder_.downscale(); }
  int latentChannels() const { return encoder_.config().latentChannels; }

  // pixels: NHWC [height, width, 3] in [-1, 1]; height and width multiples of downscale(). Returns the moments
  // NHWC [height / s, width / s, 2 * latentChannels()] (mean first), fp32. tiled: as diffusers' AutoencoderKL
  // with enable_tiling() (_tiled_encode, docs/vae-tiling.md) when the image is larger than one tile.
  std::vector<float> moments(const std::vector<float>& pixels, int height, int width, bool tiled = false);

 private:
  struct SizeStage {
    Allocation pixels, moments;
    std::unique_ptr<graph::CompiledGraph> graph;
  };
  SizeStage& stage(int height, int width);
  std::vector<float> tiledMoments(const std::vector<float>& pixels, int height, int width);

  Context& ctx_;
  DType dtype_;
  ops::Conv2dScratch& scratch_;
  graph::SharedArena* arena_;  // the graphs' intermediates (null: each graph its own)
  networks::VaeEncoder encoder_;
  std::map<std::pair<int, int>, SizeStage> stages_;
};

}  // namespace sdgen::pipeline
