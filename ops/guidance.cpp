#include "ops/guidance.h"

#include "engine/error.h"

namespace sdgen::ops {

using namespace graph;

Expr classifierFreeGuidance(const Expr& prediction, const Expr& scale) {
  const Shape& s = prediction.shape();
  if (s[0] % 2) throw Error("classifier-free guidance: batch " + std::to_string(s[0]) + " is not [uncond; cond]");
  if (numel(scale.shape()) != 1) throw Error("classifier-free guidance: scale must be a scalar");
  int64_t b = s[0] / 2;
  Expr uncond = slice(prediction, 0, 0, b), cond = slice(prediction, 0, b, b);
  return uncond + scale * (cond - uncond);
}

}  // namespace sdgen::ops
