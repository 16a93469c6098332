#pragma once
// diffusers' UNet2DConditionModel (Stable Diffusion 1.x/2.x) on the fused layers. What each launch carries:
//   ResNet block   group-norm stats of the input (a skip concatenation is read in place, never stored);
//                  conv1 reading silu(norm(x)) with the block's time projection added in its epilogue;
//                  stats of h; conv2 reading silu(norm(h)) with the shortcut (identity, or a 1x1 conv stored
//                  first) added in its epilogue.
//   Transformer    stats; proj_in (linear or 1x1 conv: the same product on NHWC) reading norm(x); per block:
//                  layer-norm stats, fused QKV projection, flash attention, out projection + residual; stats, Q
//                  projection, fused K/V projection of the text context, attention, out projection + residual;
//                  stats, GEGLU projection, FF out projection reading a * gelu(b) + residual; proj_out + residual.
//                  The cross-attention K/V projections read only the text context: the same for every step of
//                  an image, so callers compute them once per image (buildContextProjections) and the step
//                  reads them (build's contextKv). Every block's K/V weights are one matrix, so that this is
//                  one GEMM, each block reading its columns of the result (SD 1.5 on the H200: 16 projections
//                  of 2 x 320..1280 columns were 64 launches and 0.33 ms; one of 24,960 columns, 3 and 0.11).
//   Up/down        the nearest upsampling is read by the following conv; stride-2 conv down.
//   Time           sinusoidal embedding read by linear_1 (silu epilogue), linear_2 (silu epilogue), and ONE
//                  GEMM computing every ResNet block's time projection side by side. SDXL's text_time added
//                  conditioning: add_embedding (linear_1 + silu, linear_2) of concat(pooled text embedding,
//                  sinusoids of the six time ids), added in time linear_2's epilogue before its silu.
#include <array>
#include <optional>
#include <span>
#include <vector>

#include "graph/graph.h"
#include "models/config/model_config.h"
#include "models/nn/layers.h"
#include "models/nn/parameters.h"
#include "models/networks/resnet_block.h"
#include "models/weight_source.h"
#include "ops/timestep_embedding.h"

namespace sdgen::networks {

class UNet {
 public:
  UNet(nn::ParameterStore& params, const models::UNetConfig& config, const models::WeightSource& weights);

  const models::UNetConfig& config() const { return config_; }
  // How much smaller the deepest level is than the input (latent sizes must be multiples of 8 / scale... any
  // size works: odd sizes upsample to the skip connection's size, as diffusers does).
  int downscale() const { return 1 << (static_cast<int>(config_.blockOutChannels.size()) - 1); }

  // sample [B, H, W, in] (NHWC), timesteps [B, 1], context [B, S, crossAttentionDim] -> writes [B, H, W, out].
  // contextKv: the cross-attention keys and values computed beforehand (contextProjectionShape,
  // buildContextProjections); null: projected from `context` inside the step.
  // addedConditioning: [B, projection_class_embeddings_input_dim], addedConditioningInput's rows; required
  // exactly when the config has addition_embed_type "text_time" (SDXL).
  void build(nn::Builder& b, const graph::Value& sample, const graph::Value& timesteps, const graph::Value& context,
             graph::TensorId out, const graph::Value* contextKv = nullptr,
             const graph::Value* addedConditioning = nullptr) const;

  bool hasAddedConditioning() const { return addLinear1_ != nullptr; }
  // One row of add_embedding's input, as diffusers' get_aug_embed builds it for "text_time":
  // concat(text_embeds, flatten(Timesteps(addition_time_embed_dim)(time_ids))), the sinusoids in float32 as torch
  // computes them. timeIds: original height, width, crop top, left, target height, width.
  std::vector<float> addedConditioningInput(std::span<const float> textEmbeds, std::span<const float> timeIds) const;

  // Every transformer block's cross-attention keys and values of a [batch, contextLength, dim] context, side by
  // side: [batch, contextLength, sum over blocks of 2 * channels] (a block's K then V in its columns); none
  // where the UNet has no cross-attention.
  std::optional<graph::Shape> contextProjectionShape(int64_t batch, int64_t contextLength) const;
  // Writes that projection of `context` into `out` (one GEMM).
  void buildContextProjections(nn::Builder& b, const graph::Value& context, graph::TensorId out) const;

 private:
  using Norm = NormWeights;
  struct Resnet {
    ResnetBlock block;
    int64_t timeOffset = 0;  // this block's columns in the fused time projection
  };
  struct TransformerBlock {
    Norm ln1, ln2, ln3;
    const ops::LinearWeights *qkv, *out1, *q2, *out2, *geglu, *ffOut;
    int64_t kvOffset = 0;     // this block's K/V columns in the fused context projection (contextProjections_)
    bool gegluFused = false;  // geglu interleaved: its GEMM stores value * gelu(gate) (ops/linear_geglu.h)
  };
  struct Transformer {
    int channels, heads;
    Norm norm;
    const ops::LinearWeights *projIn, *projOut;
    std::vector<TransformerBlock> blocks;
  };
  struct Level {  // one down or up block
    std::vector<Resnet> resnets;
    std::vector<Transformer> attentions;  // empty, or one per resnet
    const ops::Conv2dWeights* resample = nullptr;  // downsampler (stride 2) or upsampler conv
  };

  Resnet loadResnet(nn::ParameterStore& p, const models::ScopedWeights& w, int cin, int cout);
  Transformer loadTransformer(nn::ParameterStore& p, const models::ScopedWeights& w, int channels, int heads, int layers);
  graph::Value resnet(nn::Builder& b, const Resnet& r, const graph::Value& x, const graph::Value& timeProj,
                      const std::string& name) const;
  // contextKv: every block's cross-attention K/V side by side (contextProjectionShape).
  graph::Value transformer(nn::Builder& b, const Transformer& t, const graph::Value& x, const graph::Value& contextKv,
                           const std::string& name) const;

  models::UNetConfig config_;
  int timeDim_ = 0;
  std::unique_ptr<ops::TimestepEmbedding> timeProjection_;
  const ops::LinearWeights *timeLinear1_, *timeLinear2_, *resnetTimeProjections_;
  const ops::LinearWeights *addLinear1_ = nullptr, *addLinear2_ = nullptr;  // text_time add_embedding
  int64_t timeProjectionWidth_ = 0;
  std::vector<models::ScopedWeights> timeProjectionSources_;
  // Every block's to_k and to_v, in load order, fused into one matrix at the end of loading.
  const ops::LinearWeights* contextProjections_ = nullptr;
  std::vector<models::ScopedWeights> contextSources_;
  std::vector<int64_t> contextWidths_;
  int64_t contextWidth_ = 0;
  const ops::Conv2dWeights *convIn_, *convOut_;
  Norm normOut_;
  std::vector<Level> down_, up_;
  Resnet mid1_, mid2_;
  std::vector<Transformer> midAttention_;
  bool hasMid_ = false;
};

}  // namespace sdgen::networks
