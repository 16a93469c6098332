#include "models/pipeline/sdxl_conditioning.h"

#include <span>

#include "engine/error.h"
#include "engine/tensor_io.h"

namespace sdgen::pipeline {

std::array<float, 6> sdxlTimeIds(const SdxlMicroConditioning& m, int width, int height) {
  // (width, height) / (x, y) from the request -> diffusers' (height, width) / (top, left).
  const auto [ow, oh] = m.originalSize.value_or(std::pair{width, height});
  const auto [cx, cy] = m.cropTopLeft.value_or(std::pair{0, 0});
  const auto [tw, th] = m.targetSize.value_or(std::pair{width, height});
  return {float(oh), float(ow), float(cy), float(cx), float(th), float(tw)};
}

std::array<float, 6> sdxlNegativeTimeIds(const SdxlMicroConditioning& m, int width, int height) {
  const bool original = m.negativeOriginalSize.has_value(), target = m.negativeTargetSize.has_value();
  if (original != target || (m.negativeCropTopLeft && !original))
    throw Error(std::string("SDXL's negative micro-conditioning needs both the negative original size and the "
                            "negative target size (--negative-original-size, --negative-target-size); ") +
                (original ? "the target size is missing" : target ? "the original size is missing"
                                                                  : "a negative crop alone changes nothing"));
  if (!original) return sdxlTimeIds(m, width, height);
  const auto [ow, oh] = *m.negativeOriginalSize;
  const auto [cx, cy] = m.negativeCropTopLeft.value_or(std::pair{0, 0});
  const auto [tw, th] = *m.negativeTargetSize;
  return {float(oh), float(ow), float(cy), float(cx), float(th), float(tw)};
}

SdxlTimeIds sdxlTimeIdPair(const SdxlMicroConditioning& m, int width, int height) {
  const std::array<float, 6> positive = sdxlTimeIds(m, width, height), negative = sdxlNegativeTimeIds(m, width, height);
  return {{positive.begin(), positive.end()}, {negative.begin(), negative.end()}};
}

SdxlTimeIds sdxlRefinerTimeIdPair(const SdxlMicroConditioning& m, int width, int height) {
  const auto [ow, oh] = m.originalSize.value_or(std::pair{width, height});
  const auto [cx, cy] = m.cropTopLeft.value_or(std::pair{0, 0});
  const auto [now, noh] = m.negativeOriginalSize.value_or(std::pair{ow, oh});
  const auto [ncx, ncy] = m.negativeCropTopLeft.value_or(std::pair{0, 0});
  return {{float(oh), float(ow), float(cy), float(cx), m.aestheticScore},
          {float(noh), float(now), float(ncy), float(ncx), m.negativeAestheticScore}};
}

void buildSdxlTextGraph(nn::Builder& b, const networks::ClipTextEncoder& text1, const networks::ClipTextEncoder& text2,
                        const graph::TensorView& ids1, const graph::TensorView& ids2, int clipSkip,
                        graph::TensorId context, graph::TensorId final2) {
  const int n1 = text1.config().numHiddenLayers, n2 = text2.config().numHiddenLayers;
  // diffusers: hidden_states[-(clip_skip + 2)], i.e. the output of layer N - 1 - clip_skip (N - 1: penultimate).
  if (clipSkip < 0 || clipSkip > std::min(n1, n2) - 1)
    throw Error("clip skip " + std::to_string(clipSkip) + " is out of range for SDXL's text encoders of " +
                std::to_string(n1) + " and " + std::to_string(n2) + " layers");
  graph::Value h1 = text1.hiddenState(b, ids1, n1 - 1 - clipSkip);
  graph::Value h2 = text2.hiddenState(b, ids2, n2 - 1 - clipSkip, final2);
  b.store(b.zip(h1, h2, [](const graph::Expr& x, const graph::Expr& y) { return graph::concat(x, y, 2); }),
          {"SDXL text context", context});
}

void buildSdxlRefinerTextGraph(nn::Builder& b, const networks::ClipTextEncoder& text2, const graph::TensorView& ids2,
                               int clipSkip, graph::TensorId context, graph::TensorId final2) {
  const int n2 = text2.config().numHiddenLayers;
  if (clipSkip < 0 || clipSkip > n2 - 1)
    throw Error("clip skip " + std::to_string(clipSkip) + " is out of range for the SDXL refiner's text encoder of " +
                std::to_string(n2) + " layers");
  b.store(text2.hiddenState(b, ids2, n2 - 1 - clipSkip, final2), {"SDXL refiner text context", context});
}

std::vector<float> sdxlAddedConditioning(const networks::ClipTextEncoder& text2, const networks::UNet& unet,
                                         const prompt::ConditioningWindows& windows2, const std::vector<float>& final2,
                                         const SdxlTimeIds& timeIds, bool zeroNegative) {
  const size_t seq = windows2.windowLength, d = size_t(text2.config().hiddenSize);
  if (final2.size() != windows2.windows() * seq * d)
    throw Error("SDXL: the second text encoder's output does not match its token windows");
  std::vector<float> rows;
  for (int half = 0; half < windows2.batch; ++half) {
    // webui and ComfyUI pool the first window of a long prompt; diffusers has one window only.
    const size_t window = size_t(half) * windows2.chunks;
    std::vector<float> pooled = text2.pooledProjection(
        std::span<const float>(final2).subspan(window * seq * d, seq * d),
        std::span<const int32_t>(windows2.ids).subspan(window * seq, seq));
    const bool negative = windows2.batch == 2 && half == 0;
    if (negative && zeroNegative) std::fill(pooled.begin(), pooled.end(), 0.f);
    std::vector<float> row = unet.addedConditioningInput(pooled, negative ? timeIds.negative : timeIds.positive);
    rows.insert(rows.end(), row.begin(), row.end());
  }
  return rows;
}

void zeroNegativeContext(Context& ctx, const Allocation& embeddings, const prompt::ConditioningWindows& windows,
                         int64_t width, DType dtype) {
  if (windows.batch != 2) return;
  const size_t half = windows.chunks * windows.windowLength * size_t(width);
  std::vector<float> all = downloadFloats(ctx, embeddings, 2 * half, dtype);
  std::fill(all.begin(), all.begin() + half, 0.f);
  writeFloats(ctx, embeddings, all, dtype);
}

}  // namespace sdgen::pipeline
