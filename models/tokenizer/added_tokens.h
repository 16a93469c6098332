#pragma once
// Added tokens: strings that transformers' Python tokenizers cut out of the prompt before any cleanup or BPE and
// map straight to one id: CLIP's <|startoftext|> / <|endoftext|>, SD 2.x's pad token "!" (id 0), tokens added for
// textual inversion, and every other special token a tokenizer folder names.
//
// The rule, as PreTrainedTokenizer.tokenize applies it (transformers 4.x; CLIPTokenizer has no do_lower_case, so
// nothing is lower-cased first and `normalized` plays no part):
//  1. the raw text is cut at every occurrence of an added token's content, case-sensitively, leftmost first and
//     the longest content at that position (its Trie.split);
//  2. left to right over the pieces, for each piece that equals an added token's content: `rstrip` strips the
//     whitespace (Python's str.isspace) at the start of the next piece, `lstrip` at the end of the previous one;
//     then `single_word` glues the token onto the previous piece when that piece (as it was before the stripping)
//     does not end in ' ', else onto the next piece when that one does not start with ' ' -- a glued token is
//     plain text again, tokenized with its neighbour;
//  3. every piece left that equals an added token's content becomes that token's id, every other non-empty piece
//     is tokenized on its own.
// The `tokenizers` library (CLIPTokenizerFast, and transformers 5's CLIPTokenizer) differs only when flags are
// set: it matches `normalized` tokens in the lower-cased text, and drops a `single_word` match that touches a
// word character instead of gluing it; see docs/models.md.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sdgen::models {

struct AddedToken {
  std::string content;  // UTF-8, not empty
  int32_t id = 0;
  bool singleWord = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;  // kept as the files give it; unused by the Python CLIPTokenizer (see above)
  bool special = false;
};

// One piece of a split prompt: an added token's id, or text to clean up and BPE-encode.
struct PromptPiece {
  std::u32string text;  // empty for an added token
  std::optional<int32_t> addedId;
};

class AddedTokenSplitter {
 public:
  // When two tokens have the same content, the later one is used (as a Python dict keeps the last).
  explicit AddedTokenSplitter(const std::vector<AddedToken>& tokens);

  std::vector<PromptPiece> split(std::u32string_view text) const;

 private:
  struct Entry {
    int32_t id;
    bool singleWord, lstrip, rstrip;
  };
  struct TrieNode {
    std::unordered_map<char32_t, uint32_t> next;
    bool terminal = false;
  };
  // Step 1: the text cut around each leftmost-longest occurrence (no empty pieces).
  std::vector<std::u32string> cut(std::u32string_view text) const;
  const Entry* find(const std::u32string& piece) const;

  std::unordered_map<std::u32string, Entry> byContent_;
  std::vector<TrieNode> trie_ = std::vector<TrieNode>(1);  // node 0 is the root
};

}  // namespace sdgen::models
