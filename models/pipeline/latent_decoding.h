#pragma once
// The final decode of a generation's latents, and the choice of how: TAESD when asked for (docs/taesd.md), else the
// model's VAE, whole or in diffusers' overlapping tiles (docs/vae-tiling.md: On tiles latents larger than one tile,
// Auto only those whose untiled decode would not fit, Off never). Holds the untiled decode graph of each latent
// size (bound to that size's latents), the tiled decoder, made on the first tiled decode, and the planned arena
// of untiled decodes that Auto compares with the memory limit.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "engine/context.h"
#include "engine/dtype.h"
#include "graph/executor.h"
#include "models/config/model_config.h"
#include "models/networks/vae_decoder.h"
#include "models/pipeline/decoder_choice.h"
#include "models/pipeline/taesd_coding.h"
#include "models/pipeline/vae_tiling.h"
#include "ops/conv2d_scratch.h"

namespace sdgen::pipeline {

class LatentDecoding {
 public:
  // arena: where the decode graphs keep their intermediates (null: each graph its own). throughDevice: the
  // untiled decode writes the image to device memory and its submission copies it into the host-visible image
  // (discrete GPUs: LoadOptions::decodeThroughDeviceMemory); false: the graph writes the host-visible image.
  LatentDecoding(Context& ctx, const networks::VaeDecoder& vae, DType dtype, ops::Conv2dScratch& scratch,
                 graph::SharedArena* arena = nullptr, bool throughDevice = false)
      : ctx_(ctx), vae_(vae), dtype_(dtype), scratch_(scratch), arena_(arena), throughDevice_(throughDevice) {}

  struct Plan {
    ImageDecoder decoder = ImageDecoder::Vae;
    bool tiled = false;  // the VAE in tiles (also the image-to-image encode, as diffusers' one use_tiling flag)
  };
  // Decides how the h x w latents in `latents` (NHWC fp32, the same allocation for every call of a size) are
  // decoded and records what that needs (compiling in the background). TAESD (`taesd`, required for it) never
  // tiles.
  Plan prepare(ImageDecoder decoder, VaeTilingMode tiling, const Allocation& latents, int64_t h, int64_t w,
               TaesdCoding* taesd);
  // The image NHWC [h * s, w * s, 3] fp32 in [-1, 1] before clamping: a view of host memory (the untiled
  // decode's host-visible output, or the tiled / TAESD result held here) valid until the next decode.
  std::span<const float> decode(const Plan& plan, const Allocation& latents, int64_t h, int64_t w, TaesdCoding* taesd);

  uint64_t arenaBytes() const;  // the VAE decode graphs' planned intermediates (untiled and tiled)
  // Before a generation records any graph: reserves in the shared arena what prepare() with the same arguments
  // will record for the untiled decode (its plan, without recording), so that one allocation serves every graph
  // of the generation; and sizes the conv scratch for that decode, whose convs need more of it than any other
  // graph's (a recording on an arena of its own, discarded), so that graphs recorded before the decode do not
  // keep smaller scratch allocations it would outgrow. Tiled decodes and TAESD reserve nothing (small graphs).
  void reserve(ImageDecoder decoder, VaeTilingMode tiling, const Allocation& latents, int64_t h, int64_t w);

 private:
  struct Full {
    Allocation image;        // host-visible: where decode() reads the pixels
    Allocation deviceImage;  // discrete GPUs: where the graph writes them (copied into `image` after it)
    std::unique_ptr<graph::CompiledGraph> graph;
    std::optional<uint64_t> arena;  // the untiled decode's planned intermediates (auto tiling)
    bool scratchSized = false;      // reserve() recorded it once on the scratch
  };
  std::map<graph::TensorId, graph::TensorView> fullBindings(Full& f, graph::TensorId out, int64_t h, int64_t w);
  graph::TensorId buildFull(graph::Graph& g, const Allocation& latents, int64_t h, int64_t w);
  uint64_t plannedFull(Full& f, const Allocation& latents, int64_t h, int64_t w);
  graph::CompiledGraph& full(const Allocation& latents, int64_t h, int64_t w);
  bool useTiling(VaeTilingMode mode, const Allocation& latents, int64_t h, int64_t w);
  TiledVaeDecoder& tiled();

  Context& ctx_;
  const networks::VaeDecoder& vae_;
  DType dtype_;
  ops::Conv2dScratch& scratch_;
  graph::SharedArena* arena_;
  bool throughDevice_;
  std::map<std::pair<int64_t, int64_t>, Full> full_;
  std::unique_ptr<TiledVaeDecoder> tiled_;
  std::vector<float> hostImage_;  // the last tiled or TAESD decode
};

}  // namespace sdgen::pipeline
