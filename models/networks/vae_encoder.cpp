#include "models/networks/vae_encoder.h"

#include "engine/error.h"

namespace sdgen::networks {

using graph::Expr;
using graph::Value;
using models::ScopedWeights;

namespace {

constexpr float kEps = 1e-6f;

// diffusers' Downsample2D with padding 0: F.pad(x, (0, 1, 0, 1)) then a 3x3 stride-2 conv without padding. The
// zero row and column are read in place by the conv's input expression.
Expr padBottomRight(const Expr& x) {
  const graph::Shape& s = x.shape();  // [B, H, W, C]
  Expr rows = graph::concat(x, graph::broadcast(graph::constant(0.f), {s[0], 1, s[2], s[3]}), 1);
  return graph::concat(rows, graph::broadcast(graph::constant(0.f), {s[0], s[1] + 1, 1, s[3]}), 2);
}

}  // namespace

VaeEncoder::VaeEncoder(nn::ParameterStore& p, const models::VaeConfig& config, const models::WeightSource& weights)
    : config_(config) {
  checkVaeChannels(config);
  nn::ParameterStore::Transaction load(p);
  const auto& ch = config.blockOutChannels;
  ScopedWeights root(weights);
  ScopedWeights enc = root["encoder"];
  const int groups = config.normNumGroups, lc = config.latentChannels;
  convIn_ = &p.conv(enc["conv_in"], config.inChannels, ch.front(), ops::Conv2dParams::square(3));
  const int levels = static_cast<int>(ch.size());
  int out = ch.front();
  for (int i = 0; i < levels; ++i) {
    auto w = enc["down_blocks"][std::to_string(i)];
    const int in = out;
    out = ch[i];
    Level level;
    for (int j = 0; j < config.layersPerBlock; ++j)
      level.resnets.emplace_back(p, w["resnets"][std::to_string(j)], j == 0 ? in : out, out, groups, kEps);
    if (i < levels - 1) {
      ops::Conv2dParams down = ops::Conv2dParams::square(3, 2);
      down.padH = down.padW = 0;
      level.downsample = &p.conv(w["downsamplers"]["0"]["conv"], out, out, down);
    }
    down_.push_back(std::move(level));
  }
  const int top = ch.back();
  mid1_ = ResnetBlock(p, enc["mid_block"]["resnets"]["0"], top, top, groups, kEps);
  if (config.midBlockAddAttention) midAttention_.emplace(p, enc["mid_block"]["attentions"]["0"], top, groups);
  mid2_ = ResnetBlock(p, enc["mid_block"]["resnets"]["1"], top, top, groups, kEps);
  normOut_ = NormWeights::load(p, enc["conv_norm_out"], top);
  convOut_ = &p.conv(enc["conv_out"], top, 2 * lc, ops::Conv2dParams::square(3));
  if (config.useQuantConv) quant_ = &p.linear(root["quant_conv"], 2 * lc, 2 * lc);
  load.commit();  // the weights are on the device when the constructor returns
}

void VaeEncoder::build(nn::Builder& b, const Value& image, graph::TensorId moments) const {
  const int s = downscale();
  if (image.shape.size() != 4 || image.shape[3] != config_.inChannels || image.shape[1] % s || image.shape[2] % s)
    throw Error("VAE encoder: the image must be NHWC [B, H, W, " + std::to_string(config_.inChannels) +
                "] with H and W multiples of " + std::to_string(s) + ", got " + graph::shapeString(image.shape));
  Value h = b.conv2d(image, *convIn_, {}, {"encoder conv_in"});
  for (size_t i = 0; i < down_.size(); ++i) {
    const std::string name = "encoder down " + std::to_string(i);
    for (size_t j = 0; j < down_[i].resnets.size(); ++j)
      h = down_[i].resnets[j](b, h, {}, name + " resnet " + std::to_string(j));
    if (down_[i].downsample) h = b.conv2d(b.map(h, padBottomRight), *down_[i].downsample, {}, {name + " downsample"});
  }
  h = mid1_(b, h, {}, "encoder mid resnet 0");
  if (midAttention_) h = (*midAttention_)(b, h, "encoder mid attention");
  h = mid2_(b, h, {}, "encoder mid resnet 1");
  const int groups = config_.normNumGroups;
  Value n = b.groupNorm(h, *normOut_.gamma, *normOut_.beta, groups, kEps, "encoder norm_out", /*silu=*/true);
  if (!quant_) {
    b.conv2d(n, *convOut_, {}, {"encoder conv_out", moments});
    return;
  }
  Value z = b.conv2d(n, *convOut_, {}, {"encoder conv_out"});
  b.linear(z, *quant_, {}, {"quant_conv", moments});
}

}  // namespace sdgen::networks
