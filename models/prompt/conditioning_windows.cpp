#include "models/prompt/conditioning_windows.h"

#include <algorithm>

#include "models/prompt/prompt_chunks.h"

namespace sdgen::prompt {

namespace {

constexpr std::string_view kPrompt = "the prompt", kNegative = "the negative prompt";

TokenWindows plainWindow(const models::Tokenizer& tokenizer, std::string_view text, std::string_view what,
                         std::vector<std::string>& warnings) {
  checkPromptSize(text, what);
  models::Encoding e = tokenizer.encode(text);
  if (e.truncated)
    warnings.push_back(std::string(what) + " is longer than the text encoder's " +
                       std::to_string(tokenizer.maxLength()) + " tokens: " + std::to_string(e.droppedTokens) +
                       " tokens were cut off");
  TokenWindows out;
  out.windowLength = tokenizer.maxLength();
  out.ids = std::move(e.ids);
  out.weights.assign(out.ids.size(), 1.f);
  return out;
}

}  // namespace

ConditioningWindows makeConditioningWindows(const models::Tokenizer& tokenizer, PromptSyntax syntax,
                                            std::string_view prompt, std::string_view negativePrompt, bool guided) {
  ConditioningWindows out;
  out.windowLength = tokenizer.maxLength();
  out.batch = guided ? 2 : 1;
  auto windowsOf = [&](std::string_view text, std::string_view what) {
    if (syntax == PromptSyntax::Plain) return plainWindow(tokenizer, text, what, out.warnings);
    return chunkPrompt(parsePromptAttention(text, what), tokenizer, what);
  };
  TokenWindows cond = windowsOf(prompt, kPrompt);
  TokenWindows uncond;
  if (guided) {
    uncond = windowsOf(negativePrompt, kNegative);
    out.chunks = std::max(cond.windows(), uncond.windows());
    padWindows(uncond, out.chunks, tokenizer);
    padWindows(cond, out.chunks, tokenizer);
  } else {
    out.chunks = cond.windows();
  }
  for (const TokenWindows* w : {&uncond, &cond}) {
    out.ids.insert(out.ids.end(), w->ids.begin(), w->ids.end());
    out.weights.insert(out.weights.end(), w->weights.begin(), w->weights.end());
    out.weighted = out.weighted || w->weighted();
  }
  return out;
}

}  // namespace sdgen::prompt
