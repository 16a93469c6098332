#pragma once
// One component of a loaded model (text encoder, UNet, VAE decoder) run on the device for the model check:
// the output in the reference's layout (NCHW for images), and for the UNet the cost of one replayed step.
#include <cstdint>
#include <vector>

#include "engine/context.h"
#include "engine/dtype.h"
#include "models/formats/model_files.h"
#include "ops/conv2d_tune.h"

namespace sdgen::check {

struct StepCost {
  size_t launches = 0;
  size_t barriers = 0;  // between the step's commands (graph::CompiledGraph::barriers)
  int repetitions = 0;
  double medianMs = 0, p10Ms = 0, p90Ms = 0;  // wall time of submit + wait of the recorded step
  // The step's GPU time, from timestamps at the start and the end of its commands only (what CUDA events around
  // a CUDA graph's replay measure: no host submit and wait); 0 where the device has no timestamps.
  double spanMedianMs = 0, spanP10Ms = 0, spanP90Ms = 0;
  double gpuMs = 0;                           // sum of the per-dispatch GPU timestamps of one step
  // The cross-attention K/V projections of the context, which the pipeline computes once per image before its
  // steps (models/pipeline/text_to_image.cpp) and the step reads: their graph's launches and replay time.
  size_t contextLaunches = 0;
  double contextMedianMs = 0;
  uint64_t weightBytes = 0;                   // the UNet's parameters in device memory
  uint64_t peakDeviceBytes = 0;               // device-local memory in use at the peak of building and running the UNet (weights included)
};

struct ComponentOutput {
  std::vector<float> values;
  StepCost cost;  // UNet only
};

// ids [N, S] -> last_hidden_state [N, S, D] (final layer norm applied).
ComponentOutput runTextEncoder(Context& ctx, const models::ModelFiles& m, DType dtype, const std::vector<float>& ids,
                               int64_t batch, int64_t seq);

// SDXL's two text encoders on their token ids [N, S]: hidden_states[-2] of each (what SDXL conditions on), the
// second's last_hidden_state and its pooled projection (text_embeds [N, P]).
struct SdxlTextOutputs {
  std::vector<float> penultimate, penultimate2, last2, textEmbeds2;
};
SdxlTextOutputs runSdxlTextEncoders(Context& ctx, const models::ModelFiles& m, DType dtype,
                                    const std::vector<float>& ids, const std::vector<float>& ids2, int64_t batch,
                                    int64_t seq);

// SDXL's added conditioning of a UNet step: text_embeds [B, P] and time_ids [B, 6] per sample.
struct AddedConditioning {
  std::vector<float> textEmbeds, timeIds;
};
// sample [B, C, H, W], context [B, S, D], one timestep -> noise prediction [B, C, H, W]; then `repetitions`
// timed replays of the same recorded step. As in the pipeline, the context's cross-attention K/V projections are
// a graph of their own, run once before the step, whose outputs the step reads (timed apart: contextMedianMs).
ComponentOutput runUNet(Context& ctx, const models::ModelFiles& m, DType dtype, const std::vector<float>& sample,
                        const std::vector<int64_t>& sampleShape, const std::vector<float>& context,
                        const std::vector<int64_t>& contextShape, float timestep, int repetitions,
                        const AddedConditioning* added = nullptr, ops::ConvTuner* tuner = nullptr);
// latents [1, C, h, w] as given to vae.decode -> image [1, 3, H, W].
ComponentOutput runVaeDecoder(Context& ctx, const models::ModelFiles& m, DType dtype, const std::vector<float>& latents,
                              const std::vector<int64_t>& latentShape, ops::ConvTuner* tuner = nullptr);

// image [1, 3, H, W] in [-1, 1] -> the encoder's latent mean [1, C, H/s, W/s].
ComponentOutput runVaeEncoder(Context& ctx, const models::ModelFiles& m, DType dtype, const std::vector<float>& image,
                              const std::vector<int64_t>& imageShape, ops::ConvTuner* tuner = nullptr);
// `tuner`: the convolutions' autotune (ops::ConvTuner; it must outlive the call), as the pipeline plans them
// (models/pipeline/text_to_image.cpp); null: the rule.

}  // namespace sdgen::check
