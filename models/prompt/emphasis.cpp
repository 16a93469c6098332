#include "models/prompt/emphasis.h"

#include <cmath>
#include <string>

#include "engine/error.h"

namespace sdgen::prompt {

void applyEmphasis(std::span<float> hidden, std::span<const float> weights, size_t seq, size_t width,
                   std::string_view what) {
  if (seq == 0 || width == 0 || weights.size() % seq || hidden.size() != weights.size() * width)
    throw Error("emphasis: " + std::to_string(hidden.size()) + " hidden values do not match " +
                std::to_string(weights.size()) + " weights of windows of " + std::to_string(seq) + " tokens x " +
                std::to_string(width));
  const size_t windows = weights.size() / seq;
  for (size_t k = 0; k < windows; ++k) {
    std::span<float> z = hidden.subspan(k * seq * width, seq * width);
    std::span<const float> w = weights.subspan(k * seq, seq);
    bool ones = true;
    for (float v : w) ones = ones && v == 1.f;
    if (ones) continue;  // identical to the formula (the ratio is exactly 1), and keeps plain prompts bit-exact
    double before = 0, after = 0;
    for (size_t t = 0; t < seq; ++t)
      for (size_t c = 0; c < width; ++c) {
        const double v = z[t * width + c];
        before += v;
        after += v * w[t];
      }
    // Sums instead of means: the count cancels in the ratio.
    const double ratio = before / after;
    if (!std::isfinite(ratio) || after == 0)
      throw Error(std::string(what) + ": the weights of chunk " + std::to_string(k + 1) +
                  " cancel the mean of its text encoding (webui would divide by zero); use weights that are not "
                  "negative or zero there");
    for (size_t t = 0; t < seq; ++t)
      for (size_t c = 0; c < width; ++c) {
        float& v = z[t * width + c];
        v = static_cast<float>(double(v) * w[t] * ratio);
      }
  }
}

}  // namespace sdgen::prompt
