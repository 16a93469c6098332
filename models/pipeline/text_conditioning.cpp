#include "models/pipeline/text_conditioning.h"

#include <cstring>
#include <span>

#include "engine/error.h"
#include "engine/tensor_io.h"
#include "models/pipeline/sdxl_conditioning.h"
#include "models/prompt/emphasis.h"

namespace sdgen::pipeline {

TextConditioning::TextConditioning(Context& ctx, const models::ModelFiles& files, const networks::ClipTextEncoder* text,
                                   const networks::ClipTextEncoder* text2, DType dtype, ops::Conv2dScratch& scratch,
                                   graph::SharedArena* arena)
    : ctx_(ctx), files_(files), text_(text), text2_(text2), dtype_(dtype), scratch_(scratch), arena_(arena) {
  if (!text_ && !text2_) throw Error("internal error: a text conditioning without a text encoder");
}

TextConditioning::Windows TextConditioning::tokenize(prompt::PromptSyntax syntax, std::string_view promptText,
                                                     std::string_view negativePrompt, bool guided) const {
  const auto& tokenizer = text_ ? *files_.tokenizer : *files_.tokenizer2;
  Windows w{prompt::makeConditioningWindows(tokenizer, syntax, promptText, negativePrompt, guided), {}};
  const int64_t seq = contextEncoder().sequenceLength();
  if (int64_t(w.first.windowLength) != seq)
    throw Error("the tokenizer's windows of " + std::to_string(w.first.windowLength) +
                " tokens do not match the text encoder's " + std::to_string(seq) + " positions");
  if (!text_) {  // the SDXL refiner: tokenizer_2's windows are all there is
    w.second = w.first;
  } else if (text2_) {  // SDXL: the same windows through tokenizer_2, which differs in its padding
    w.second = prompt::makeConditioningWindows(*files_.tokenizer2, syntax, promptText, negativePrompt, guided);
    if (w.second->chunks != w.first.chunks || w.second->windowLength != w.first.windowLength)
      throw Error("SDXL: the two tokenizers split the prompt into different windows");
  }
  return w;
}

TextConditioning::Stage& TextConditioning::stage(int windows) {
  auto it = stages_.find(windows);
  if (it != stages_.end()) return it->second;
  const int64_t seq = contextEncoder().sequenceLength(), d = width();
  Stage st;
  // Token ids in host-visible memory: written by the host before each encode, no upload submission.
  st.ids = ctx_.memory().allocate(MemoryKind::Params, uint64_t(windows) * seq * 4, "token ids");
  st.embeddings = ctx_.allocate(uint64_t(windows) * seq * d * dtypeSize(dtype_), "text embeddings");
  if (text2_) {
    st.ids2 = ctx_.memory().allocate(MemoryKind::Params, uint64_t(windows) * seq * 4, "token ids 2");
    st.final2 = ctx_.allocate(uint64_t(windows) * seq * files_.textEncoder2Config.hiddenSize * dtypeSize(dtype_),
                              "text encoder 2 final hidden state");
  }
  return stages_.emplace(windows, std::move(st)).first->second;
}

const Allocation& TextConditioning::context(const Windows& w) { return stage(int(w.first.windows())).embeddings; }

// Every window is encoded on its own: the windows are the encoder's batch.
graph::CompiledGraph& TextConditioning::encoder(const Windows& w, int clipSkip) {
  const int batch = int(w.first.windows());
  Stage& st = stage(batch);
  auto it = st.encoders.find(clipSkip);
  if (it != st.encoders.end()) return *it->second;
  const int64_t seq = contextEncoder().sequenceLength(), d = width();
  graph::Graph g;
  graph::TensorId out = g.output("text embeddings", {batch, seq, d}, dtype_);
  std::map<graph::TensorId, graph::TensorView> bindings{{out, graph::view(st.embeddings, dtype_, {batch, seq, d})}};
  nn::Builder b(g, dtype_, &scratch_);
  if (text2_) {
    const int64_t d2 = files_.textEncoder2Config.hiddenSize;
    graph::TensorId final2 = g.output("text encoder 2 final hidden state", {batch, seq, d2}, dtype_);
    bindings.emplace(final2, graph::view(st.final2, dtype_, {batch, seq, d2}));
    if (text_)
      buildSdxlTextGraph(b, *text_, *text2_, graph::indexView(st.ids, {batch, seq}),
                         graph::indexView(st.ids2, {batch, seq}), clipSkip, out, final2);
    else
      buildSdxlRefinerTextGraph(b, *text2_, graph::indexView(st.ids2, {batch, seq}), clipSkip, out, final2);
  } else {
    text_->build(b, graph::indexView(st.ids, {batch, seq}), clipSkip, out);
  }
  auto compiled = ops::recordWithinPass(
      scratch_, [&] { return std::make_unique<graph::CompiledGraph>(ctx_, g, bindings, false, arena_); });
  return *st.encoders.emplace(clipSkip, std::move(compiled)).first->second;
}

std::vector<float> TextConditioning::encode(const Windows& w, int clipSkip, bool zeroNegative,
                                            const SdxlTimeIds& timeIds, const networks::UNet& unet) {
  Stage& st = stage(int(w.first.windows()));
  if (w.first.ids.size() * 4 > st.ids.size() || (w.second && w.second->ids.size() * 4 > st.ids2.size()))
    throw Error("internal error: more token ids than the text encoder's stage holds");
  std::memcpy(st.ids.mapped(), w.first.ids.data(), w.first.ids.size() * 4);
  if (w.second) std::memcpy(st.ids2.mapped(), w.second->ids.data(), w.second->ids.size() * 4);
  graph::CompiledGraph& encoderGraph = encoder(w, clipSkip);
  encoderGraph.submit();
  if (!w.first.weighted && !w.second) return {};
  encoderGraph.wait();
  if (w.first.weighted) applyEmphasis(st.embeddings, w.first);
  if (!w.second) return {};
  // diffusers: force_zeros_for_empty_prompt makes the unconditional half zeros when no negative prompt is given;
  // the added conditioning (pooled embedding + time ids) of both halves.
  if (zeroNegative) zeroNegativeContext(ctx_, st.embeddings, w.first, width(), dtype_);
  const size_t n2 = w.second->windows() * w.second->windowLength * size_t(files_.textEncoder2Config.hiddenSize);
  return sdxlAddedConditioning(*text2_, unet, *w.second, downloadFloats(ctx_, st.final2, n2, dtype_), timeIds,
                               zeroNegative);
}

void TextConditioning::applyEmphasis(const Allocation& embeddings, const prompt::ConditioningWindows& windows) {
  const size_t seq = windows.windowLength, d = size_t(width());
  std::vector<float> hidden = downloadFloats(ctx_, embeddings, windows.windows() * seq * d, dtype_);
  const size_t half = windows.chunks * seq;
  for (int b = 0; b < windows.batch; ++b) {
    const bool negative = windows.batch == 2 && b == 0;
    prompt::applyEmphasis(std::span<float>(hidden).subspan(b * half * d, half * d),
                          std::span<const float>(windows.weights).subspan(b * half, half), seq, d,
                          negative ? "the negative prompt" : "the prompt");
  }
  writeFloats(ctx_, embeddings, hidden, dtype_);
}

uint64_t TextConditioning::arenaBytes() const {
  uint64_t bytes = 0;
  for (const auto& [windows, st] : stages_)
    for (const auto& [skip, g] : st.encoders) bytes += g->memoryPlan().peakBytes;
  return bytes;
}

}  // namespace sdgen::pipeline
