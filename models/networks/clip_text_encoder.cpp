#include "models/networks/clip_text_encoder.h"

#include <cmath>

#include "engine/error.h"

namespace sdgen::networks {

using graph::Expr;
using graph::Value;

ClipTextEncoder::ClipTextEncoder(nn::ParameterStore& params, const models::ClipTextConfig& config,
                                 const models::WeightSource& weights, bool withProjection)
    : config_(config) {
  nn::ParameterStore::Transaction load(params);
  const int64_t d = config.hiddenSize, inner = config.intermediateSize;
  if (config.hiddenAct != "quick_gelu" && config.hiddenAct != "gelu")
    throw Error("text encoder: unsupported hidden_act '" + config.hiddenAct + "' (quick_gelu or gelu)");
  if (d % config.numAttentionHeads)
    throw Error("text encoder: hidden size " + std::to_string(d) + " is not divisible by " +
                std::to_string(config.numAttentionHeads) + " heads");
  models::ScopedWeights root(weights, "text_model.");
  auto emb = root["embeddings"];
  // The embedding table is read by a gather and the positions by an add: stored like the activations.
  tokenEmbedding_ = &params.tensor(emb["token_embedding"], "weight", {config.vocabSize, d}, params.storage());
  positionEmbedding_ =
      &params.tensor(emb["position_embedding"], "weight", {config.maxPositionEmbeddings, d}, params.storage());
  for (int i = 0; i < config.numHiddenLayers; ++i) {
    auto l = root["encoder"]["layers"][std::to_string(i)];
    auto attn = l["self_attn"];
    Layer layer;
    layer.ln1Gamma = &params.tensor(l["layer_norm1"], "weight", {d});
    layer.ln1Beta = &params.tensor(l["layer_norm1"], "bias", {d});
    layer.qkv = &params.linearConcat({attn["q_proj"], attn["k_proj"], attn["v_proj"]}, d, {d, d, d}, true);
    layer.outProj = &params.linear(attn["out_proj"], d, d);
    layer.ln2Gamma = &params.tensor(l["layer_norm2"], "weight", {d});
    layer.ln2Beta = &params.tensor(l["layer_norm2"], "bias", {d});
    layer.fc1 = &params.linear(l["mlp"]["fc1"], d, inner);
    layer.fc2 = &params.linear(l["mlp"]["fc2"], inner, d);
    layers_.push_back(layer);
  }
  finalGamma_ = &params.tensor(root["final_layer_norm"], "weight", {d});
  finalBeta_ = &params.tensor(root["final_layer_norm"], "bias", {d});
  if (withProjection) projection_ = weights.read("text_projection.weight", {config.projectionDim, d});
  load.commit();  // the weights are on the device when the constructor returns
}

void ClipTextEncoder::build(nn::Builder& b, const graph::TensorView& ids, int clipSkip, graph::TensorId out) const {
  if (clipSkip < 0 || clipSkip >= config_.numHiddenLayers)
    throw Error("clip skip " + std::to_string(clipSkip) + " is out of range for a text encoder of " +
                std::to_string(config_.numHiddenLayers) + " layers (0.." + std::to_string(config_.numHiddenLayers - 1) +
                ")");
  Value h = hiddenState(b, ids, config_.numHiddenLayers - clipSkip);
  b.store(b.layerNorm(h, *finalGamma_, *finalBeta_, config_.layerNormEps, "text final ln"), {"text embeddings", out});
}

Value ClipTextEncoder::hiddenState(nn::Builder& b, const graph::TensorView& ids, int index,
                                   std::optional<graph::TensorId> finalOut) const {
  const int64_t d = config_.hiddenSize, heads = config_.numAttentionHeads, hd = d / heads;
  const int64_t s = config_.maxPositionEmbeddings;
  if (ids.shape.size() != 2 || ids.shape[1] != s || !ids.isInt32)
    throw Error("text encoder: token ids must be int32 [batch, " + std::to_string(s) + "], got " +
                graph::shapeString(ids.shape));
  if (index < 0 || index > config_.numHiddenLayers)
    throw Error("text encoder: hidden state " + std::to_string(index) + " is out of range for " +
                std::to_string(config_.numHiddenLayers) + " layers");
  const int64_t batch = ids.shape[0];
  graph::TensorView table = tokenEmbedding_->view, positions = positionEmbedding_->view;
  Value h{{batch, s, d}, {}, [=](const graph::Resolver&) {
            return graph::gather(graph::buffer(table), ids) + graph::buffer(positions);
          },
          2};
  const bool quick = config_.hiddenAct == "quick_gelu";
  const float eps = config_.layerNormEps;
  const int run = finalOut ? config_.numHiddenLayers : index;
  Value chosen = h;
  for (int i = 0; i < run; ++i) {
    const Layer& l = layers_[i];
    const std::string name = "text layer " + std::to_string(i);
    Value x = b.layerNorm(h, *l.ln1Gamma, *l.ln1Beta, eps, name + " ln1");
    Value qkv = b.linear(x, *l.qkv, {}, {name + " qkv"});
    auto head = [&](int part) {
      return b.map(qkv, [=](const Expr& t) {
        return graph::reshape(graph::sliceLastDim(t, part * d, d), {batch, s, heads, hd});
      });
    };
    Value a = b.attention(head(0), head(1), head(2), {.causal = true}, {name + " attention"});
    h = b.linear(a, *l.outProj, nn::residual(h), {name + " out"});
    x = b.layerNorm(h, *l.ln2Gamma, *l.ln2Beta, eps, name + " ln2");
    Value m = b.linear(x, *l.fc1, nn::activation(quick ? graph::quickGelu : graph::gelu), {name + " fc1"});
    h = b.linear(m, *l.fc2, nn::residual(h), {name + " fc2"});
    if (i + 1 == index) chosen = h;
  }
  if (finalOut) b.store(b.layerNorm(h, *finalGamma_, *finalBeta_, eps, "text final ln"), {"text final hidden", *finalOut});
  return chosen;
}

std::vector<float> ClipTextEncoder::pooledProjection(std::span<const float> finalHidden,
                                                     std::span<const int32_t> ids) const {
  const size_t d = size_t(config_.hiddenSize), s = size_t(config_.maxPositionEmbeddings);
  if (projection_.empty()) throw Error("text encoder: pooled projection of an encoder loaded without text_projection");
  if (finalHidden.size() != s * d || ids.size() != s)
    throw Error("text encoder: pooled projection needs one sequence of " + std::to_string(s) + " tokens");
  size_t at = 0;
  if (config_.eosTokenId == 2) {  // transformers' legacy configs: the first position of the highest id
    for (size_t i = 1; i < s; ++i)
      if (ids[i] > ids[at]) at = i;
  } else {  // the first eos_token_id (none: position 0, as argmax of all zeros)
    while (at < s && ids[at] != config_.eosTokenId) ++at;
    if (at == s) at = 0;
  }
  const size_t p = size_t(config_.projectionDim);
  std::vector<float> out(p);
  const float* x = finalHidden.data() + at * d;
  for (size_t o = 0; o < p; ++o) {
    double acc = 0;
    for (size_t k = 0; k < d; ++k) acc += double(projection_[o * d + k]) * x[k];
    out[o] = float(acc);
  }
  return out;
}

}  // namespace sdgen::networks
