#include "models/networks/unet.h"

#include <cmath>
#include <tuple>

#include "engine/error.h"

namespace sdgen::networks {

using graph::Expr;
using graph::Value;
using models::ScopedWeights;

namespace {

constexpr float kTransformerNormEps = 1e-6f;  // Transformer2DModel's group norm
constexpr float kLayerNormEps = 1e-5f;        // BasicTransformerBlock's layer norms

bool isCrossAttention(const std::string& blockType) {
  return blockType == "CrossAttnDownBlock2D" || blockType == "CrossAttnUpBlock2D";
}

void checkConfig(const models::UNetConfig& c) {
  const size_t levels = c.blockOutChannels.size();
  auto fail = [](const std::string& why) { throw Error("UNet config: " + why); };
  if (levels == 0) fail("block_out_channels is empty");
  if (c.downBlockTypes.size() != levels || c.upBlockTypes.size() != levels)
    fail("down_block_types and up_block_types need one entry per block_out_channels entry (" +
         std::to_string(levels) + ")");
  if (c.layersPerBlock.size() != levels || c.attentionHeads.size() != levels ||
      c.transformerLayersPerBlock.size() != levels)
    fail("layers_per_block, attention heads and transformer_layers_per_block need one entry per block");
  for (int ch : c.blockOutChannels)
    if (ch % c.normNumGroups) fail("channels " + std::to_string(ch) + " are not divisible by norm_num_groups");
  if (c.downsamplePadding != 1) fail("downsample_padding " + std::to_string(c.downsamplePadding) + " (only 1)");
  if (c.convInKernel % 2 == 0 || c.convOutKernel % 2 == 0) fail("conv_in/conv_out kernels must be odd");
}

}  // namespace

UNet::Resnet UNet::loadResnet(nn::ParameterStore& p, const ScopedWeights& w, int cin, int cout) {
  Resnet r{ResnetBlock(p, w, cin, cout, config_.normNumGroups, config_.normEps), timeProjectionWidth_};
  timeProjectionWidth_ += cout;
  timeProjectionSources_.push_back(w["time_emb_proj"]);
  return r;
}

UNet::Transformer UNet::loadTransformer(nn::ParameterStore& p, const ScopedWeights& w, int c, int heads, int layers) {
  if (heads <= 0 || c % heads)
    throw Error("UNet: " + std::to_string(c) + " channels cannot be split into " + std::to_string(heads) + " heads (" +
                w.prefix() + ")");
  Transformer t;
  t.channels = c;
  t.heads = heads;
  t.norm = Norm::load(p, w["norm"], c);
  t.projIn = &p.linear(w["proj_in"], c, c);
  const int64_t inner = 4 * int64_t(c);
  for (int j = 0; j < layers; ++j) {
    auto bw = w["transformer_blocks"][std::to_string(j)];
    auto a1 = bw["attn1"], a2 = bw["attn2"];
    TransformerBlock blk;
    blk.ln1 = Norm::load(p, bw["norm1"], c);
    blk.qkv = &p.linearConcat({a1["to_q"], a1["to_k"], a1["to_v"]}, c, {c, c, c}, false);
    blk.out1 = &p.linear(a1["to_out"]["0"], c, c);
    blk.ln2 = Norm::load(p, bw["norm2"], c);
    blk.q2 = &p.linear(a2["to_q"], c, c, false);
    blk.kvOffset = contextWidth_;  // its K and V join the fused context projection (made after every block)
    contextSources_.insert(contextSources_.end(), {a2["to_k"], a2["to_v"]});
    contextWidths_.insert(contextWidths_.end(), {c, c});
    contextWidth_ += 2 * int64_t(c);
    blk.out2 = &p.linear(a2["to_out"]["0"], c, c);
    blk.ln3 = Norm::load(p, bw["norm3"], c);
    blk.geglu = &p.linearGeglu(bw["ff"]["net"]["0"]["proj"], c, inner, blk.gegluFused);
    blk.ffOut = &p.linear(bw["ff"]["net"]["2"], inner, c);
    t.blocks.push_back(blk);
  }
  t.projOut = &p.linear(w["proj_out"], c, c);
  return t;
}

UNet::UNet(nn::ParameterStore& p, const models::UNetConfig& config, const models::WeightSource& weights)
    : config_(config) {
  checkConfig(config);
  nn::ParameterStore::Transaction load(p);
  const auto& ch = config.blockOutChannels;
  const int levels = static_cast<int>(ch.size());
  ScopedWeights root(weights);
  const int c0 = ch[0];
  timeDim_ = 4 * c0;
  timeProjection_ = std::make_unique<ops::TimestepEmbedding>(p.context(), c0, config.flipSinToCos, config.freqShift);
  timeLinear1_ = &p.linear(root["time_embedding"]["linear_1"], c0, timeDim_);
  timeLinear2_ = &p.linear(root["time_embedding"]["linear_2"], timeDim_, timeDim_);
  if (config.additionEmbedType == "text_time") {
    addLinear1_ = &p.linear(root["add_embedding"]["linear_1"], config.projectionClassEmbeddingsInputDim, timeDim_);
    addLinear2_ = &p.linear(root["add_embedding"]["linear_2"], timeDim_, timeDim_);
  } else if (!config.additionEmbedType.empty()) {
    throw Error("UNet config: addition_embed_type '" + config.additionEmbedType + "' is not supported (text_time)");
  }
  convIn_ = &p.conv(root["conv_in"], config.inChannels, c0, ops::Conv2dParams::square(config.convInKernel));

  int out = c0;
  for (int i = 0; i < levels; ++i) {
    auto w = root["down_blocks"][std::to_string(i)];
    int in = out;
    out = ch[i];
    Level level;
    for (int j = 0; j < config.layersPerBlock[i]; ++j) {
      level.resnets.push_back(loadResnet(p, w["resnets"][std::to_string(j)], j == 0 ? in : out, out));
      if (isCrossAttention(config.downBlockTypes[i]))
        level.attentions.push_back(loadTransformer(p, w["attentions"][std::to_string(j)], out,
                                                   config.attentionHeads[i], config.transformerLayersPerBlock[i]));
    }
    if (i < levels - 1) level.resample = &p.conv(w["downsamplers"]["0"]["conv"], out, out, ops::Conv2dParams::square(3, 2));
    down_.push_back(std::move(level));
  }

  hasMid_ = !config.midBlockType.empty();
  if (hasMid_) {
    if (config.midBlockType != "UNetMidBlock2DCrossAttn")
      throw Error("UNet config: mid_block_type '" + config.midBlockType + "' is not supported");
    auto w = root["mid_block"];
    mid1_ = loadResnet(p, w["resnets"]["0"], ch.back(), ch.back());
    midAttention_.push_back(loadTransformer(p, w["attentions"]["0"], ch.back(), config.attentionHeads.back(),
                                            config.transformerLayersPerBlock.back()));
    mid2_ = loadResnet(p, w["resnets"]["1"], ch.back(), ch.back());
  }

  // Up blocks run the levels in reverse; each has one more resnet than its down block, and resnet j reads the
  // previous output concatenated with a skip: the last skip of a block comes from the level below's input.
  out = ch.back();
  for (int i = 0; i < levels; ++i) {
    const int rev = levels - 1 - i;
    auto w = root["up_blocks"][std::to_string(i)];
    int prev = out;
    out = ch[rev];
    int in = ch[std::max(rev - 1, 0)];
    Level level;
    const int layers = config.layersPerBlock[rev] + 1;
    for (int j = 0; j < layers; ++j) {
      int skip = j == layers - 1 ? in : out;
      int resIn = j == 0 ? prev : out;
      level.resnets.push_back(loadResnet(p, w["resnets"][std::to_string(j)], resIn + skip, out));
      if (isCrossAttention(config.upBlockTypes[i]))
        level.attentions.push_back(loadTransformer(p, w["attentions"][std::to_string(j)], out,
                                                   config.attentionHeads[rev], config.transformerLayersPerBlock[rev]));
    }
    if (i < levels - 1)  // reads a nearest 2x upsampling: its phase filters made at load
      level.resample = &p.conv(w["upsamplers"]["0"]["conv"], out, out, ops::Conv2dParams::square(3), true, true);
    up_.push_back(std::move(level));
  }

  normOut_ = Norm::load(p, root["conv_norm_out"], c0);
  convOut_ = &p.conv(root["conv_out"], c0, config.outChannels, ops::Conv2dParams::square(config.convOutKernel));

  std::vector<int64_t> widths;
  for (const auto& r : timeProjectionSources_) widths.push_back(r.shape("weight").at(0));
  resnetTimeProjections_ = &p.linearConcat(timeProjectionSources_, timeDim_, widths, true);
  if (!contextSources_.empty())
    contextProjections_ = &p.linearConcat(contextSources_, config.crossAttentionDim, contextWidths_, false);
  load.commit();  // the weights are on the device when the constructor returns
}

Value UNet::resnet(nn::Builder& b, const Resnet& r, const Value& x, const Value& timeProj,
                   const std::string& name) const {
  const int64_t off = r.timeOffset, cout = r.block.cout(), batch = x.shape[0];
  nn::Epilogue addTime{{timeProj}, [=](const Expr& out, const std::vector<Expr>& in) {
                         return out + graph::reshape(graph::slice(in[0], 1, off, cout), {batch, 1, 1, cout});
                       }};
  return r.block(b, x, addTime, name);
}

Value UNet::transformer(nn::Builder& b, const Transformer& t, const Value& x, const Value& contextKv,
                        const std::string& name) const {
  const int64_t batch = x.shape[0], hgt = x.shape[1], wid = x.shape[2], c = t.channels;
  const int64_t seq = hgt * wid, heads = t.heads, hd = c / heads, ctxLen = contextKv.shape[1];
  Value n = b.groupNorm(x, *t.norm.gamma, *t.norm.beta, config_.normNumGroups, kTransformerNormEps, name + " norm");
  Value tokens = b.map(n, [=](const Expr& e) { return graph::reshape(e, {batch, seq, c}); });
  // Each block's norms are written beside the product before them (nn::Builder::linearThenLayerNorm: in the same
  // launch where that product ends in a split-K sum): proj_in with block 0's norm1, the output projections with
  // norm2 and norm3, ff out with the next block's norm1.
  auto blockName = [&](size_t j) { return name + " block " + std::to_string(j); };
  Value h, x1;
  if (t.blocks.empty()) {
    h = b.linear(tokens, *t.projIn, {}, {name + " proj_in"});
  } else {
    const auto& ln1 = t.blocks[0].ln1;
    std::tie(h, x1) = b.linearThenLayerNorm(tokens, *t.projIn, {}, {name + " proj_in"}, *ln1.gamma, *ln1.beta,
                                            kLayerNormEps, blockName(0) + " norm1");
  }
  auto split = [&](const Value& v, int part, int64_t len) {  // part `part` of a fused projection, as heads
    return b.map(v, [=](const Expr& e) {
      return graph::reshape(graph::sliceLastDim(e, part * c, c), {batch, len, heads, hd});
    });
  };
  for (size_t j = 0; j < t.blocks.size(); ++j) {
    const TransformerBlock& blk = t.blocks[j];
    const std::string bn = blockName(j);
    Value qkv = b.linear(x1, *blk.qkv, {}, {bn + " attn1 qkv"});
    Value a1 = b.attention(split(qkv, 0, seq), split(qkv, 1, seq), split(qkv, 2, seq), {},
                           {bn + " attn1"});
    Value x2;
    std::tie(h, x2) = b.linearThenLayerNorm(a1, *blk.out1, nn::residual(h), {bn + " attn1 out"}, *blk.ln2.gamma,
                                            *blk.ln2.beta, kLayerNormEps, bn + " norm2");
    Value q = b.linear(x2, *blk.q2, {}, {bn + " attn2 q"});
    const int64_t kvOffset = blk.kvOffset;  // a view of the stored projection: its slices stay raw heads
    Value kv = b.map(contextKv, [=](const Expr& e) { return graph::sliceLastDim(e, kvOffset, 2 * c); });
    Value qh = b.map(q, [=](const Expr& e) { return graph::reshape(e, {batch, seq, heads, hd}); });
    Value a2 = b.attention(qh, split(kv, 0, ctxLen), split(kv, 1, ctxLen), {}, {bn + " attn2"});
    Value x3;
    std::tie(h, x3) = b.linearThenLayerNorm(a2, *blk.out2, nn::residual(h), {bn + " attn2 out"}, *blk.ln3.gamma,
                                            *blk.ln3.beta, kLayerNormEps, bn + " norm3");
    const int64_t inner = blk.ffOut->inFeatures();
    Value gated = blk.gegluFused ? b.gegluLinear(x3, *blk.geglu, {bn + " ff geglu"}) : Value{};
    if (!blk.gegluFused) {
      Value proj = b.linear(x3, *blk.geglu, {}, {bn + " ff geglu"});
      gated = b.map(proj, [=](const Expr& e) {
        return graph::sliceLastDim(e, 0, inner) * graph::gelu(graph::sliceLastDim(e, inner, inner));
      });
    }
    if (j + 1 == t.blocks.size()) {
      h = b.linear(gated, *blk.ffOut, nn::residual(h), {bn + " ff out"});
    } else {
      const auto& next = t.blocks[j + 1].ln1;
      std::tie(h, x1) = b.linearThenLayerNorm(gated, *blk.ffOut, nn::residual(h), {bn + " ff out"}, *next.gamma,
                                              *next.beta, kLayerNormEps, blockName(j + 1) + " norm1");
    }
  }
  Value residualTokens = b.map(x, [=](const Expr& e) { return graph::reshape(e, {batch, seq, c}); });
  Value outTokens = b.linear(h, *t.projOut, nn::residual(residualTokens), {name + " proj_out"});
  return b.map(outTokens, [=](const Expr& e) { return graph::reshape(e, {batch, hgt, wid, c}); });
}

std::optional<graph::Shape> UNet::contextProjectionShape(int64_t batch, int64_t contextLength) const {
  if (!contextProjections_) return std::nullopt;
  return graph::Shape{batch, contextLength, contextWidth_};
}

void UNet::buildContextProjections(nn::Builder& b, const Value& context, graph::TensorId out) const {
  if (context.shape.size() != 3 || context.shape[2] != config_.crossAttentionDim)
    throw Error("UNet: text context must be [B, S, " + std::to_string(config_.crossAttentionDim) + "], got " +
                graph::shapeString(context.shape));
  if (!contextProjections_) throw Error("UNet: no cross-attention, so no context projections");
  b.linear(context, *contextProjections_, {}, {"context kv", out});
}

std::vector<float> UNet::addedConditioningInput(std::span<const float> textEmbeds,
                                                std::span<const float> timeIds) const {
  const int dim = config_.additionTimeEmbedDim, half = dim / 2;
  // SDXL base: six time ids; the refiner: five (its aesthetic score in place of the target size).
  if (!hasAddedConditioning() ||
      int(textEmbeds.size()) + int(timeIds.size()) * dim != config_.projectionClassEmbeddingsInputDim)
    throw Error("UNet: added conditioning of " + std::to_string(textEmbeds.size()) + " text embedding values and " +
                std::to_string(timeIds.size()) + " time ids for "
                "projection_class_embeddings_input_dim " + std::to_string(config_.projectionClassEmbeddingsInputDim) +
                " and addition_time_embed_dim " + std::to_string(dim));
  std::vector<float> row(textEmbeds.begin(), textEmbeds.end());
  // diffusers' get_timestep_embedding, step by step in float32 (the scalars rounded to float first, as torch does).
  const float logPeriod = float(-std::log(10000.0)), denominator = float(half) - config_.freqShift;
  std::vector<float> freq(half);
  for (int i = 0; i < half; ++i) freq[i] = std::exp(logPeriod * float(i) / denominator);
  for (float t : timeIds) {
    std::vector<float> sinPart(half), cosPart(half);
    for (int i = 0; i < half; ++i) {
      const float arg = t * freq[i];
      sinPart[i] = std::sin(arg);
      cosPart[i] = std::cos(arg);
    }
    const auto& first = config_.flipSinToCos ? cosPart : sinPart;
    const auto& second = config_.flipSinToCos ? sinPart : cosPart;
    row.insert(row.end(), first.begin(), first.end());
    row.insert(row.end(), second.begin(), second.end());
  }
  return row;
}

void UNet::build(nn::Builder& b, const Value& sample, const Value& timesteps, const Value& context,
                 graph::TensorId out, const Value* contextKv, const Value* addedConditioning) const {
  if (sample.shape.size() != 4 || sample.shape[3] != config_.inChannels)
    throw Error("UNet: sample must be NHWC [B, H, W, " + std::to_string(config_.inChannels) + "], got " +
                graph::shapeString(sample.shape));
  const int64_t batch = sample.shape[0];
  if (context.shape.size() != 3 || context.shape[0] != batch || context.shape[2] != config_.crossAttentionDim)
    throw Error("UNet: text context must be [" + std::to_string(batch) + ", S, " +
                std::to_string(config_.crossAttentionDim) + "], got " + graph::shapeString(context.shape) +
                " (does the text encoder's width match the UNet's cross_attention_dim?)");
  if (timesteps.shape != graph::Shape{batch, 1})
    throw Error("UNet: timesteps must be [" + std::to_string(batch) + ", 1], got " + graph::shapeString(timesteps.shape));

  // Every block's cross-attention K/V: given (once per image), or projected here; empty without cross-attention.
  const std::optional<graph::Shape> kvShape = contextProjectionShape(batch, context.shape[1]);
  Value kv;
  if (contextKv) {
    if (!kvShape || contextKv->shape != *kvShape)
      throw Error("UNet: the precomputed context projection is " + graph::shapeString(contextKv->shape) + ", expected " +
                  (kvShape ? graph::shapeString(*kvShape) : std::string("none (no cross-attention)")));
    kv = *contextKv;
  } else if (kvShape) {
    kv = b.linear(context, *contextProjections_, {}, {"context kv"});
  }

  // Time: sinusoidal features -> linear_1 + silu -> linear_2 + silu (every consumer applies silu first) ->
  // all ResNet time projections in one GEMM.
  const ops::TimestepEmbedding* tproj = timeProjection_.get();
  Value features = b.map(timesteps, [tproj](const Expr& t) { return (*tproj)(t); });
  Value t1 = b.linear(features, *timeLinear1_, nn::activation(graph::silu), {"time linear_1"});
  if (hasAddedConditioning() != (addedConditioning != nullptr))
    throw Error(hasAddedConditioning() ? "UNet: this UNet (addition_embed_type text_time) needs the added conditioning"
                                       : "UNet: added conditioning given to a UNet without addition_embed_type");
  nn::Epilogue timeEpilogue = nn::activation(graph::silu);
  if (addedConditioning) {
    const graph::Shape want{batch, config_.projectionClassEmbeddingsInputDim};
    if (addedConditioning->shape != want)
      throw Error("UNet: added conditioning must be " + graph::shapeString(want) + ", got " +
                  graph::shapeString(addedConditioning->shape));
    Value a1 = b.linear(*addedConditioning, *addLinear1_, nn::activation(graph::silu), {"add_embedding linear_1"});
    Value a2 = b.linear(a1, *addLinear2_, {}, {"add_embedding linear_2"});
    // diffusers: emb = time_embedding(t) + add_embedding(...), and every consumer applies silu to emb.
    timeEpilogue = {{a2}, [](const Expr& o, const std::vector<Expr>& in) { return graph::silu(o + in[0]); }};
  }
  Value t2 = b.linear(t1, *timeLinear2_, timeEpilogue, {"time linear_2"});
  Value timeProj = b.linear(t2, *resnetTimeProjections_, {}, {"resnet time projections"});

  Value h = b.conv2d(sample, *convIn_, {}, {"conv_in"});
  std::vector<Value> skips{h};
  for (size_t i = 0; i < down_.size(); ++i) {
    const Level& level = down_[i];
    const std::string name = "down " + std::to_string(i);
    for (size_t j = 0; j < level.resnets.size(); ++j) {
      h = resnet(b, level.resnets[j], h, timeProj, name + " resnet " + std::to_string(j));
      if (!level.attentions.empty())
        h = transformer(b, level.attentions[j], h, kv, name + " attention " + std::to_string(j));
      skips.push_back(h);
    }
    if (level.resample) {
      h = b.conv2d(h, *level.resample, {}, {name + " downsample"});
      skips.push_back(h);
    }
  }
  if (hasMid_) {
    h = resnet(b, mid1_, h, timeProj, "mid resnet 0");
    h = transformer(b, midAttention_[0], h, kv, "mid attention");
    h = resnet(b, mid2_, h, timeProj, "mid resnet 1");
  }
  for (size_t i = 0; i < up_.size(); ++i) {
    const Level& level = up_[i];
    const std::string name = "up " + std::to_string(i);
    for (size_t j = 0; j < level.resnets.size(); ++j) {
      Value skip = skips.back();
      skips.pop_back();
      Value joined = b.zip(h, skip, [](const Expr& a, const Expr& s) { return graph::concat(a, s, 3); });
      h = resnet(b, level.resnets[j], joined, timeProj, name + " resnet " + std::to_string(j));
      if (!level.attentions.empty())
        h = transformer(b, level.attentions[j], h, kv, name + " attention " + std::to_string(j));
    }
    if (level.resample) {
      // diffusers upsamples to the next skip's size (twice the size, except after odd sizes were halved).
      const int64_t th = skips.back().shape[1], tw = skips.back().shape[2];
      Value up = b.map(h, [=](const Expr& e) { return graph::resizeNearest(e, th, tw); });
      h = b.conv2d(up, *level.resample, {}, {name + " upsample"});
    }
  }
  Value n = b.groupNorm(h, *normOut_.gamma, *normOut_.beta, config_.normNumGroups, config_.normEps, "norm_out",
                        /*silu=*/true);
  b.conv2d(n, *convOut_, {}, {"conv_out", out});
}

}  // namespace sdgen::networks
