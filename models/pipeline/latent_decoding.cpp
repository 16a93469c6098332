#include "models/pipeline/latent_decoding.h"

#include "engine/error.h"
#include "engine/tensor_io.h"

namespace sdgen::pipeline {

namespace {

// A graph value over device memory the graph does not own (the pipeline's latents).
graph::Value external(const graph::TensorView& v) {
  return {v.shape, {}, [v](const graph::Resolver&) { return graph::buffer(v); }, 0};
}

}  // namespace

// The untiled decode of a whole latent map: its graph (also planned, not recorded, to decide on tiling).
graph::TensorId LatentDecoding::buildFull(graph::Graph& g, const Allocation& latents, int64_t h, int64_t w) {
  const models::VaeConfig& config = vae_.config();
  const int64_t s = vae_.upscale(), oc = config.outChannels;
  graph::TensorId out = g.output("image", {1, h * s, w * s, oc}, DType::F32);
  nn::Builder b(g, dtype_, &scratch_);
  vae_.build(b, decoderInput(b, external(graph::view(latents, DType::F32, {1, h, w, config.latentChannels})), config),
             out);
  return out;
}

std::map<graph::TensorId, graph::TensorView> LatentDecoding::fullBindings(Full& f, graph::TensorId out, int64_t h,
                                                                          int64_t w) {
  const int64_t s = vae_.upscale(), oc = vae_.config().outChannels;
  // The host reads the pixels from host-visible memory without a download submission (the sequence ends with
  // a barrier to host reads). On a discrete GPU the last kernel writes them to device memory and one copy in
  // the same submission moves them (throughDevice_): that kernel's scattered small stores straight into host
  // memory made the 512^2 decode 1.3 ms slower on the H200 (16.9 -> 15.6 ms; docs/perf.md, session 19).
  // Where device memory is the host's (integrated GPUs, lavapipe) the graph writes the host-visible image.
  const uint64_t bytes = uint64_t(h) * s * w * s * oc * 4;
  if (!f.image) f.image = ctx_.memory().allocate(MemoryKind::Readback, bytes, "decoded image");
  if (throughDevice_ && !f.deviceImage) f.deviceImage = ctx_.allocate(bytes, "decoded image (device)");
  return {{out, graph::view(throughDevice_ ? f.deviceImage : f.image, DType::F32, {1, h * s, w * s, oc})}};
}

graph::CompiledGraph& LatentDecoding::full(const Allocation& latents, int64_t h, int64_t w) {
  Full& f = full_[{h, w}];
  if (f.graph) return *f.graph;
  graph::Graph g;
  graph::TensorId out = buildFull(g, latents, h, w);
  const std::map<graph::TensorId, graph::TensorView> bindings = fullBindings(f, out, h, w);
  f.graph = ops::recordWithinPass(
      scratch_, [&] { return std::make_unique<graph::CompiledGraph>(ctx_, g, bindings, false, arena_); });
  if (throughDevice_) f.graph->appendCopy(f.deviceImage, f.image, f.image.size(), "decoded image download");
  return *f.graph;
}

// As diffusers' use_tiling, only latents larger than one tile are tiled; On tiles those, Auto those whose untiled
// decode's activations exceed autoTilingLimit.
bool LatentDecoding::useTiling(VaeTilingMode mode, const Allocation& latents, int64_t h, int64_t w) {
  if (mode == VaeTilingMode::Off || !vaeTileGeometry(vae_.config()).decodeTiles(h, w)) return false;
  if (mode == VaeTilingMode::On) return true;
  Full& f = full_[{h, w}];
  if (f.graph) return false;  // decoded untiled before: its graph and memory are there
  return plannedFull(f, latents, h, w) > autoTilingLimit(ctx_);
}

uint64_t LatentDecoding::plannedFull(Full& f, const Allocation& latents, int64_t h, int64_t w) {
  if (!f.arena) {
    graph::Graph g;
    buildFull(g, latents, h, w);
    f.arena = graph::planIntermediates(g, graph::topologicalOrder(g)).peakBytes;
  }
  return *f.arena;
}

void LatentDecoding::reserve(ImageDecoder decoder, VaeTilingMode tiling, const Allocation& latents, int64_t h,
                             int64_t w) {
  if (decoder != ImageDecoder::Vae || useTiling(tiling, latents, h, w)) return;
  Full& f = full_[{h, w}];
  if (f.graph) return;
  if (arena_) arena_->reserve(plannedFull(f, latents, h, w));
  if (f.scratchSized) return;
  // Recorded on an arena of its own (freed here), not the shared one: that one is allocated by the first graph
  // recorded after every plan of the generation is reserved.
  graph::Graph g;
  graph::TensorId out = buildFull(g, latents, h, w);
  const std::map<graph::TensorId, graph::TensorView> bindings = fullBindings(f, out, h, w);
  ops::Conv2dScratch::RecordingPass pass(scratch_);
  graph::CompiledGraph sizing(ctx_, g, bindings, false, nullptr);
  f.scratchSized = true;
}

TiledVaeDecoder& LatentDecoding::tiled() {
  if (!tiled_) tiled_ = std::make_unique<TiledVaeDecoder>(ctx_, vae_, dtype_, scratch_, arena_);
  return *tiled_;
}

LatentDecoding::Plan LatentDecoding::prepare(ImageDecoder decoder, VaeTilingMode tiling, const Allocation& latents,
                                             int64_t h, int64_t w, TaesdCoding* taesd) {
  Plan plan{decoder, false};
  if (decoder == ImageDecoder::Taesd) {
    if (!taesd) throw Error("the TAESD decode needs a TAESD model (--taesd PATH)");
    taesd->prepareDecode(latents, h, w);
    return plan;
  }
  plan.tiled = useTiling(tiling, latents, h, w);
  if (plan.tiled)
    tiled().prepare(h, w);
  else
    full(latents, h, w).finishRecording();
  return plan;
}

std::span<const float> LatentDecoding::decode(const Plan& plan, const Allocation& latents, int64_t h, int64_t w,
                                              TaesdCoding* taesd) {
  const int64_t s = vae_.upscale(), c = vae_.config().latentChannels, oc = vae_.config().outChannels;
  if (plan.decoder == ImageDecoder::Taesd) return hostImage_ = taesd->decode(h, w);
  if (plan.tiled) return hostImage_ = tiled().decode(downloadFloats(ctx_, latents, size_t(h * w * c), DType::F32), h, w);
  Full& f = full_.at({h, w});
  f.graph->run();
  // Read in place by the post-process (a copy into a vector first cost 0.3 ms at 512^2).
  return {reinterpret_cast<const float*>(f.image.mapped()), size_t(h * s * w * s * oc)};
}

uint64_t LatentDecoding::arenaBytes() const {
  uint64_t bytes = tiled_ ? tiled_->arenaBytes() : 0;
  for (const auto& [size, f] : full_)
    if (f.graph) bytes += f.graph->memoryPlan().peakBytes;
  return bytes;
}

}  // namespace sdgen::pipeline
