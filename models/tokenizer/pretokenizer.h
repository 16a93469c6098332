#pragma once
// CLIP's pre-tokenizer: the pieces that the pattern
//   <|startoftext|>|<|endoftext|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+
// finds (case-insensitively, first alternative that matches wins, scanning left to right), each of which is
// then BPE-encoded on its own. A hand-written matcher instead of a regex engine: std::regex has no Unicode
// classes, and the pattern is simple enough to follow exactly.
#include <string_view>
#include <vector>

namespace sdgen::models {

// `text` is cleaned, lower-cased text; whitespace is never part of a piece, so it may hold one word or many.
std::vector<std::u32string_view> splitClipPieces(std::u32string_view text);

}  // namespace sdgen::models
