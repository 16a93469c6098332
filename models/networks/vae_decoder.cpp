#include "models/networks/vae_decoder.h"

#include "engine/error.h"

namespace sdgen::networks {

using graph::Expr;
using graph::Value;
using models::ScopedWeights;

namespace {
constexpr float kEps = 1e-6f;
}

SpatialSelfAttention::SpatialSelfAttention(nn::ParameterStore& p, const ScopedWeights& w, int channels, int groups)
    : channels_(channels), groups_(groups) {
  norm_ = NormWeights::load(p, w["group_norm"], channels);
  qkv_ = &p.linearConcat({w["to_q"], w["to_k"], w["to_v"]}, channels, {channels, channels, channels}, true);
  out_ = &p.linear(w["to_out"]["0"], channels, channels);
}

Value SpatialSelfAttention::operator()(nn::Builder& b, const Value& x, const std::string& name) const {
  const int64_t batch = x.shape[0], hgt = x.shape[1], wid = x.shape[2], c = channels_, seq = hgt * wid;
  Value n = b.groupNorm(x, *norm_.gamma, *norm_.beta, groups_, kEps, name + " norm");
  Value tokens = b.map(n, [=](const Expr& e) { return graph::reshape(e, {batch, seq, c}); });
  Value qkv = b.linear(tokens, *qkv_, {}, {name + " qkv"});
  auto part = [&](int i) {
    return b.map(qkv, [=](const Expr& e) { return graph::reshape(graph::sliceLastDim(e, i * c, c), {batch, seq, 1, c}); });
  };
  Value a = b.attention(part(0), part(1), part(2), {}, {name});
  Value residual = b.map(x, [=](const Expr& e) { return graph::reshape(e, {batch, seq, c}); });
  Value out = b.linear(a, *out_, nn::residual(residual), {name + " out"});
  return b.map(out, [=](const Expr& e) { return graph::reshape(e, {batch, hgt, wid, c}); });
}

void checkVaeChannels(const models::VaeConfig& config) {
  if (config.blockOutChannels.empty()) throw Error("VAE config: block_out_channels is empty");
  for (int c : config.blockOutChannels)
    if (c % config.normNumGroups)
      throw Error("VAE config: channels " + std::to_string(c) + " are not divisible by norm_num_groups " +
                  std::to_string(config.normNumGroups));
}

VaeDecoder::VaeDecoder(nn::ParameterStore& p, const models::VaeConfig& config, const models::WeightSource& weights)
    : config_(config) {
  checkVaeChannels(config);
  nn::ParameterStore::Transaction load(p);
  const auto& ch = config.blockOutChannels;
  ScopedWeights root(weights);
  const int groups = config.normNumGroups, lc = config.latentChannels;
  if (config.usePostQuantConv) postQuant_ = &p.linear(root["post_quant_conv"], lc, lc);
  ScopedWeights dec = root["decoder"];
  const int top = ch.back();
  convIn_ = &p.conv(dec["conv_in"], lc, top, ops::Conv2dParams::square(3));
  mid1_ = ResnetBlock(p, dec["mid_block"]["resnets"]["0"], top, top, groups, kEps);
  if (config.midBlockAddAttention) midAttention_.emplace(p, dec["mid_block"]["attentions"]["0"], top, groups);
  mid2_ = ResnetBlock(p, dec["mid_block"]["resnets"]["1"], top, top, groups, kEps);
  const int levels = static_cast<int>(ch.size());
  int out = top;
  for (int i = 0; i < levels; ++i) {
    auto w = dec["up_blocks"][std::to_string(i)];
    int in = out;
    out = ch[levels - 1 - i];
    Level level;
    for (int j = 0; j <= config.layersPerBlock; ++j)
      level.resnets.emplace_back(p, w["resnets"][std::to_string(j)], j == 0 ? in : out, out, groups, kEps);
    if (i < levels - 1)  // reads a nearest 2x upsampling: its phase filters made at load
      level.upsample = &p.conv(w["upsamplers"]["0"]["conv"], out, out, ops::Conv2dParams::square(3), true, true);
    up_.push_back(std::move(level));
  }
  normOut_ = NormWeights::load(p, dec["conv_norm_out"], ch.front());
  convOut_ = &p.conv(dec["conv_out"], ch.front(), config.outChannels, ops::Conv2dParams::square(3));
  load.commit();  // the weights are on the device when the constructor returns
}

void VaeDecoder::build(nn::Builder& b, const Value& latents, graph::TensorId out) const {
  if (latents.shape.size() != 4 || latents.shape[3] != config_.latentChannels)
    throw Error("VAE decoder: latents must be NHWC [B, h, w, " + std::to_string(config_.latentChannels) + "], got " +
                graph::shapeString(latents.shape));
  Value z = postQuant_ ? b.linear(latents, *postQuant_, {}, {"post_quant_conv"}) : latents;
  Value h = b.conv2d(z, *convIn_, {}, {"decoder conv_in"});
  h = mid1_(b, h, {}, "decoder mid resnet 0");
  if (midAttention_) h = (*midAttention_)(b, h, "decoder mid attention");
  h = mid2_(b, h, {}, "decoder mid resnet 1");
  for (size_t i = 0; i < up_.size(); ++i) {
    const std::string name = "decoder up " + std::to_string(i);
    for (size_t j = 0; j < up_[i].resnets.size(); ++j) h = up_[i].resnets[j](b, h, {}, name + " resnet " + std::to_string(j));
    if (up_[i].upsample) h = b.conv2d(b.map(h, graph::upsample2x), *up_[i].upsample, {}, {name + " upsample"});
  }
  const int groups = config_.normNumGroups;
  Value n = b.groupNorm(h, *normOut_.gamma, *normOut_.beta, groups, kEps, "decoder norm_out", /*silu=*/true);
  b.conv2d(n, *convOut_, {}, {"decoder conv_out", out});
}

}  // namespace sdgen::networks
