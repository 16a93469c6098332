#pragma once
// The CLIP text transformer (transformers' CLIPTextModel) on the fused layers: token + position embeddings
// (a gather read straight into the first layer norm), pre-norm blocks of causal self-attention (one fused QKV
// projection, flash attention, out projection with the residual in its epilogue) and an MLP (quick_gelu or gelu
// in fc1's epilogue, the residual in fc2's), and the final layer norm. SD 1.x uses the last layer, SD 2.x a
// text encoder that already stops at OpenCLIP's penultimate layer; clip-skip stops earlier, as diffusers does
// (hidden_states[-(clip_skip + 1)] through the final layer norm). SDXL reads the raw hidden states of its two
// encoders (hiddenState) and the second one's pooled projection (pooledProjection, on the host).
#include <optional>
#include <span>
#include <vector>

#include "graph/graph.h"
#include "models/config/model_config.h"
#include "models/nn/layers.h"
#include "models/nn/parameters.h"
#include "models/weight_source.h"

namespace sdgen::networks {

class ClipTextEncoder {
 public:
  // withProjection: a CLIPTextModelWithProjection, whose text_projection.weight [projection_dim, hidden] is kept
  // on the host for pooledProjection.
  ClipTextEncoder(nn::ParameterStore& params, const models::ClipTextConfig& config, const models::WeightSource& weights,
                  bool withProjection = false);

  const models::ClipTextConfig& config() const { return config_; }
  int sequenceLength() const { return config_.maxPositionEmbeddings; }

  // ids: int32 [batch, sequenceLength] token ids on the device; writes [batch, sequenceLength, hidden] into `out`.
  void build(nn::Builder& b, const graph::TensorView& ids, int clipSkip, graph::TensorId out) const;

  // transformers' hidden_states[index] (0: the embeddings, k: the output of layer k, no final layer norm) as a
  // [batch, sequenceLength, hidden] value. With finalOut, the layers after `index` run too and the final layer
  // norm of the last one is stored into finalOut (what pooledProjection reads).
  graph::Value hiddenState(nn::Builder& b, const graph::TensorView& ids, int index,
                           std::optional<graph::TensorId> finalOut = std::nullopt) const;

  // CLIPTextModelWithProjection's text_embeds of one sequence, on the host: text_projection applied to the final
  // hidden state (`finalHidden`: [sequenceLength, hidden], as hiddenState's finalOut) at the pooled token, which
  // transformers picks as the highest id when eos_token_id is the legacy 2, else the first eos_token_id.
  std::vector<float> pooledProjection(std::span<const float> finalHidden, std::span<const int32_t> ids) const;

 private:
  struct Layer {
    const nn::DeviceTensor *ln1Gamma, *ln1Beta, *ln2Gamma, *ln2Beta;
    const ops::LinearWeights *qkv, *outProj, *fc1, *fc2;
  };
  models::ClipTextConfig config_;
  const nn::DeviceTensor* tokenEmbedding_;
  const nn::DeviceTensor* positionEmbedding_;
  std::vector<Layer> layers_;
  const nn::DeviceTensor *finalGamma_, *finalBeta_;
  std::vector<float> projection_;  // text_projection.weight [projectionDim, hidden] (withProjection)
};

}  // namespace sdgen::networks
