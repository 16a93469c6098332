#include "models/tokenizer/pretokenizer.h"

#include "models/tokenizer/unicode.h"

namespace sdgen::models {

namespace {

// Case-insensitive equality with an ASCII pattern character, as the `regex` module's IGNORECASE sees it:
// simple case folding, under which U+017F LATIN SMALL LETTER LONG S and U+212A KELVIN SIGN equal 's' and 'k'.
bool foldEquals(char32_t c, char p) {
  if (c >= U'A' && c <= U'Z') c += 32;
  if (c == 0x17F) c = U's';
  if (c == 0x212A) c = U'k';
  return c == static_cast<unsigned char>(p);
}

// Length of `literal` if text[at...] starts with it, else 0.
size_t matchLiteral(std::u32string_view text, size_t at, std::string_view literal) {
  if (text.size() - at < literal.size()) return 0;
  for (size_t k = 0; k < literal.size(); ++k)
    if (!foldEquals(text[at + k], literal[k])) return 0;
  return literal.size();
}

// Length of the match at `at`, or 0 when no alternative matches there.
size_t matchAt(std::u32string_view text, size_t at) {
  // The literal alternatives, in the pattern's order.
  static constexpr std::string_view kLiterals[] = {"<|startoftext|>", "<|endoftext|>", "'s", "'t", "'re", "'ve",
                                                   "'m", "'ll", "'d"};
  for (std::string_view lit : kLiterals)
    if (size_t n = matchLiteral(text, at, lit)) return n;
  size_t end = at;
  if (unicode::isLetter(text[at])) {
    while (end < text.size() && unicode::isLetter(text[end])) ++end;
    return end - at;
  }
  if (unicode::isNumber(text[at])) return 1;  // digits are single pieces
  while (end < text.size() && unicode::isOtherSymbol(text[end])) ++end;
  return end - at;
}

}  // namespace

std::vector<std::u32string_view> splitClipPieces(std::u32string_view text) {
  std::vector<std::u32string_view> pieces;
  size_t at = 0;
  while (at < text.size()) {
    size_t n = matchAt(text, at);
    if (n == 0) {
      ++at;  // whitespace: findall skips what nothing matches
      continue;
    }
    pieces.push_back(text.substr(at, n));
    at += n;
  }
  return pieces;
}

}  // namespace sdgen::models
