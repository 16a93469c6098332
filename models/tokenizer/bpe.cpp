#include "models/tokenizer/bpe.h"

#include <limits>

#include "models/tokenizer/unicode.h"

namespace sdgen::models {

namespace {

constexpr std::string_view kEndOfWord = "</w>";

std::string pairKey(std::string_view left, std::string_view right) {
  std::string key;
  key.reserve(left.size() + right.size() + 1);
  key.append(left).append(1, ' ').append(right);
  return key;
}

}  // namespace

const std::vector<std::string>& BpeModel::byteSymbols() {
  // Printable Latin-1 bytes stand for themselves; the other 68 (controls, space, NBSP, soft hyphen) are moved
  // to U+0100 upwards in byte order. The mapping is what CLIP's vocabulary was built on, so it is fixed.
  static const std::vector<std::string> table = [] {
    std::vector<std::string> t(256);
    char32_t next = 0x100;
    for (unsigned b = 0; b < 256; ++b) {
      bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      unicode::appendUtf8(t[b], printable ? static_cast<char32_t>(b) : next++);
    }
    return t;
  }();
  return table;
}

BpeModel::BpeModel(std::unordered_map<std::string, int32_t> vocab, const std::vector<BpeMerge>& merges,
                   int32_t unknownId)
    : vocab_(std::move(vocab)), unknownId_(unknownId) {
  ranks_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    // A pair listed twice ends up with its later rank, as in the reference's dict built from the list.
    ranks_[pairKey(merges[i].left, merges[i].right)] = static_cast<int32_t>(i);
  }
}

std::vector<std::string> BpeModel::symbols(std::string_view piece) const {
  std::vector<std::string> word;
  word.reserve(piece.size());
  const auto& bytes = byteSymbols();
  for (char c : piece) word.push_back(bytes[static_cast<unsigned char>(c)]);
  if (word.empty()) return word;
  word.back() += kEndOfWord;

  while (word.size() > 1) {
    int32_t best = std::numeric_limits<int32_t>::max();
    size_t bestAt = 0;
    for (size_t i = 0; i + 1 < word.size(); ++i) {
      auto it = ranks_.find(pairKey(word[i], word[i + 1]));
      if (it != ranks_.end() && it->second < best) {
        best = it->second;
        bestAt = i;
      }
    }
    if (best == std::numeric_limits<int32_t>::max()) break;
    // Merge every occurrence of the best pair, scanning left to right without overlap.
    const std::string left = word[bestAt], right = word[bestAt + 1];
    std::vector<std::string> merged;
    merged.reserve(word.size());
    for (size_t i = 0; i < word.size();) {
      if (i + 1 < word.size() && word[i] == left && word[i + 1] == right) {
        merged.push_back(left + right);
        i += 2;
      } else {
        merged.push_back(std::move(word[i]));
        ++i;
      }
    }
    word = std::move(merged);
  }
  return word;
}

void BpeModel::encode(std::string_view piece, std::vector<int32_t>& out) const {
  for (const std::string& s : symbols(piece)) {
    auto it = vocab_.find(s);
    out.push_back(it != vocab_.end() ? it->second : unknownId_);
  }
}

}  // namespace sdgen::models
