#include "models/tokenizer/clip_tokenizer.h"

#include <algorithm>
#include <filesystem>

#include "engine/error.h"
#include "models/tokenizer/pretokenizer.h"
#include "models/tokenizer/text_cleanup.h"
#include "models/tokenizer/unicode.h"

namespace sdgen::models {

namespace {

int32_t specialId(const BpeVocabulary& v, std::string_view text) {
  // As convert_tokens_to_ids: the added tokens first (the last entry with that content), then the vocabulary.
  for (auto it = v.addedTokens.rbegin(); it != v.addedTokens.rend(); ++it)
    if (it->content == text) return it->id;
  if (auto it = v.tokens.find(std::string(text)); it != v.tokens.end()) return it->second;
  throw Error("the vocabulary of " + v.source + " has no '" + std::string(text) + "' token (not a CLIP vocabulary)");
}

// CLIPTokenizer's BOS/EOS (and its unknown and default pad token, the same EOS) are always added tokens; entries
// of the files come after them, so that they win for the same content.
std::vector<AddedToken> addedTokensWithDefaults(const BpeVocabulary& v) {
  std::vector<AddedToken> tokens;
  for (std::string_view text : {ClipBpeTokenizer::kBosText, ClipBpeTokenizer::kEosText}) {
    AddedToken t;
    t.content = std::string(text);
    t.id = specialId(v, text);
    t.special = true;
    t.normalized = false;
    tokens.push_back(std::move(t));
  }
  tokens.insert(tokens.end(), v.addedTokens.begin(), v.addedTokens.end());
  return tokens;
}

// The ids of BPE symbols, looked up as convert_tokens_to_ids does: an added token's id wins over the vocabulary's.
std::unordered_map<std::string, int32_t> bpeIds(BpeVocabulary& v) {
  std::unordered_map<std::string, int32_t> ids = std::move(v.tokens);
  for (const AddedToken& t : v.addedTokens) ids[t.content] = t.id;
  return ids;
}

}  // namespace

ClipBpeTokenizer ClipBpeTokenizer::fromVocabAndMerges(const std::string& vocabJsonPath, const std::string& mergesPath,
                                                      ClipTokenizerOptions options) {
  return ClipBpeTokenizer(loadVocabAndMerges(vocabJsonPath, mergesPath, kClipMergeCount), std::move(options));
}

ClipBpeTokenizer ClipBpeTokenizer::fromTokenizerJson(const std::string& path, ClipTokenizerOptions options) {
  return ClipBpeTokenizer(loadTokenizerJson(path), std::move(options));
}

ClipBpeTokenizer ClipBpeTokenizer::fromDirectory(const std::string& dir, ClipTokenizerOptions options) {
  namespace fs = std::filesystem;
  fs::path d(dir);
  if (fs::exists(d / "vocab.json") && fs::exists(d / "merges.txt"))
    return fromVocabAndMerges((d / "vocab.json").string(), (d / "merges.txt").string(), std::move(options));
  if (fs::exists(d / "tokenizer.json")) return fromTokenizerJson((d / "tokenizer.json").string(), std::move(options));
  throw Error("tokenizer folder '" + dir + "' has neither vocab.json + merges.txt nor tokenizer.json");
}

ClipBpeTokenizer::ClipBpeTokenizer(BpeVocabulary vocabulary, ClipTokenizerOptions options)
    : options_(std::move(options)),
      bos_(specialId(vocabulary, kBosText)),
      eos_(specialId(vocabulary, kEosText)),
      pad_(options_.padId.value_or(eos_)),
      added_(addedTokensWithDefaults(vocabulary)),
      // The reference's unknown token is the end-of-text token.
      bpe_(bpeIds(vocabulary), vocabulary.merges, eos_) {  // members above are initialized first
  if (options_.maxLength < 2)
    throw Error("CLIP tokenizer maxLength " + std::to_string(options_.maxLength) + " leaves no room for BOS and EOS");
}

void ClipBpeTokenizer::appendSegmentIds(std::u32string_view segment, std::vector<int32_t>& out) const {
  for (const std::u32string& word : cleanTextToWords(segment)) {
    for (std::u32string_view piece : splitClipPieces(word)) {
      std::string utf8 = unicode::encodeUtf8(piece);
      // The reference's BPE cache is seeded with the special tokens' texts, so a piece spelled exactly like one
      // (e.g. "<|ENDOFTEXT|>" after lower-casing) becomes that token.
      if (utf8 == kBosText) {
        out.push_back(bos_);
      } else if (utf8 == kEosText) {
        out.push_back(eos_);
      } else {
        bpe_.encode(utf8, out);
      }
    }
  }
}

std::vector<int32_t> ClipBpeTokenizer::contentIds(std::string_view text) const {
  // Added tokens written verbatim in the prompt are split out before any cleanup; what lies between them is
  // tokenized on its own.
  std::vector<int32_t> ids;
  for (const PromptPiece& piece : added_.split(unicode::decodeUtf8(text))) {
    if (piece.addedId)
      ids.push_back(*piece.addedId);
    else
      appendSegmentIds(piece.text, ids);
  }
  return ids;
}

Encoding ClipBpeTokenizer::encode(std::string_view text) const {
  std::vector<int32_t> content = contentIds(text);
  size_t slots = options_.maxLength - 2;
  size_t kept = std::min(content.size(), slots);

  Encoding e;
  e.truncated = content.size() > slots;
  e.droppedTokens = content.size() - kept;
  e.length = kept + 2;
  e.ids.reserve(options_.maxLength);
  e.ids.push_back(bos_);
  e.ids.insert(e.ids.end(), content.begin(), content.begin() + static_cast<ptrdiff_t>(kept));
  e.ids.push_back(eos_);  // truncation keeps the end token: the text encoder pools at its position
  e.ids.resize(options_.maxLength, pad_);
  if (e.truncated && options_.onTruncate) options_.onTruncate(text, e);
  return e;
}

}  // namespace sdgen::models
