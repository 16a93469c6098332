#pragma once
// A convolution input of the form f(x * scale + shift) where x is a dense fp16 NHWC tensor, scale and shift vary
// only with the image and the channel, and f is SiLU or nothing: a group norm (ops::groupNormFromStats, with the
// SiLU of a resnet block) feeding a conv. The tensor-core convs stage their input into fp16 first
// (ops/conv2d_coop.cpp); for this form they compute the map's [N, 2 Cin] fp32 table once (one tiny launch) and
// stage silu(x * scale + shift), instead of evaluating the group index, mean, variance and rsqrt of the
// statistics for every element.
#include <optional>
#include <string>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "graph/expr.h"
#include "ops/conv2d_scratch.h"

namespace sdgen::ops {

struct ConvInputAffine {
  graph::TensorView x;       // the raw fp16 input [N, H, W, Cin]
  graph::Expr scale, shift;  // [N, 1, 1, Cin] each (image and channel only)
  bool silu = false;
};

// Recognizes silu?(((x - m) * r1 * r2 ...) + b) (the group norm's tree; any product of image/channel-only factors,
// the centering optional) on a dense 16-byte aligned fp16 x of rank 4; nullopt for anything else.
std::optional<ConvInputAffine> convInputAffineOf(const graph::Expr& input);

// The table's expression: concat(scale, shift) along channels, [N, 1, 1, 2 Cin] (fp32 when written).
graph::Expr convInputAffineTable(const ConvInputAffine& a);

// Records the table's launch (label `label`) into the partials slot of `scratch` and returns the input as
// silu?(x * scale + shift) read from it; the slot must stay free until the consumer of that expression has run.
graph::Expr convInputThroughTable(Context& ctx, CommandSequence& seq, const ConvInputAffine& a, Conv2dScratch& scratch,
                                  const std::string& label);

// Where a group norm's table pays off: from about 4 M input elements (H200, docs/perf.md session 18: the VAE's
// 128^2 to 512^2 levels save 0.013-0.13 ms per staged conv input; the UNet's 0.16-2.6 M lose 0.002-0.013 ms to
// the extra dependent launch). SDGEN_CONV_FUSE_NORM=0 / =1 turns it off / on for every size (A/B runs, tests).
bool convInputTableWanted(int64_t inputElements);

}  // namespace sdgen::ops
