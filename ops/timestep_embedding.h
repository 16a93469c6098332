#pragma once
// Sinusoidal timestep embedding as diffusers' Timesteps computes it (no launch: an expression the time
// embedding's first linear layer reads directly):
//   f_i = exp(-ln(maxPeriod) * i / (half - freqShift)), i < half = dim / 2
//   emb = [sin(t f), cos(t f)], or [cos(t f), sin(t f)] when flipSinToCos (Stable Diffusion's UNet).
#include "engine/context.h"
#include "graph/expr.h"

namespace sdgen::ops {

class TimestepEmbedding {
 public:
  TimestepEmbedding(Context& ctx, int dim, bool flipSinToCos, float freqShift, float maxPeriod = 10000.f);
  // timesteps: [B, 1] (e.g. broadcast(uniform(slot), {B, 1}) for a replayed denoising step); returns [B, dim].
  graph::Expr operator()(const graph::Expr& timesteps) const;
  int dim() const { return dim_; }

 private:
  int dim_;
  bool flip_;
  Allocation frequencies_;  // [half] fp32, computed once in double
};

}  // namespace sdgen::ops
