#pragma once
// Byte-level BPE with an end-of-word marker, as CLIP uses it. A piece's UTF-8 bytes are first mapped to
// printable stand-in symbols (so that no symbol is whitespace or a control character), the last symbol gets
// "</w>" appended, and then the adjacent pair with the lowest merge rank is merged everywhere in the word,
// left to right, until no adjacent pair has a rank.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sdgen::models {

struct BpeMerge {
  std::string left, right;
};

class BpeModel {
 public:
  // merges[i] has rank i (lower merges first). unknownId is used for a symbol missing from the vocabulary.
  BpeModel(std::unordered_map<std::string, int32_t> vocab, const std::vector<BpeMerge>& merges, int32_t unknownId);

  // Appends the ids of one pre-tokenized piece (UTF-8).
  void encode(std::string_view piece, std::vector<int32_t>& out) const;
  // The BPE symbols of a piece, before the vocabulary lookup (for tests and diagnostics).
  std::vector<std::string> symbols(std::string_view piece) const;

  const std::unordered_map<std::string, int32_t>& vocab() const { return vocab_; }
  size_t mergeCount() const { return ranks_.size(); }

  // The stand-in symbol of each byte value (GPT-2/CLIP's byte-to-unicode table), as UTF-8.
  static const std::vector<std::string>& byteSymbols();

 private:
  std::unordered_map<std::string, int32_t> vocab_;
  std::unordered_map<std::string, int32_t> ranks_;  // key: left + ' ' + right (symbols never contain ' ')
  int32_t unknownId_;
};

}  // namespace sdgen::models
