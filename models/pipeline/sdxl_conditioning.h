#pragma once
// SDXL's prompt conditioning, as diffusers' StableDiffusionXLPipeline computes it (encode_prompt,
// _get_add_time_ids; docs/sdxl.md):
//   context   both text encoders' hidden_states[-(2 + clip_skip)] (no final layer norm), side by side along the
//             channels: [windows, 77, d1 + d2];
//   pooled    text_encoder_2's text_embeds (final layer norm at the pooled token, text_projection) of each half's
//             first window;
//   time ids  (original height, width, crop top, left, target height, width), the same for both halves unless
//             negative micro-conditioning is given;
// The SDXL refiner (StableDiffusionXLImg2ImgPipeline with requires_aesthetics_score) conditions on text_encoder_2
// alone (context d2 wide) and five time ids with an aesthetic score (sdxlRefinerTimeIdPair).
//   zeros     for the unconditional half when the model says force_zeros_for_empty_prompt and no negative prompt
//             is given (diffusers: negative_prompt None).
// The added conditioning rows (pooled + sinusoids of the time ids) are what the UNet's add_embedding reads.
#include <array>
#include <cstdint>
#include <vector>

#include "engine/context.h"
#include "graph/graph.h"
#include "models/nn/layers.h"
#include "models/networks/clip_text_encoder.h"
#include "models/networks/unet.h"
#include "models/pipeline/micro_conditioning.h"
#include "models/prompt/conditioning_windows.h"

namespace sdgen::pipeline {

// The text graph of an SDXL model: ids1/ids2 [windows, 77] (tokenizer and tokenizer_2) -> `context`
// [windows, 77, d1 + d2] and text_encoder_2's final hidden state into `final2` [windows, 77, d2].
void buildSdxlTextGraph(nn::Builder& b, const networks::ClipTextEncoder& text1, const networks::ClipTextEncoder& text2,
                        const graph::TensorView& ids1, const graph::TensorView& ids2, int clipSkip,
                        graph::TensorId context, graph::TensorId final2);

// The SDXL refiner's text graph: ids2 [windows, 77] (tokenizer_2) -> `context` = text_encoder_2's
// hidden_states[-(2 + clip_skip)] [windows, 77, d2] and its final hidden state into `final2`.
void buildSdxlRefinerTextGraph(nn::Builder& b, const networks::ClipTextEncoder& text2, const graph::TensorView& ids2,
                               int clipSkip, graph::TensorId context, graph::TensorId final2);

// The UNet's added conditioning [batch, projection_class_embeddings_input_dim] (row 0 the unconditional half
// with guidance, with timeIds.negative), from text_encoder_2's final hidden states (`final2`, windows2's layout)
// and ids.
// zeroNegative: the unconditional half's pooled embedding is zeros (force_zeros_for_empty_prompt).
std::vector<float> sdxlAddedConditioning(const networks::ClipTextEncoder& text2, const networks::UNet& unet,
                                         const prompt::ConditioningWindows& windows2, const std::vector<float>& final2,
                                         const SdxlTimeIds& timeIds, bool zeroNegative);

// Zeros the unconditional half of the context (the first half of the windows) in `embeddings`.
void zeroNegativeContext(Context& ctx, const Allocation& embeddings, const prompt::ConditioningWindows& windows,
                         int64_t width, DType dtype);

}  // namespace sdgen::pipeline
