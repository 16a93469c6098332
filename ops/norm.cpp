#include "ops/norm.h"

#include "engine/error.h"
#include "ops/reduce.h"

namespace sdgen::ops {

using namespace graph;

// mean and rstd from (sum, sum of squares) views; the variance is clamped at 0 against fp32 cancellation.
static std::pair<Expr, Expr> meanAndRstd(const TensorView& sum, double count, float eps) {
  TensorView sq = sum;
  sq.address += 4;
  Expr mean = buffer(sum) * constant(float(1.0 / count));
  Expr var = max(buffer(sq) * constant(float(1.0 / count)) - mean * mean, constant(0.f));
  return {mean, rsqrt(var + constant(eps))};
}

static void checkStats(const TensorView& stats, int64_t entries, const char* what) {
  if (stats.isInt32 || stats.dtype != DType::F32 || !stats.dense() || numel(stats.shape) != entries * 2)
    throw Error(std::string(what) + ": statistics must be a dense fp32 tensor of " + std::to_string(entries * 2) +
                " elements, got " + shapeString(stats.shape));
}

Expr groupNormFromStats(const Expr& x, const TensorView& stats, int groups, float eps, const Expr& gamma,
                        const Expr& beta) {
  const Shape& s = x.shape();
  if (s.size() != 4 || groups <= 0 || s[3] % groups)
    throw Error("group norm: expects NHWC [N, H, W, C] with C divisible by " + std::to_string(groups) + ", got " +
                shapeString(s));
  checkStats(stats, s[0] * groups, "group norm");
  int64_t cg = s[3] / groups;
  // Per-(n, group) statistics as [N, 1, 1, G] views over the interleaved (sum, sum of squares) pairs, then
  // repeated per channel: channel c reads group c / cg.
  TensorView sum{stats.address, DType::F32, {s[0], 1, 1, groups}, {2 * groups, 0, 0, 2}};
  auto [mean, rstd] = meanAndRstd(sum, double(s[1]) * s[2] * cg, eps);
  return (x - repeatInterleave(mean, 3, cg)) * repeatInterleave(rstd, 3, cg) * gamma + beta;
}

Expr groupNorm(Context& ctx, CommandSequence& seq, const Expr& x, int groups, float eps, const Expr& gamma,
               const Expr& beta, const TensorView& stats) {
  Expr normalized = groupNormFromStats(x, stats, groups, eps, gamma, beta);  // validates shapes first
  const Shape& s = x.shape();
  sumAndSumOfSquares(ctx, seq, reshape(x, {s[0], s[1] * s[2], groups, s[3] / groups}), stats, "group norm stats");
  return normalized;
}

Expr layerNormFromStats(const Expr& x, const TensorView& stats, float eps, const Expr& gamma, const Expr& beta) {
  Shape s = x.shape();
  int64_t d = s.back(), rows = numel(s) / d;
  checkStats(stats, rows, "layer norm");
  // [rows, 2] seen with the shape of x: row-major over the leading axes (2 floats per row), stride 0 along
  // the normalized axis.
  Shape rowShape(s.begin(), s.end() - 1);
  Shape strides = rowShape.empty() ? Shape{} : denseStrides(rowShape);
  for (auto& st : strides) st *= 2;
  strides.push_back(0);
  TensorView sum{stats.address, DType::F32, s, strides};
  auto [mean, rstd] = meanAndRstd(sum, double(d), eps);
  return (x - mean) * rstd * gamma + beta;
}

Expr layerNorm(Context& ctx, CommandSequence& seq, const Expr& x, float eps, const Expr& gamma, const Expr& beta,
               const TensorView& stats) {
  Expr normalized = layerNormFromStats(x, stats, eps, gamma, beta);
  int64_t d = x.shape().back(), rows = numel(x.shape()) / d;
  sumAndSumOfSquares(ctx, seq, reshape(x, {rows, 1, 1, d}), stats, "layer norm stats");
  return normalized;
}

void checkNormOperands(const std::string& label, const Shape& shape, int64_t channels, const Expr& gamma,
                       const Expr& beta, const TensorView& out) {
  if (gamma.shape() != Shape{channels} || beta.shape() != Shape{channels})
    throw Error(label + ": gamma and beta must be [" + std::to_string(channels) + "], got " +
                shapeString(gamma.shape()) + " and " + shapeString(beta.shape()));
  if (out.isInt32 || !out.dense() || out.shape != shape || (out.dtype != DType::F32 && out.dtype != DType::F16))
    throw Error(label + ": output must be a dense fp32 or fp16 tensor of shape " + shapeString(shape) + ", got " +
                shapeString(out.shape));
}

}  // namespace sdgen::ops
