#include "models/networks/resnet_block.h"

#include <cstdlib>
#include <cstring>

namespace sdgen::networks {

using graph::Value;

NormWeights NormWeights::load(nn::ParameterStore& p, const models::ScopedWeights& w, int64_t channels) {
  return {&p.tensor(w, "weight", {channels}), &p.tensor(w, "bias", {channels})};
}

ResnetBlock::ResnetBlock(nn::ParameterStore& p, const models::ScopedWeights& w, int cin, int cout, int groups,
                         float eps)
    : cin_(cin), cout_(cout), groups_(groups), eps_(eps) {
  norm1_ = NormWeights::load(p, w["norm1"], cin);
  conv1_ = &p.conv(w["conv1"], cin, cout, ops::Conv2dParams::square(3));
  norm2_ = NormWeights::load(p, w["norm2"], cout);
  conv2_ = &p.conv(w["conv2"], cout, cout, ops::Conv2dParams::square(3));
  if (cin != cout) shortcut_ = &p.linear(w["conv_shortcut"], cin, cout);
}

// SDGEN_SHORTCUT_BESIDE=0: the shortcut product after norm2 on the main scratch, staging x inside its own node
// (before session 29; measurements).
static bool shortcutBeside() {
  const char* v = std::getenv("SDGEN_SHORTCUT_BESIDE");
  return !v || std::strcmp(v, "0") != 0;
}

Value ResnetBlock::operator()(nn::Builder& b, const Value& x, const nn::Epilogue& time, const std::string& name) const {
  // The shortcut reads x as well: where x is computed (an up block's concatenation), norm1's launch stores it too.
  Value input = x;
  Value n1 = b.groupNorm(x, *norm1_.gamma, *norm1_.beta, groups_, eps_, name + " norm1", /*silu=*/true,
                         shortcut_ ? &input : nullptr);
  if (shortcut_ && shortcutBeside()) {
    // The shortcut product is independent of conv1: added right after it and on scratch of its own, so that
    // the executor (breadth-first) records its launches between the same barriers as conv1's instead of in
    // intervals of their own, which shared scratch forced (norm1 | conv1 + shortcut | norm2 + split-K sum |
    // conv2). A computed x not stored by norm1 is stored by a node of its own beside norm1 (inside the
    // product's node it would be a launch the product waits for). H200: the step -0.038 ms (docs/perf.md).
    input = b.rawLinearInput(input, {name + " shortcut input"});
    Value h = b.conv2d(n1, *conv1_, time, {name + " conv1"});
    Value shortcut = b.linear(input, *shortcut_, {}, {name + " shortcut", {}, /*sideScratch=*/true});
    Value n2 = b.groupNorm(h, *norm2_.gamma, *norm2_.beta, groups_, eps_, name + " norm2", /*silu=*/true);
    return b.conv2d(n2, *conv2_, nn::residual(shortcut), {name + " conv2"});
  }
  Value h = b.conv2d(n1, *conv1_, time, {name + " conv1"});
  Value n2 = b.groupNorm(h, *norm2_.gamma, *norm2_.beta, groups_, eps_, name + " norm2", /*silu=*/true);
  Value shortcut = shortcut_ ? b.linear(input, *shortcut_, {}, {name + " shortcut"}) : x;
  return b.conv2d(n2, *conv2_, nn::residual(shortcut), {name + " conv2"});
}

}  // namespace sdgen::networks
