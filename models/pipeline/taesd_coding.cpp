#include "models/pipeline/taesd_coding.h"

#include "engine/error.h"
#include "engine/tensor_io.h"

namespace sdgen::pipeline {

using graph::Expr;
using graph::Value;

namespace {

// A graph value over device memory the graph does not own.
Value external(const graph::TensorView& v) {
  return {v.shape, {}, [v](const graph::Resolver&) { return graph::buffer(v); }, 0};
}

}  // namespace

TaesdCoding::TaesdCoding(Context& ctx, nn::ParameterStore& params, models::TaesdFiles files, DType dtype,
                         ops::Conv2dScratch& scratch, graph::SharedArena* arena)
    : ctx_(ctx), params_(params), files_(std::move(files)), dtype_(dtype), scratch_(scratch), arena_(arena) {
  if (files_.decoderWeights)
    decoder_ = std::make_unique<networks::TaesdDecoder>(params, files_.config, *files_.decoderWeights);
}

void TaesdCoding::checkUses(bool previews, bool finalDecode, bool encode, bool tilingOn, int latentChannels,
                            int vaeScale, const std::string& model) const {
  if (previews) checkFits(latentChannels, vaeScale, model, "preview decode");
  if (!finalDecode) return;
  checkFits(latentChannels, vaeScale, model, "final decode");
  if (encode) checkFits(latentChannels, vaeScale, model, "image to image encode");
  if (tilingOn)
    throw Error("VAE tiling with the TAESD decode: TAESD decodes whole images (docs/taesd.md); leave --vae-tiling out");
}

void TaesdCoding::checkFits(int latentChannels, int vaeScale, const std::string& model, const std::string& use) const {
  const models::TaesdConfig& c = files_.config;
  const std::string what = "TAESD '" + files_.path + "' (" + use + ")";
  if (files_.variant == models::TaesdVariant::TaesdXl)
    throw Error(what + " is taesdxl (" + files_.variantReason + "), which decodes SDXL latents; '" + model +
                "' is an SD 1.x/2.x model: use taesd");
  if (c.latentChannels != latentChannels)
    throw Error(what + " has " + std::to_string(c.latentChannels) + " latent channels but '" + model + "' has " +
                std::to_string(latentChannels));
  const bool decoding = use.find("encode") == std::string::npos;
  if (decoding && !decoder_) throw Error(what + " has no decoder; give taesd_decoder.safetensors or a folder with both");
  if (!decoding && !files_.encoderWeights)
    throw Error(what + " has no encoder; image to image needs taesd_encoder.safetensors beside the decoder");
  const int scale = decoding ? c.upscale() : c.downscale();
  if (scale != vaeScale)
    throw Error(what + " scales by " + std::to_string(scale) + " but the VAE of '" + model + "' by " +
                std::to_string(vaeScale));
  if (c.outChannels != 3 || c.inChannels != 3)
    throw Error(what + " has " + std::to_string(c.inChannels) + " input / " + std::to_string(c.outChannels) +
                " output channels; images have 3");
}

void TaesdCoding::prepareDecode(const Allocation& latents, int64_t h, int64_t w) {
  if (!decoder_) throw Error("TAESD '" + files_.path + "' has no decoder");
  const auto key = std::make_pair(h, w);
  if (decodes_.count(key)) return;
  const int64_t c = files_.config.latentChannels, s = decoder_->upscale(), oc = files_.config.outChannels;
  Stage st;
  st.output = ctx_.allocate(uint64_t(h * s) * uint64_t(w * s) * oc * 4, "TAESD image");
  graph::Graph g;
  graph::TensorId out = g.output("taesd image", {1, h * s, w * s, oc}, DType::F32);
  nn::Builder b(g, dtype_, &scratch_);
  const float scale = 1.f / files_.config.scalingFactor;
  Value z = b.map(external(graph::view(latents, DType::F32, {1, h, w, c})),
                  [scale](const Expr& e) { return scale == 1.f ? e : e * graph::constant(scale); });
  decoder_->build(b, z, out);
  st.graph = ops::recordWithinPass(scratch_, [&] {
    return std::make_unique<graph::CompiledGraph>(
        ctx_, g,
        std::map<graph::TensorId, graph::TensorView>{{out, graph::view(st.output, DType::F32, {1, h * s, w * s, oc})}},
        false, arena_);
  });
  st.graph->finishRecording();
  decodes_.emplace(key, std::move(st));
}

std::vector<float> TaesdCoding::decode(int64_t h, int64_t w) {
  auto it = decodes_.find({h, w});
  if (it == decodes_.end()) throw Error("TAESD decode of " + std::to_string(w) + "x" + std::to_string(h) + " latents was not prepared");
  it->second.graph->run();
  const int64_t s = decoder_->upscale();
  return downloadFloats(ctx_, it->second.output, size_t(h * s * w * s * files_.config.outChannels), DType::F32);
}

std::vector<float> TaesdCoding::encode(const std::vector<float>& pixels, int height, int width) {
  if (!files_.encoderWeights) throw Error("TAESD '" + files_.path + "' has no encoder");
  if (!encoder_) encoder_ = std::make_unique<networks::TaesdEncoder>(params_, files_.config, *files_.encoderWeights);
  const int s = encoder_->downscale(), lc = files_.config.latentChannels;
  if (height <= 0 || width <= 0 || height % s || width % s || pixels.size() != size_t(height) * width * 3)
    throw Error("the TAESD encoder needs an RGB image whose size is a positive multiple of " + std::to_string(s) +
                ", got " + std::to_string(width) + "x" + std::to_string(height));
  const int64_t h = height / s, w = width / s;
  auto it = encodes_.find({height, width});
  if (it == encodes_.end()) {
    Stage st;
    st.input = ctx_.allocate(uint64_t(height) * width * 3 * 4, "TAESD init image");
    st.output = ctx_.allocate(uint64_t(h * w) * lc * 4, "TAESD latents");
    graph::Graph g;
    graph::TensorId out = g.output("taesd latents", {1, h, w, lc}, DType::F32);
    nn::Builder b(g, dtype_, &scratch_);
    encoder_->build(b, external(graph::view(st.input, DType::F32, {1, height, width, 3})), out);
    st.graph = ops::recordWithinPass(scratch_, [&] {
      return std::make_unique<graph::CompiledGraph>(
          ctx_, g,
          std::map<graph::TensorId, graph::TensorView>{{out, graph::view(st.output, DType::F32, {1, h, w, lc})}},
          false, arena_);
    });
    it = encodes_.emplace(std::make_pair(int64_t(height), int64_t(width)), std::move(st)).first;
  }
  ctx_.upload(it->second.input, 0, {reinterpret_cast<const uint8_t*>(pixels.data()), pixels.size() * 4});
  it->second.graph->run();
  std::vector<float> latents = downloadFloats(ctx_, it->second.output, size_t(h * w * lc), DType::F32);
  for (float& v : latents) v *= files_.config.scalingFactor;
  return latents;
}

uint64_t TaesdCoding::arenaBytes() const {
  uint64_t bytes = 0;
  for (const auto& [size, st] : decodes_) bytes += st.graph->memoryPlan().peakBytes;
  for (const auto& [size, st] : encodes_) bytes += st.graph->memoryPlan().peakBytes;
  return bytes;
}

}  // namespace sdgen::pipeline
