#include "models/pipeline/vae_tiling.h"

#include <algorithm>
#include <cstring>

#include "engine/error.h"
#include "engine/tensor_io.h"

namespace sdgen::pipeline {

using graph::Expr;
using graph::Value;

VaeTileGeometry vaeTileGeometry(const models::VaeConfig& config) {
  return VaeTileGeometry::of(config.sampleSize, int(config.blockOutChannels.size()));
}

Value decoderInput(nn::Builder& b, const Value& latents, const models::VaeConfig& config) {
  const float scale = 1.f / config.scalingFactor, shift = config.shiftFactor.value_or(0.f);
  return b.map(latents, [=](const Expr& e) {
    Expr scaled = e * graph::constant(scale);
    return shift != 0.f ? scaled + graph::constant(shift) : scaled;
  });
}

uint64_t autoTilingLimit(Context& ctx) {
  uint64_t heapBudget = 0;
  for (const MemoryHeapInfo& heap : ctx.info().heaps)
    if (heap.deviceLocal) heapBudget = std::max(heapBudget, heap.budget);
  const uint64_t held = ctx.memory().pool(MemoryKind::Device).stats().bytesReserved;
  const uint64_t free = heapBudget > held ? heapBudget - held : 0;
  return heapBudget ? std::min(kAutoTilingArenaCap, free) : kAutoTilingArenaCap;
}

TiledVaeDecoder::TiledVaeDecoder(Context& ctx, const networks::VaeDecoder& vae, DType dtype,
                                 ops::Conv2dScratch& scratch, graph::SharedArena* arena)
    : ctx_(ctx), vae_(vae), dtype_(dtype), scratch_(scratch), arena_(arena), geometry_(vaeTileGeometry(vae.config())) {
  const models::VaeConfig& c = vae.config();
  const uint64_t t = uint64_t(geometry_.latentTile), s = uint64_t(vae.upscale());
  tileLatents_ = ctx.allocate(t * t * c.latentChannels * 4, "VAE tile latents");
  tileImage_ = ctx.allocate(t * s * t * s * c.outChannels * 4, "VAE tile image");
}

graph::CompiledGraph& TiledVaeDecoder::graphFor(int64_t th, int64_t tw) {
  const auto key = std::make_pair(th, tw);
  if (auto it = graphs_.find(key); it != graphs_.end()) return *it->second;
  const models::VaeConfig& c = vae_.config();
  const int64_t s = vae_.upscale(), oc = c.outChannels;
  const graph::Shape imageShape{1, th * s, tw * s, oc};
  graph::Graph g;
  graph::TensorId out = g.output("tile image", imageShape, DType::F32);
  nn::Builder b(g, dtype_, &scratch_);
  const graph::TensorView in = graph::view(tileLatents_, DType::F32, {1, th, tw, int64_t(c.latentChannels)});
  Value latents{in.shape, {}, [in](const graph::Resolver&) { return graph::buffer(in); }, 0};
  vae_.build(b, decoderInput(b, latents, c), out);
  auto compiled = ops::recordWithinPass(scratch_, [&] {
    return std::make_unique<graph::CompiledGraph>(
        ctx_, g, std::map<graph::TensorId, graph::TensorView>{{out, graph::view(tileImage_, DType::F32, imageShape)}},
        false, arena_);
  });
  return *graphs_.emplace(key, std::move(compiled)).first->second;
}

void TiledVaeDecoder::prepare(int64_t h, int64_t w) {
  const TilePlan plan = geometry_.decodePlan(h, w);
  for (int64_t i : plan.rowStarts)
    for (int64_t j : plan.colStarts) graphFor(plan.extentAt(i, h), plan.extentAt(j, w));
}

std::vector<float> TiledVaeDecoder::decode(const std::vector<float>& latents, int64_t h, int64_t w) {
  const int64_t c = vae_.config().latentChannels, s = vae_.upscale(), oc = vae_.config().outChannels;
  if (latents.size() != size_t(h * w * c))
    throw Error("VAE tiling: " + std::to_string(latents.size()) + " latent values for " + std::to_string(w) + "x" +
                std::to_string(h) + "x" + std::to_string(c));
  const TilePlan plan = geometry_.decodePlan(h, w);
  TileAssembler<float> assembler(plan, h * s, w * s, oc);
  std::vector<float> tileLatents;
  for (size_t r = 0; r < plan.rowStarts.size(); ++r)
    for (size_t q = 0; q < plan.colStarts.size(); ++q) {
      const int64_t top = plan.rowStarts[r], left = plan.colStarts[q];
      const int64_t th = plan.extentAt(top, h), tw = plan.extentAt(left, w);
      graph::CompiledGraph& graph = graphFor(th, tw);
      tileLatents.resize(size_t(th * tw * c));
      for (int64_t y = 0; y < th; ++y)
        std::memcpy(tileLatents.data() + y * tw * c, latents.data() + ((top + y) * w + left) * c, size_t(tw * c) * 4);
      ctx_.upload(tileLatents_, 0, {reinterpret_cast<const uint8_t*>(tileLatents.data()), tileLatents.size() * 4});
      graph.run();
      HostTile<float> tile{th * s, tw * s, downloadFloats(ctx_, tileImage_, size_t(th * s * tw * s * oc), DType::F32)};
      assembler.add(r, q, std::move(tile));
    }
  return assembler.take();
}

uint64_t TiledVaeDecoder::arenaBytes() const {
  uint64_t bytes = 0;
  for (const auto& [shape, g] : graphs_) bytes += g->memoryPlan().peakBytes;
  return bytes;
}

}  // namespace sdgen::pipeline
