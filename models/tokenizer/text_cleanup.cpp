#include "models/tokenizer/text_cleanup.h"

#include "models/tokenizer/unicode.h"

namespace sdgen::models {

std::vector<std::u32string> cleanTextToWords(std::u32string_view text) {
  std::u32string cleaned;
  cleaned.reserve(text.size());
  for (char32_t cp : text) {
    if (unicode::isDroppedByCleanup(cp)) continue;
    if (unicode::isCleanupSpace(cp)) {
      cleaned += U' ';
    } else if (unicode::isCjkIdeograph(cp)) {
      cleaned += U' ';
      cleaned += cp;
      cleaned += U' ';
    } else {
      cleaned += cp;
    }
  }
  std::u32string normalized = unicode::toNfc(cleaned);

  std::vector<std::u32string> words;
  size_t i = 0;
  while (i < normalized.size()) {
    while (i < normalized.size() && unicode::isPythonSpace(normalized[i])) ++i;
    size_t start = i;
    while (i < normalized.size() && !unicode::isPythonSpace(normalized[i])) ++i;
    if (i > start) words.push_back(unicode::toLower(std::u32string_view(normalized).substr(start, i - start)));
  }
  return words;
}

}  // namespace sdgen::models
