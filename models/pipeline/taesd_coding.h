#pragma once
// TAESD in the pipeline (docs/taesd.md): its decoder for the final image (--vae taesd) and for previews, one
// recorded graph per latent size reading the sampler's latents in place; its encoder for image to image, loaded on
// the first use, one graph per image size. As diffusers' pipelines with an AutoencoderTiny: latents are divided by
// its scaling_factor (1.0) before decoding, and encoding returns encode(image).latents * scaling_factor, with no
// draw from the generator (there is no distribution to sample).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/context.h"
#include "engine/dtype.h"
#include "graph/executor.h"
#include "models/formats/taesd_files.h"
#include "models/networks/taesd.h"
#include "models/nn/parameters.h"
#include "ops/conv2d_scratch.h"

namespace sdgen::pipeline {

class TaesdCoding {
 public:
  // Loads the decoder when the files have one (errors name the file and tensor).
  TaesdCoding(Context& ctx, nn::ParameterStore& params, models::TaesdFiles files, DType dtype,
              ops::Conv2dScratch& scratch, graph::SharedArena* arena = nullptr);

  const models::TaesdFiles& files() const { return files_; }
  // Throws unless TAESD can stand in for a model whose UNet has `latentChannels` channels and whose VAE scales by
  // `vaeScale`: same channels, same scale, not taesdxl (sdgen's models are SD 1.x/2.x). `use` says what for.
  void checkFits(int latentChannels, int vaeScale, const std::string& model, const std::string& use) const;
  // checkFits for each use a generation asks of TAESD (previews, the final decode, the image-to-image encode of
  // that decode's generation); throws for VAE tiling forced on with the final decode (TAESD decodes whole images).
  void checkUses(bool previews, bool finalDecode, bool encode, bool tilingOn, int latentChannels, int vaeScale,
                 const std::string& model) const;

  // Records the decode of an h x w latent map held in `latents` (NHWC fp32; compiles in the background).
  void prepareDecode(const Allocation& latents, int64_t h, int64_t w);
  // The image NHWC [h * s, w * s, 3] fp32 in [-1, 1] before clamping, from the latents prepareDecode was given.
  std::vector<float> decode(int64_t h, int64_t w);
  // pixels NHWC [height, width, 3] in [-1, 1] -> latents NHWC [height / s, width / s, C] * scaling_factor.
  std::vector<float> encode(const std::vector<float>& pixels, int height, int width);

  uint64_t arenaBytes() const;  // the graphs' planned intermediates

 private:
  struct Stage {
    Allocation input, output;
    std::unique_ptr<graph::CompiledGraph> graph;
  };
  Context& ctx_;
  nn::ParameterStore& params_;
  models::TaesdFiles files_;
  DType dtype_;
  ops::Conv2dScratch& scratch_;
  graph::SharedArena* arena_;  // the graphs' intermediates (null: each graph its own)
  std::unique_ptr<networks::TaesdDecoder> decoder_;
  std::unique_ptr<networks::TaesdEncoder> encoder_;
  std::map<std::pair<int64_t, int64_t>, Stage> decodes_, encodes_;
};

}  // namespace sdgen::pipeline
