#pragma once
// The text-encoder side of a prompt: turns text into the fixed-length id sequence a text encoder consumes.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace sdgen::models {

struct Encoding {
  std::vector<int32_t> ids;  // exactly maxLength ids: BOS, content, EOS, padding
  size_t length = 0;         // ids before the padding (BOS + content + EOS)
  bool truncated = false;    // the prompt had more tokens than fit
  size_t droppedTokens = 0;  // how many content tokens were cut off
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Adds the begin/end tokens, truncates (keeping the end token) and pads to maxLength().
  virtual Encoding encode(std::string_view text) const = 0;
  virtual size_t maxLength() const = 0;

  // What prompt chunking (models/prompt/) assembles its own windows from: the ids of the text's tokens alone (no
  // BOS/EOS, no truncation, no padding), the special ids, and the id of a vocabulary entry such as ",</w>".
  virtual std::vector<int32_t> contentIds(std::string_view text) const = 0;
  virtual int32_t bosId() const = 0;
  virtual int32_t eosId() const = 0;
  virtual int32_t padId() const = 0;
  virtual std::optional<int32_t> vocabularyId(std::string_view token) const = 0;
};

}  // namespace sdgen::models
