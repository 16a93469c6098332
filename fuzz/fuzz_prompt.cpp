// libFuzzer target: webui's prompt syntax as sdgen reads a prompt: the LoRA tags cut out (lora_tags.h), the
// emphasis and BREAK parsed (prompt_attention.h), then the fragments tokenized into 75-token windows
// (prompt_chunks.h) with the shipped CLIP tokenizer. Weights must stay finite and bounded.
#include <cmath>
#include <cstdint>
#include <string_view>

#include "engine/error.h"
#include "fuzz/fuzz_support.h"
#include "models/prompt/lora_tags.h"
#include "models/prompt/prompt_attention.h"
#include "models/prompt/prompt_chunks.h"
#include "models/resources.h"
#include "models/tokenizer/clip_tokenizer.h"

namespace {
// Loaded once, in LLVMFuzzerInitialize, so that the load does not count against the first input's time limit.
const sdgen::models::ClipBpeTokenizer& clipTokenizer() {
  static const auto t = sdgen::models::ClipBpeTokenizer::fromDirectory(sdgen::models::resourcePath("models/vocab/clip"));
  return t;
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)clipTokenizer();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sdgen;
  const models::ClipBpeTokenizer& tokenizer = clipTokenizer();
  try {
    const prompt::PromptLoras loras = prompt::extractLoraTags(fuzz::asText(data, size));
    for (const auto& tag : loras.loras)
      if (tag.name.empty() || !std::isfinite(tag.textScale) || !std::isfinite(tag.unetScale)) __builtin_trap();
    const auto fragments = prompt::parsePromptAttention(loras.prompt);
    for (const auto& f : fragments)
      if (!std::isfinite(f.weight) || std::fabs(f.weight) > prompt::PromptLimits::kMaxWeight) __builtin_trap();
    prompt::TokenWindows windows = prompt::chunkPrompt(fragments, tokenizer);
    if (windows.ids.size() != windows.weights.size() || windows.ids.size() % tokenizer.maxLength()) __builtin_trap();
    prompt::padWindows(windows, windows.windows() + 1, tokenizer);
  } catch (const Error&) {
  }
  return 0;
}
