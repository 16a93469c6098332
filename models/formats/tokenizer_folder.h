#pragma once
// A CLIP tokenizer from a folder as diffusers and transformers save it: vocab.json + merges.txt, or tokenizer.json
// alone, and optionally tokenizer_config.json / special_tokens_map.json, whose pad_token decides the padding id
// (SD 1.x: "<|endoftext|>", SD 2.x: "!" = 0) and whose model_max_length the sequence length.
// Added tokens, split out of prompts before anything else (models/tokenizer/added_tokens.h), are gathered as
// transformers' from_pretrained does: tokenizer_config.json's added_tokens_decoder when it has one (plus
// tokenizer.json's added_tokens when that file is the vocabulary); otherwise added_tokens.json and tokenizer.json's
// added_tokens, with special_tokens_map.json's entries over tokenizer_config.json's. Every special token the
// configs name (bos/eos/unk/sep/pad/cls/mask_token, additional_special_tokens) is an added token too, so SD 2.x's
// "!" becomes id 0 on its own wherever it is typed. A special token that is in neither the vocabulary nor the
// added tokens is an error naming the file and the field.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "models/tokenizer/clip_tokenizer.h"

namespace sdgen::models {

struct ClipTokenizerFolder {
  std::unique_ptr<ClipBpeTokenizer> tokenizer;
  int32_t padId = 0;
  int32_t maxTokenId = 0;  // the largest id it can produce (must index the text encoder's embedding table)
};

// padFallback: the padding id when the folder names no pad token (nullopt: the end-of-text id).
// maxPositions: the text encoder's max_position_embeddings; the sequence length is model_max_length when the
// folder gives one (it must not exceed maxPositions), else maxPositions. Errors name the folder or file.
ClipTokenizerFolder loadClipTokenizerFolder(const std::string& dir, std::optional<int32_t> padFallback,
                                            size_t maxPositions);

}  // namespace sdgen::models
