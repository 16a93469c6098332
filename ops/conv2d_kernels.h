#pragma once
// Records the dispatches of each conv algorithm (internal to ops/conv2d.cpp): generates the Slang wrapper that
// specializes shaders/conv/*.slang on the input expression, the sink, the weight storage and the tile, fills
// the parameter block (shaders/conv/conv_common.slang header, then expression and sink parameters) and
// declares the memory each dispatch reads and writes.
#include "engine/command_sequence.h"
#include "engine/context.h"
#include "graph/expr.h"
#include "ops/conv2d.h"
#include "ops/conv2d_plan.h"
#include "ops/conv2d_scratch.h"

namespace sdgen::ops {

struct ConvCall {
  Context& ctx;
  CommandSequence& seq;
  const ConvProblem& prob;
  const graph::Expr& input;
  const Conv2dWeights& weights;
  const graph::Sink& out;
  const std::string& label;
  Conv2dInfo& info;  // kernels launched and vector-access counts are appended
};

void recordConvGeneral(const ConvCall& call, const ConvTile& tile);
void recordConvGemmV2(const ConvCall& call, const ConvTile& tile);
// `scratch` holds V at offset 0 and M at prob.winogradMOffset() (prob.winogradScratchBytes() in all).
void recordConvWinograd(const ConvCall& call, const ConvTile& tile, const Allocation& scratch);
// ops/conv2d_coop.cpp: tensor cores; an input that is not a dense fp16 NHWC tensor is staged into `scratch`.
// `candidate`: its tile and split-K; null: the GEMM's tile and split-K rule.
void recordConvCoop(const ConvCall& call, Conv2dScratch* scratch, const ConvCandidate* candidate);
// shaders/conv/conv_direct.slang: Cout <= 4, kernels up to 3x3, stride 1, dilation 1, Cin % 4 == 0.
void recordConvDirect(const ConvCall& call);
bool convInputRawHalf(const graph::Expr& input);

}  // namespace sdgen::ops
