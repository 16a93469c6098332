#pragma once
// The text side of a generation: the prompt and negative prompt as token windows (models/prompt/), the recorded
// text encoder per window count and clip skip (its output buffer is the context the denoising steps read), webui's
// emphasis on that output, and for SDXL the second tokenizer and encoder, the zeroed unconditional half and the
// UNet's added conditioning rows (sdxl_conditioning.h). Owned by the text-to-image pipeline.
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "engine/context.h"
#include "graph/executor.h"
#include "models/formats/model_files.h"
#include "models/networks/clip_text_encoder.h"
#include "models/networks/unet.h"
#include "models/pipeline/micro_conditioning.h"
#include "models/prompt/conditioning_windows.h"
#include "ops/conv2d_scratch.h"

namespace sdgen::pipeline {

class TextConditioning {
 public:
  // text2: SDXL's second encoder, or null. text: the first encoder, null for the SDXL refiner (text2 alone).
  TextConditioning(Context& ctx, const models::ModelFiles& files, const networks::ClipTextEncoder* text,
                   const networks::ClipTextEncoder* text2, DType dtype, ops::Conv2dScratch& scratch,
                   graph::SharedArena* arena = nullptr);

  // The windows of both tokenizers (the second only for SDXL: the same windows, padded its way). The refiner:
  // tokenizer_2's windows in both (the context and the pooled embedding come from its one encoder).
  struct Windows {
    prompt::ConditioningWindows first;
    std::optional<prompt::ConditioningWindows> second;
  };
  // Throws PromptSyntaxError, and an Error when the windows do not fit the encoder.
  Windows tokenize(prompt::PromptSyntax syntax, std::string_view prompt, std::string_view negativePrompt,
                   bool guided) const;

  // The recorded encoder of these windows at this clip skip (recorded on first use).
  graph::CompiledGraph& encoder(const Windows& w, int clipSkip);
  // What it writes: [windows, 77, width()], which in memory is the UNet's context [batch, chunks * 77, width()].
  const Allocation& context(const Windows& w);
  int64_t width() const { return files_.unetConfig.crossAttentionDim; }

  // Writes the ids, runs the encoder and applies the emphasis. SDXL: zeroes the unconditional half when
  // zeroNegative and returns add_embedding's input rows for these time ids; empty for SD 1.x/2.x. Where the host
  // reads nothing back (SD 1.x/2.x without emphasis weights) the encoder is only submitted: the next submission
  // on the queue orders after it (every command sequence begins with a full barrier), and its wait covers it.
  std::vector<float> encode(const Windows& w, int clipSkip, bool zeroNegative, const SdxlTimeIds& timeIds,
                            const networks::UNet& unet);

  uint64_t arenaBytes() const;  // the recorded encoders' planned intermediates

 private:
  // Per number of windows: ids in, the context out, one recorded encoder per clip skip writing it.
  struct Stage {
    Allocation ids, embeddings;
    Allocation ids2, final2;  // SDXL: tokenizer_2's ids, text_encoder_2's final hidden state (for the pooling)
    std::map<int, std::unique_ptr<graph::CompiledGraph>> encoders;  // by clip skip
  };
  Stage& stage(int windows);
  // webui's emphasis on the encoder's output, on the host, per half so that an error names the prompt at fault.
  void applyEmphasis(const Allocation& embeddings, const prompt::ConditioningWindows& windows);

  Context& ctx_;
  const models::ModelFiles& files_;
  const networks::ClipTextEncoder* text_;  // null: the SDXL refiner
  const networks::ClipTextEncoder* text2_;
  const networks::ClipTextEncoder& contextEncoder() const { return text_ ? *text_ : *text2_; }
  DType dtype_;
  ops::Conv2dScratch& scratch_;
  graph::SharedArena* arena_;  // the encoders' intermediates (null: each graph its own)
  std::map<int, Stage> stages_;
};

}  // namespace sdgen::pipeline
