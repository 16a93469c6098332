#pragma once
// Parsed prompt fragments -> the token windows the text encoder runs on, as webui builds them
// (modules/sd_hijack_clip.py, FrozenCLIPEmbedderWithCustomWordsBase.tokenize_line):
//  - each fragment is tokenized on its own (no BOS/EOS) and its tokens carry its weight;
//  - tokens fill chunks of 75 (the encoder's 77 positions less BOS and EOS); when a chunk is full and the next
//    token is not a comma, but a comma lies within the chunk's last 20 tokens, everything after that comma moves
//    to the next chunk (webui's comma_padding_backtrack = 20, its default), so phrases are not cut in two;
//  - BREAK closes the current chunk (even an empty one: "BREAK BREAK" leaves an empty chunk between);
//  - each chunk becomes one window: BOS, its tokens, EOS, then the tokenizer's padding (SD 1.x pads with EOS,
//    SD 2.x with id 0, which is what webui's process_tokens produces too), BOS/EOS/padding weighted 1.
// An empty prompt is one window, the same one the tokenizer's encode("") gives.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "models/prompt/prompt_attention.h"
#include "models/tokenizer/tokenizer.h"

namespace sdgen::prompt {

struct TokenWindows {
  size_t windowLength = 0;     // the tokenizer's maxLength (77)
  std::vector<int32_t> ids;    // [windows, windowLength]
  std::vector<float> weights;  // [windows, windowLength]; float32 as webui's multiplier tensor
  size_t tokenCount = 0;       // webui's count (75 per full chunk + the last chunk's tokens), for messages

  size_t windows() const { return windowLength ? ids.size() / windowLength : 0; }
  bool weighted() const;  // some weight is not exactly 1
};

struct ChunkOptions {
  size_t commaBacktrack = 20;  // 0: never move tokens after a comma to the next chunk
  size_t maxChunks = 32;       // more is an error naming the prompt (2400 tokens; the UNet attends to 77 per chunk)
};

// Throws PromptSyntaxError (naming `what`) when the prompt needs more than options.maxChunks chunks.
TokenWindows chunkPrompt(const std::vector<PromptFragment>& fragments, const models::Tokenizer& tokenizer,
                         std::string_view what = "the prompt", const ChunkOptions& options = {});

// Appends empty windows (BOS, EOS, padding; weight 1) until `windows` has `count` of them: webui pads the shorter
// of the prompt and the negative prompt with the empty prompt's conditioning.
void padWindows(TokenWindows& windows, size_t count, const models::Tokenizer& tokenizer);

}  // namespace sdgen::prompt
