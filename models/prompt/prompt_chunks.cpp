#include "models/prompt/prompt_chunks.h"

#include <optional>
#include <string>

namespace sdgen::prompt {

namespace {

void appendWindow(TokenWindows& out, const models::Tokenizer& tokenizer, const std::vector<int32_t>& tokens,
                  const std::vector<float>& weights) {
  const size_t start = out.ids.size();  // tokens.size() <= windowLength - 2 always
  out.ids.push_back(tokenizer.bosId());
  out.weights.push_back(1.f);
  out.ids.insert(out.ids.end(), tokens.begin(), tokens.end());
  out.weights.insert(out.weights.end(), weights.begin(), weights.end());
  out.ids.push_back(tokenizer.eosId());
  out.weights.push_back(1.f);
  out.ids.resize(start + out.windowLength, tokenizer.padId());
  out.weights.resize(start + out.windowLength, 1.f);
}

}  // namespace

bool TokenWindows::weighted() const {
  for (float w : weights)
    if (w != 1.f) return true;
  return false;
}

TokenWindows chunkPrompt(const std::vector<PromptFragment>& fragments, const models::Tokenizer& tokenizer,
                         std::string_view what, const ChunkOptions& options) {
  TokenWindows out;
  out.windowLength = tokenizer.maxLength();
  const size_t chunkLength = out.windowLength - 2;
  const std::optional<int32_t> comma = tokenizer.vocabularyId(",</w>");

  // The chunk being filled, and where its last comma is (webui's last_comma; -1: none since the chunk began).
  std::vector<int32_t> tokens;
  std::vector<float> weights;
  long lastComma = -1;
  auto closeChunk = [&](bool last) {
    out.tokenCount += last ? tokens.size() : chunkLength;
    appendWindow(out, tokenizer, tokens, weights);
    tokens.clear();
    weights.clear();
    lastComma = -1;
  };

  for (const PromptFragment& fragment : fragments) {
    if (fragment.isBreak) {
      closeChunk(false);
      continue;
    }
    const float weight = static_cast<float>(fragment.weight);
    for (int32_t id : tokenizer.contentIds(fragment.text)) {
      if (comma && id == *comma) {
        // Recorded before the full-chunk check below, so a comma that opens a new chunk is not remembered there.
        lastComma = static_cast<long>(tokens.size());
      } else if (options.commaBacktrack > 0 && tokens.size() == chunkLength && lastComma != -1 &&
                 tokens.size() - static_cast<size_t>(lastComma) <= options.commaBacktrack) {
        const size_t keep = static_cast<size_t>(lastComma) + 1;
        std::vector<int32_t> movedTokens(tokens.begin() + static_cast<ptrdiff_t>(keep), tokens.end());
        std::vector<float> movedWeights(weights.begin() + static_cast<ptrdiff_t>(keep), weights.end());
        tokens.resize(keep);
        weights.resize(keep);
        closeChunk(false);
        tokens = std::move(movedTokens);
        weights = std::move(movedWeights);
      }
      if (tokens.size() == chunkLength) closeChunk(false);
      tokens.push_back(id);
      weights.push_back(weight);
    }
  }
  if (!tokens.empty() || out.windows() == 0) closeChunk(true);

  if (out.windows() > options.maxChunks)
    throw PromptSyntaxError(std::string(what) + " needs " + std::to_string(out.windows()) + " chunks of " +
                                std::to_string(chunkLength) + " tokens (" + std::to_string(out.tokenCount) +
                                " tokens); at most " + std::to_string(options.maxChunks) + " chunks (" +
                                std::to_string(options.maxChunks * chunkLength) + " tokens) are supported",
                            0);
  return out;
}

void padWindows(TokenWindows& windows, size_t count, const models::Tokenizer& tokenizer) {
  if (windows.windowLength == 0) windows.windowLength = tokenizer.maxLength();
  while (windows.windows() < count) appendWindow(windows, tokenizer, {}, {});
}

}  // namespace sdgen::prompt
