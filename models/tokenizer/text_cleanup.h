#pragma once
// The text cleanup that precedes CLIP's pre-tokenizer. transformers' CLIPTokenizer, when the `ftfy` package is
// absent (the usual case), runs a BERT-style basic tokenizer with punctuation splitting and accent stripping
// off; this reproduces it step by step.
#include <string>
#include <string_view>
#include <vector>

namespace sdgen::models {

// Cleans `text` and splits it into lower-cased words:
//   1. drop NUL, U+FFFD and control/format/unassigned characters; tab, LF, CR and space separators become ' '
//   2. put spaces around CJK ideographs, so that each one is a word
//   3. NFC
//   4. split on whitespace (Python's str.split()), lower-case each word (Python's str.lower())
std::vector<std::u32string> cleanTextToWords(std::u32string_view text);

}  // namespace sdgen::models
