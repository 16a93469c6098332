#include "models/pipeline/image_encoding.h"

#include "engine/error.h"
#include "engine/tensor_io.h"

namespace sdgen::pipeline {

ImageEncoder::ImageEncoder(Context& ctx, nn::ParameterStore& params, const models::VaeConfig& config,
                           const models::WeightSource& weights, DType dtype, ops::Conv2dScratch& scratch)
    : ctx_(ctx), dtype_(dtype), scratch_(scratch), encoder_(params, config, weights) {}

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
  st.graph = std::make_unique<graph::CompiledGraph>(
      ctx_, g, std::map<graph::TensorId, graph::TensorView>{{out, graph::view(st.moments, DType::F32, {1, h, w, 2 * lc})}});
  return stages_.emplace(key, std::move(st)).first->second;
}

std::vector<float> ImageEncoder::moments(const std::vector<float>& pixels, int height, int width) {
  const int s = downscale();
  if (height <= 0 || width <= 0 || height % s || width % s)
    throw Error("the VAE encoder needs an image size that is a positive multiple of " + std::to_string(s) + ", got " +
                std::to_string(width) + "x" + std::to_string(height));
  if (pixels.size() != size_t(height) * size_t(width) * 3)
    throw Error("the VAE encoder got " + std::to_string(pixels.size()) + " values for a " + std::to_string(width) +
                "x" + std::to_string(height) + " RGB image");
  SizeStage& st = stage(height, width);
  ctx_.upload(st.pixels, 0, {reinterpret_cast<const uint8_t*>(pixels.data()), pixels.size() * 4});
  st.graph->run();
  const size_t n = size_t(height / s) * size_t(width / s) * 2 * latentChannels();
  return downloadFloats(ctx_, st.moments, n, DType::F32);
}

}  // namespace sdgen::pipeline
