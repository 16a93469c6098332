#pragma once
// CLIP's tokenizer, id for id the same as Hugging Face transformers' CLIPTokenizer (the Python one, without
// ftfy; see docs/models.md for where the fast one differs): added tokens typed in the prompt (the special tokens
// and any the vocabulary adds, e.g. SD 2.x's "!") are cut out first (added_tokens.h), the text between them is
// cleaned (text_cleanup.h), split (pretokenizer.h) and BPE-encoded (bpe.h); then BOS/EOS are added and the
// sequence is truncated or padded to maxLength.
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "models/tokenizer/added_tokens.h"
#include "models/tokenizer/bpe.h"
#include "models/tokenizer/tokenizer.h"
#include "models/tokenizer/vocab_files.h"

namespace sdgen::models {

struct ClipTokenizerOptions {
  size_t maxLength = 77;
  // Padding id; default: the end-of-text id, as SD 1.x's tokenizer. SD 2.x's (OpenCLIP's) pads with 0.
  std::optional<int32_t> padId;
  // Called when a prompt is longer than maxLength - 2 tokens, e.g. to warn that its end is ignored.
  std::function<void(std::string_view text, const Encoding& encoding)> onTruncate;
};

class ClipBpeTokenizer final : public Tokenizer {
 public:
  static constexpr std::string_view kBosText = "<|startoftext|>";
  static constexpr std::string_view kEosText = "<|endoftext|>";
  // CLIP's vocabulary: 256 byte symbols, the same with "</w>", the merges and 2 special tokens = 49408.
  static constexpr size_t kClipMergeCount = 49152 - 256 - 2;

  // vocab.json + merges.txt (of which the first kClipMergeCount merges are used, as the reference does).
  static ClipBpeTokenizer fromVocabAndMerges(const std::string& vocabJsonPath, const std::string& mergesPath,
                                             ClipTokenizerOptions options = {});
  // tokenizer.json (all its merges are used, as the `tokenizers` library does), with its added_tokens.
  static ClipBpeTokenizer fromTokenizerJson(const std::string& path, ClipTokenizerOptions options = {});
  // The vocabulary files of a tokenizer folder: vocab.json + merges.txt, else tokenizer.json. Only the files'
  // own tokens: the folder's configs (pad token, length, the added tokens of tokenizer_config.json,
  // special_tokens_map.json, added_tokens.json) are read by loadClipTokenizerFolder (formats/tokenizer_folder.h).
  static ClipBpeTokenizer fromDirectory(const std::string& dir, ClipTokenizerOptions options = {});

  // vocabulary.addedTokens are split out of prompts; <|startoftext|> and <|endoftext|> always are (CLIPTokenizer's
  // default special tokens), with their vocabulary ids unless addedTokens gives them others.
  ClipBpeTokenizer(BpeVocabulary vocabulary, ClipTokenizerOptions options);

  Encoding encode(std::string_view text) const override;
  size_t maxLength() const override { return options_.maxLength; }

  // The ids of the prompt's tokens alone: no BOS/EOS, no truncation, no padding.
  std::vector<int32_t> contentIds(std::string_view text) const override;

  int32_t bosId() const override { return bos_; }
  int32_t eosId() const override { return eos_; }
  int32_t padId() const override { return pad_; }
  // The BPE vocabulary's entry (added tokens included, as convert_tokens_to_ids looks them up).
  std::optional<int32_t> vocabularyId(std::string_view token) const override {
    auto it = bpe_.vocab().find(std::string(token));
    return it == bpe_.vocab().end() ? std::nullopt : std::optional<int32_t>(it->second);
  }
  const BpeModel& bpe() const { return bpe_; }

 private:
  void appendSegmentIds(std::u32string_view segment, std::vector<int32_t>& out) const;

  ClipTokenizerOptions options_;
  int32_t bos_ = 0, eos_ = 0, pad_ = 0;
  AddedTokenSplitter added_;
  BpeModel bpe_;
};

}  // namespace sdgen::models
