#pragma once
// VAE decoding in diffusers' overlapping tiles (AutoencoderKL.enable_tiling, docs/vae-tiling.md), and the choice
// of when to tile. One decode graph is recorded per tile shape (the full tile, and the smaller tiles the bottom
// and right edges leave: at most four) and replayed per tile with that tile's latents uploaded; each decoded tile
// is read back and blended on the host in fp32 exactly as diffusers' blend_v/blend_h (vae_tile_plan.h), so the
// device holds one tile's activations whatever the image size.
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "engine/context.h"
#include "engine/dtype.h"
#include "graph/executor.h"
#include "models/config/model_config.h"
#include "models/networks/vae_decoder.h"
#include "models/nn/layers.h"
#include "models/pipeline/vae_tile_plan.h"
#include "ops/conv2d_scratch.h"

namespace sdgen::pipeline {

VaeTileGeometry vaeTileGeometry(const models::VaeConfig& config);

// The decoder's input from the sampler's latents: latents / scaling_factor (+ shift_factor), as diffusers'
// pipelines divide them before vae.decode.
graph::Value decoderInput(nn::Builder& b, const graph::Value& latents, const models::VaeConfig& config);

// Auto mode tiles when the full-size decode's planned activations (its graph's intermediates arena) exceed this:
// the smaller of kAutoTilingArenaCap and the device-local memory not yet in use (heap budget at device creation
// minus the blocks sdgen holds now).
constexpr uint64_t kAutoTilingArenaCap = uint64_t(4) << 30;
uint64_t autoTilingLimit(Context& ctx);

class TiledVaeDecoder {
 public:
  TiledVaeDecoder(Context& ctx, const networks::VaeDecoder& vae, DType dtype, ops::Conv2dScratch& scratch,
                  graph::SharedArena* arena = nullptr);

  // Records the graphs for the tiles of an h x w latent map (compiling in the background; no-op when known).
  void prepare(int64_t h, int64_t w);
  // latents: NHWC [h, w, latentChannels] fp32 as the sampler leaves them (not yet divided by the scaling
  // factor). Returns the image NHWC [h * s, w * s, outChannels] fp32, in [-1, 1] before clamping.
  std::vector<float> decode(const std::vector<float>& latents, int64_t h, int64_t w);

  uint64_t arenaBytes() const;  // the tile graphs' intermediates

 private:
  graph::CompiledGraph& graphFor(int64_t th, int64_t tw);

  Context& ctx_;
  const networks::VaeDecoder& vae_;
  DType dtype_;
  ops::Conv2dScratch& scratch_;
  graph::SharedArena* arena_;  // the tile graphs' intermediates (null: each graph its own)
  VaeTileGeometry geometry_;
  Allocation tileLatents_, tileImage_;  // sized for a full tile; smaller tiles use their first bytes
  std::map<std::pair<int64_t, int64_t>, std::unique_ptr<graph::CompiledGraph>> graphs_;
};

}  // namespace sdgen::pipeline
