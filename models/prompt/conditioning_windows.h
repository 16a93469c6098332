#pragma once
// The token windows of one generation: the prompt's and, with classifier-free guidance, the negative prompt's,
// as one batch for the text encoder. With the webui syntax both are parsed and chunked (prompt_chunks.h) and the
// one with fewer chunks is padded with empty windows, as webui pads it with the empty prompt's conditioning; with
// the plain syntax each is one window, truncated by the tokenizer with a warning.
//
// Layout: the negative prompt's windows first, then the prompt's, so that the encoder's output
// [2 * chunks, 77, width] is, unchanged in memory, the UNet's context [2, chunks * 77, width] with the
// unconditional half first (the order the guidance step expects).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/prompt/prompt_syntax.h"
#include "models/tokenizer/tokenizer.h"

namespace sdgen::prompt {

struct ConditioningWindows {
  size_t windowLength = 0;  // the tokenizer's maxLength (77)
  size_t chunks = 1;        // windows per prompt
  int batch = 1;            // 2 with guidance (negative prompt, prompt), else 1 (prompt)
  std::vector<int32_t> ids;    // [batch * chunks, windowLength]
  std::vector<float> weights;  // the same layout
  bool weighted = false;       // some weight is not 1: the encoder's output needs applyEmphasis
  std::vector<std::string> warnings;  // e.g. truncation in plain mode

  size_t windows() const { return size_t(batch) * chunks; }
  size_t contextLength() const { return chunks * windowLength; }
};

// Throws PromptSyntaxError naming "the prompt" or "the negative prompt" and the position.
ConditioningWindows makeConditioningWindows(const models::Tokenizer& tokenizer, PromptSyntax syntax,
                                            std::string_view prompt, std::string_view negativePrompt, bool guided);

}  // namespace sdgen::prompt
