#include "models/tokenizer/added_tokens.h"

#include "models/tokenizer/unicode.h"

namespace sdgen::models {

namespace {

// Python's str.lstrip() / str.rstrip() without arguments.
std::u32string stripLeft(const std::u32string& s) {
  size_t i = 0;
  while (i < s.size() && unicode::isPythonSpace(s[i])) ++i;
  return s.substr(i);
}

std::u32string stripRight(const std::u32string& s) {
  size_t n = s.size();
  while (n > 0 && unicode::isPythonSpace(s[n - 1])) --n;
  return s.substr(0, n);
}

}  // namespace

AddedTokenSplitter::AddedTokenSplitter(const std::vector<AddedToken>& tokens) {
  for (const AddedToken& t : tokens) {
    std::u32string content = unicode::decodeUtf8(t.content);
    if (content.empty()) continue;  // the reference never matches an empty token
    byContent_[content] = Entry{t.id, t.singleWord, t.lstrip, t.rstrip};
    uint32_t node = 0;
    for (char32_t c : content) {
      auto it = trie_[node].next.find(c);
      if (it == trie_[node].next.end()) {
        trie_.emplace_back();
        it = trie_[node].next.emplace(c, static_cast<uint32_t>(trie_.size() - 1)).first;
      }
      node = it->second;
    }
    trie_[node].terminal = true;
  }
}

std::vector<std::u32string> AddedTokenSplitter::cut(std::u32string_view text) const {
  std::vector<std::u32string> pieces;
  size_t textStart = 0, at = 0;
  while (at < text.size()) {
    // The longest content that starts here.
    size_t matchEnd = 0;
    uint32_t node = 0;
    for (size_t i = at; i < text.size(); ++i) {
      auto it = trie_[node].next.find(text[i]);
      if (it == trie_[node].next.end()) break;
      node = it->second;
      if (trie_[node].terminal) matchEnd = i + 1;
    }
    if (matchEnd == 0) {
      ++at;
      continue;
    }
    if (at > textStart) pieces.emplace_back(text.substr(textStart, at - textStart));
    pieces.emplace_back(text.substr(at, matchEnd - at));
    textStart = at = matchEnd;
  }
  if (text.size() > textStart) pieces.emplace_back(text.substr(textStart));
  return pieces;
}

const AddedTokenSplitter::Entry* AddedTokenSplitter::find(const std::u32string& piece) const {
  auto it = byContent_.find(piece);
  return it == byContent_.end() ? nullptr : &it->second;
}

std::vector<PromptPiece> AddedTokenSplitter::split(std::u32string_view text) const {
  std::vector<std::u32string> pieces = cut(text);
  // Step 2. Membership is by value, checked when a piece is reached, after earlier tokens may have changed it.
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Entry* token = find(pieces[i]);
    if (!token) continue;
    // The neighbours as they are before this token strips them: single_word looks at those.
    const std::u32string left = i > 0 ? pieces[i - 1] : std::u32string();
    const std::u32string right = i + 1 < pieces.size() ? pieces[i + 1] : std::u32string();
    if (token->rstrip && !right.empty()) pieces[i + 1] = stripLeft(right);
    if (token->lstrip && !left.empty()) pieces[i - 1] = stripRight(left);
    if (token->singleWord && !left.empty() && left.back() != U' ') {
      pieces[i - 1] += pieces[i];
      pieces[i].clear();
    } else if (token->singleWord && !right.empty() && right.front() != U' ') {
      pieces[i + 1] = pieces[i] + pieces[i + 1];
      pieces[i].clear();
    }
  }
  // Step 3.
  std::vector<PromptPiece> out;
  out.reserve(pieces.size());
  for (std::u32string& piece : pieces) {
    if (piece.empty()) continue;
    if (const Entry* token = find(piece))
      out.push_back(PromptPiece{{}, token->id});
    else
      out.push_back(PromptPiece{std::move(piece), std::nullopt});
  }
  return out;
}

}  // namespace sdgen::models
