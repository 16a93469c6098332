#include "ops/timestep_embedding.h"

#include <cmath>
#include <vector>

#include "engine/error.h"

namespace sdgen::ops {

using namespace graph;

TimestepEmbedding::TimestepEmbedding(Context& ctx, int dim, bool flipSinToCos, float freqShift, float maxPeriod)
    : dim_(dim), flip_(flipSinToCos) {
  if (dim < 2 || dim % 2) throw Error("timestep embedding: dimension must be even and >= 2, got " + std::to_string(dim));
  int half = dim / 2;
  if (half - freqShift == 0) throw Error("timestep embedding: half dimension equals the frequency shift");
  std::vector<float> f(half);
  for (int i = 0; i < half; ++i) f[i] = float(std::exp(-std::log(double(maxPeriod)) * i / (half - double(freqShift))));
  frequencies_ = ctx.allocate(half * 4, "timestep frequencies");
  ctx.upload(frequencies_, 0, {reinterpret_cast<const uint8_t*>(f.data()), f.size() * 4});
}

Expr TimestepEmbedding::operator()(const Expr& timesteps) const {
  const Shape& s = timesteps.shape();
  if (s.size() != 2 || s[1] != 1) throw Error("timestep embedding: timesteps must be [B, 1], got " + shapeString(s));
  Expr args = timesteps * buffer(view(frequencies_, DType::F32, {1, dim_ / 2}));
  return flip_ ? concat(cos(args), sin(args), 1) : concat(sin(args), cos(args), 1);
}

}  // namespace sdgen::ops
