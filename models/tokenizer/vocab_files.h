#pragma once
// Reading a BPE vocabulary from the two file layouts Hugging Face uses:
//  - vocab.json (token -> id) + merges.txt ("#version" header, then one "left right" pair per line, by rank)
//  - tokenizer.json of the `tokenizers` library (model.vocab, model.merges as "a b" strings or [a, b] pairs,
//    added_tokens for the special tokens and any other added token)
// Every error is an sdgen::Error naming the file.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/tokenizer/added_tokens.h"
#include "models/tokenizer/bpe.h"

namespace sdgen::models {

struct BpeVocabulary {
  std::unordered_map<std::string, int32_t> tokens;
  std::vector<BpeMerge> merges;                           // by rank
  std::vector<AddedToken> addedTokens;  // tokenizer.json's added_tokens, in file order
  std::string source;  // the file(s) it was read from, quoted, for messages
};

// Reads at most maxMerges merges (CLIP uses only the first 49152 - 256 - 2 of its list).
BpeVocabulary loadVocabAndMerges(const std::string& vocabJsonPath, const std::string& mergesPath,
                                 size_t maxMerges);
// Requires a BPE model with the "</w>" end-of-word suffix, as CLIP's.
BpeVocabulary loadTokenizerJson(const std::string& path);
// Only the added_tokens of a tokenizer.json (none when it has no such array).
std::vector<AddedToken> loadTokenizerJsonAddedTokens(const std::string& path);

}  // namespace sdgen::models
