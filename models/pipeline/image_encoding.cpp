#include "models/pipeline/image_encoding.h"

#include "engine/error.h"
#include "engine/tensor_io.h"
#include "models/pipeline/vae_tile_plan.h"

namespace sdgen::pipeline {

ImageEncoder::ImageEncoder(Context& ctx, nn::ParameterStore& params, const models::VaeConfig& config,
                           const models::WeightSource& weights, DType dtype, ops::Conv2dScratch& scratch,
                           graph::SharedArena* arena)
    : ctx_(ctx), dtype_(dtype), scratch_(scratch), arena_(arena), encoder_(params, config, weights) {}

ImageEncoder::SizeStage& ImageEncoder::stage(int height, int width) {
  const auto key = std::make_pair(height, width);
  auto it = stages_.find(key);
  if (it != stages_.end()) return it->second;
  const int s = downscale(), c = encoder_.config().inChannels, lc = latentChannels();
  if (c != 3) throw Error("the VAE encoder takes " + std::to_string(c) + " channels; images have 3");
  const int64_t h = height / s, w = width / s;
  SizeStage st;
  st.pixels = ctx_.allocate(uint64_t(height) * width * 3 * 4, "init image pixels");
  st.moments = ctx_.allocate(uint64_t(h) * w * 2 * lc * 4, "encoder moments");
  graph::Graph g;
  graph::TensorId out = g.output("moments", {1, h, w, 2 * lc}, DType::F32);
  nn::Builder b(g, dtype_, &scratch_);
  const graph::TensorView in = graph::view(st.pixels, DType::F32, {1, height, width, 3});
  graph::Value image{in.shape, {}, [in](const graph::Resolver&) { return graph::buffer(in); }, 0};
  encoder_.build(b, image, out);
  st.graph = ops::recordWithinPass(scratch_, [&] {
    return std::make_unique<graph::CompiledGraph>(
        ctx_, g,
        std::map<graph::TensorId, graph::TensorView>{{out, graph::view(st.moments, DType::F32, {1, h, w, 2 * lc})}},
        false, arena_);
  });
  return stages_.emplace(key, std::move(st)).first->second;
}

std::vector<float> ImageEncoder::moments(const std::vector<float>& pixels, int height, int width, bool tiled) {
  const int s = downscale();
  if (height <= 0 || width <= 0 || height % s || width % s)
    throw Error("the VAE encoder needs an image size that is a positive multiple of " + std::to_string(s) + ", got " +
                std::to_string(width) + "x" + std::to_string(height));
  if (pixels.size() != size_t(height) * size_t(width) * 3)
    throw Error("the VAE encoder got " + std::to_string(pixels.size()) + " values for a " + std::to_string(width) +
                "x" + std::to_string(height) + " RGB image");
  const models::VaeConfig& config = encoder_.config();
  if (tiled && VaeTileGeometry::of(config.sampleSize, int(config.blockOutChannels.size())).encodeTiles(height, width))
    return tiledMoments(pixels, height, width);
  SizeStage& st = stage(height, width);
  ctx_.upload(st.pixels, 0, {reinterpret_cast<const uint8_t*>(pixels.data()), pixels.size() * 4});
  st.graph->run();
  const size_t n = size_t(height / s) * size_t(width / s) * 2 * latentChannels();
  return downloadFloats(ctx_, st.moments, n, DType::F32);
}

// One graph per tile size (stage()), each tile's pixels uploaded in turn, the moments blended on the host.
std::vector<float> ImageEncoder::tiledMoments(const std::vector<float>& pixels, int height, int width) {
  const models::VaeConfig& config = encoder_.config();
  const TilePlan plan =
      VaeTileGeometry::of(config.sampleSize, int(config.blockOutChannels.size())).encodePlan(height, width);
  const int s = downscale(), mc = 2 * latentChannels();
  TileAssembler<float> assembler(plan, height / s, width / s, mc);
  std::vector<float> tilePixels;
  for (size_t r = 0; r < plan.rowStarts.size(); ++r)
    for (size_t q = 0; q < plan.colStarts.size(); ++q) {
      const int64_t top = plan.rowStarts[r], left = plan.colStarts[q];
      const int th = int(plan.extentAt(top, height)), tw = int(plan.extentAt(left, width));
      if (th % s || tw % s)
        throw Error("VAE tiling: a " + std::to_string(tw) + "x" + std::to_string(th) + " tile of the " +
                    std::to_string(width) + "x" + std::to_string(height) +
                    " image is no multiple of the encoder's scale " + std::to_string(s) + " (sample_size " +
                    std::to_string(config.sampleSize) + " in '" + config.source + "')");
      tilePixels.resize(size_t(th) * tw * 3);
      for (int y = 0; y < th; ++y)
        std::copy_n(pixels.data() + ((top + y) * width + left) * 3, size_t(tw) * 3, tilePixels.data() + size_t(y) * tw * 3);
      assembler.add(r, q, HostTile<float>{th / s, tw / s, moments(tilePixels, th, tw)});
    }
  return assembler.take();
}

}  // namespace sdgen::pipeline
