#pragma once
// webui's emphasis ("Original", its default; modules/sd_emphasis.py): the text encoder's output for one window
// is multiplied token by token by the tokens' weights, then scaled as a whole so that its mean over all tokens
// and channels is what it was before:
//   z' = z * w[token];   z'' = z' * (mean(z) / mean(z'))
// Each window is one call of webui's encoder (one chunk of one prompt), so each keeps its own mean. Computed in
// double on the host; the encoder's output is small (77 x width per window).
#include <cstddef>
#include <span>
#include <string_view>

namespace sdgen::prompt {

// hidden: [windows, seq, width], weights: [windows, seq]. A window whose weights are all 1 is left bit-identical.
// Throws sdgen::Error naming `what` and the window when the weights cancel the window's mean (zero or not
// finite after weighting: webui would divide by it and produce NaN).
void applyEmphasis(std::span<float> hidden, std::span<const float> weights, size_t seq, size_t width,
                   std::string_view what = "the prompt");

}  // namespace sdgen::prompt
