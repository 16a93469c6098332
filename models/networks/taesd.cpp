#include "models/networks/taesd.h"

#include "engine/error.h"

namespace sdgen::networks {

using graph::Expr;
using graph::Value;
using models::ScopedWeights;

namespace {

ops::Conv2dParams conv3x3(int stride = 1) { return ops::Conv2dParams::square(3, stride); }

ScopedWeights layer(const ScopedWeights& layers, int k) { return layers[std::to_string(k)]; }

}  // namespace

TaesdBlock::TaesdBlock(nn::ParameterStore& p, const ScopedWeights& w, int channels) {
  for (int i = 0; i < 3; ++i) convs_[i] = &p.conv(w["conv"][std::to_string(2 * i)], channels, channels, conv3x3());
}

Value TaesdBlock::operator()(nn::Builder& b, const Value& x, const std::string& name) const {
  Value h = b.conv2d(x, *convs_[0], nn::activation(graph::relu), {name + " conv0"});
  h = b.conv2d(h, *convs_[1], nn::activation(graph::relu), {name + " conv1"});
  // skip is the identity (AutoencoderTiny's blocks keep their width); fuse = ReLU of the sum
  nn::Epilogue fuse{{x}, [](const Expr& out, const std::vector<Expr>& in) { return graph::relu(out + in[0]); }};
  return b.conv2d(h, *convs_[2], fuse, {name + " conv2"});
}

TaesdDecoder::TaesdDecoder(nn::ParameterStore& p, const models::TaesdConfig& config, const models::WeightSource& weights)
    : config_(config) {
  nn::ParameterStore::Transaction load(p);
  const ScopedWeights layers = ScopedWeights(weights)["decoder"]["layers"];
  const auto& ch = config.decoderBlockOutChannels;
  convIn_ = &p.conv(layer(layers, 0), config.latentChannels, ch.front(), conv3x3());
  int k = 2;  // 1 is the ReLU
  for (size_t i = 0; i < ch.size(); ++i) {
    Stage s;
    for (int j = 0; j < config.numDecoderBlocks[i]; ++j) s.blocks.emplace_back(p, layer(layers, k++), ch[i]);
    const bool last = i + 1 == ch.size();
    if (!last) ++k;  // the Upsample
    s.conv = &p.conv(layer(layers, k++), ch[i], last ? config.outChannels : ch[i], conv3x3(), last);
    stages_.push_back(std::move(s));
  }
  load.commit();
}

void TaesdDecoder::build(nn::Builder& b, const Value& latents, graph::TensorId out) const {
  if (latents.shape.size() != 4 || latents.shape[0] != 1 || latents.shape[3] != config_.latentChannels)
    throw Error("TAESD decoder: latents must be NHWC [1, h, w, " + std::to_string(config_.latentChannels) + "], got " +
                graph::shapeString(latents.shape));
  // diffusers' DecoderTiny: "Clamp." tanh(x / 3) * 3, folded into conv_in's input
  Value x = b.map(latents, [](const Expr& e) { return graph::tanh(e / graph::constant(3.f)) * graph::constant(3.f); });
  Value h = b.conv2d(x, *convIn_, nn::activation(graph::relu), {"taesd decoder conv_in"});
  for (size_t i = 0; i < stages_.size(); ++i) {
    const std::string name = "taesd decoder stage " + std::to_string(i);
    for (size_t j = 0; j < stages_[i].blocks.size(); ++j) h = stages_[i].blocks[j](b, h, name + " block " + std::to_string(j));
    if (i + 1 < stages_.size()) {
      h = b.conv2d(b.map(h, graph::upsample2x), *stages_[i].conv, {}, {name + " upsample"});
    } else {  // [0, 1] -> [-1, 1], as diffusers' DecoderTiny returns x.mul(2).sub(1)
      nn::Epilogue toSigned = nn::activation([](const Expr& e) { return e * graph::constant(2.f) - graph::constant(1.f); });
      b.conv2d(h, *stages_[i].conv, toSigned, {"taesd decoder conv_out", out});
    }
  }
}

TaesdEncoder::TaesdEncoder(nn::ParameterStore& p, const models::TaesdConfig& config, const models::WeightSource& weights)
    : config_(config) {
  nn::ParameterStore::Transaction load(p);
  const ScopedWeights layers = ScopedWeights(weights)["encoder"]["layers"];
  const auto& ch = config.encoderBlockOutChannels;
  int k = 0;
  for (size_t i = 0; i < ch.size(); ++i) {
    Stage s;
    s.conv = i == 0 ? &p.conv(layer(layers, k++), config.inChannels, ch[i], conv3x3())
                    : &p.conv(layer(layers, k++), ch[i], ch[i], conv3x3(2), false);
    for (int j = 0; j < config.numEncoderBlocks[i]; ++j) s.blocks.emplace_back(p, layer(layers, k++), ch[i]);
    stages_.push_back(std::move(s));
  }
  convOut_ = &p.conv(layer(layers, k), ch.back(), config.latentChannels, conv3x3());
  load.commit();
}

void TaesdEncoder::build(nn::Builder& b, const Value& image, graph::TensorId latents) const {
  const int s = downscale();
  if (image.shape.size() != 4 || image.shape[0] != 1 || image.shape[3] != config_.inChannels || image.shape[1] % s ||
      image.shape[2] % s)
    throw Error("TAESD encoder: the image must be NHWC [1, H, W, " + std::to_string(config_.inChannels) +
                "] with H and W multiples of " + std::to_string(s) + ", got " + graph::shapeString(image.shape));
  // diffusers' EncoderTiny: [-1, 1] -> [0, 1] (x.add(1).div(2)), folded into the first conv's input
  Value h = b.map(image, [](const Expr& e) { return (e + graph::constant(1.f)) / graph::constant(2.f); });
  for (size_t i = 0; i < stages_.size(); ++i) {
    const std::string name = "taesd encoder stage " + std::to_string(i);
    h = b.conv2d(h, *stages_[i].conv, {}, {name + " conv"});
    for (size_t j = 0; j < stages_[i].blocks.size(); ++j) h = stages_[i].blocks[j](b, h, name + " block " + std::to_string(j));
  }
  b.conv2d(h, *convOut_, {}, {"taesd encoder conv_out", latents});
}

}  // namespace sdgen::networks
