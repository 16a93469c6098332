#include "models/prompt/prompt_attention.h"

#include <charconv>
#include <cmath>
#include <optional>

#include "models/tokenizer/unicode.h"

namespace sdgen::prompt {

namespace {

constexpr double kRoundMultiplier = 1.1;
constexpr double kSquareMultiplier = 1.0 / 1.1;  // the same double as Python's 1 / 1.1

// webui's regular expressions run on Python str: \s is str.isspace(), \w is str.isalnum() or '_'.
bool isSpace(char32_t c) { return models::unicode::isPythonSpace(c); }
bool isWord(char32_t c) { return c == U'_' || models::unicode::isLetter(c) || models::unicode::isNumber(c); }
bool isAsciiDigit(char32_t c) { return c >= U'0' && c <= U'9'; }
// The characters that end a run of plain text: each has a meaning of its own.
bool isSyntax(char32_t c) { return c == U'\\' || c == U'(' || c == U')' || c == U'[' || c == U']' || c == U':'; }

// An entry of the result while parsing; `start` is where its text began (0-based code point), for errors.
struct Entry {
  std::u32string text;
  double weight = 1.0;
  bool isBreak = false;
  size_t start = 0;
};

class Parser {
 public:
  Parser(std::u32string_view s, std::string_view what) : s_(s), what_(what) {}

  std::vector<PromptFragment> run() {
    size_t i = 0;
    while (i < s_.size()) i = step(i);
    // Brackets left open apply to everything after them, innermost first, as webui does.
    for (const Open& o : round_) multiplyFrom(o.entry, kRoundMultiplier);
    for (const Open& o : square_) multiplyFrom(o.entry, kSquareMultiplier);
    if (res_.empty()) res_.push_back({U"", 1.0, false, 0});
    checkWeights();
    return merged();
  }

 private:
  struct Open {
    size_t entry;     // index into res_ where the bracket's range begins
    size_t position;  // where the bracket is, for errors
  };

  [[noreturn]] void fail(const std::string& problem, size_t position) const {
    throw PromptSyntaxError(std::string(what_) + ": " + problem + " at character " + std::to_string(position + 1) +
                                ": " + excerpt(position),
                            position + 1);
  }

  // The prompt around `position`, at most 20 characters either side, quoted.
  std::string excerpt(size_t position) const {
    const size_t radius = 20, from = position > radius ? position - radius : 0;
    const size_t to = std::min(s_.size(), position + radius + 1);
    std::string out = "\"";
    if (from > 0) out += "...";
    out += models::unicode::encodeUtf8(s_.substr(from, to - from));
    if (to < s_.size()) out += "...";
    return out + "\"";
  }

  void multiplyFrom(size_t entry, double multiplier) {
    for (size_t p = entry; p < res_.size(); ++p) res_[p].weight *= multiplier;
  }

  void open(std::vector<Open>& stack, size_t position) {
    if (round_.size() + square_.size() >= PromptLimits::kMaxDepth)
      fail("brackets nested deeper than " + std::to_string(PromptLimits::kMaxDepth), position);
    stack.push_back({res_.size(), position});
  }

  // Consumes one token of webui's grammar at s_[i]; returns the index after it.
  size_t step(size_t i) {
    const char32_t c = s_[i];
    switch (c) {
      case U'\\': {
        // "\(" "\)" "\[" "\]" "\\" are the character itself; a backslash before anything else is dropped (webui
        // matches it alone and keeps what follows it, which is nothing).
        const bool escape = i + 1 < s_.size() && (s_[i + 1] == U'(' || s_[i + 1] == U')' || s_[i + 1] == U'[' ||
                                                  s_[i + 1] == U']' || s_[i + 1] == U'\\');
        res_.push_back({escape ? std::u32string(1, s_[i + 1]) : U"", 1.0, false, i});
        return i + (escape ? 2 : 1);
      }
      case U'(': open(round_, i); return i + 1;
      case U'[': open(square_, i); return i + 1;
      case U')':
        if (round_.empty()) return literal(i, i + 1);
        multiplyFrom(round_.back().entry, kRoundMultiplier);
        round_.pop_back();
        return i + 1;
      case U']':
        if (square_.empty()) return literal(i, i + 1);
        multiplyFrom(square_.back().entry, kSquareMultiplier);
        square_.pop_back();
        return i + 1;
      case U':': return colon(i);
      default: {
        size_t end = i;
        while (end < s_.size() && !isSyntax(s_[end])) ++end;
        return literal(i, end);
      }
    }
  }

  // ":" [space] [+-] [0-9.]+ [space] ")" closes the innermost "(" with that weight; with no "(" open it is text,
  // and so is a ':' that does not start such a weight.
  size_t colon(size_t i) {
    size_t p = i + 1;
    while (p < s_.size() && isSpace(s_[p])) ++p;
    const size_t numberStart = p;
    if (p < s_.size() && (s_[p] == U'+' || s_[p] == U'-')) ++p;
    const size_t digitsStart = p;
    while (p < s_.size() && (isAsciiDigit(s_[p]) || s_[p] == U'.')) ++p;
    const size_t numberEnd = p;
    while (p < s_.size() && isSpace(s_[p])) ++p;
    if (numberEnd == digitsStart || p >= s_.size() || s_[p] != U')') return literal(i, i + 1);
    if (round_.empty()) return literal(i, p + 1);
    const double w = parseWeight(s_.substr(numberStart, numberEnd - numberStart), numberStart);
    multiplyFrom(round_.back().entry, w);
    round_.pop_back();
    return p + 1;
  }

  // Python's float() of what webui's pattern accepted; it raises on "1.2.3" or ".", so webui stops there too.
  double parseWeight(std::u32string_view number, size_t position) const {
    const std::string text = models::unicode::encodeUtf8(number);
    size_t digits = 0, dots = 0;
    for (char ch : text) {
      if (ch == '.') ++dots;
      else if (ch >= '0' && ch <= '9') ++digits;
    }
    if (digits == 0 || dots > 1) fail("malformed weight '" + text + "'", position);
    const bool negative = text[0] == '-';
    const size_t skip = (text[0] == '-' || text[0] == '+') ? 1 : 0;
    double v = 0;
    auto [end, ec] = std::from_chars(text.data() + skip, text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && !std::isfinite(v)))
      fail("weight '" + text + "' is out of range (at most " + limitText() + " in magnitude)", position);
    if (ec != std::errc() || end != text.data() + text.size()) fail("malformed weight '" + text + "'", position);
    if (negative) v = -v;
    if (std::fabs(v) > PromptLimits::kMaxWeight)
      fail("weight '" + text + "' is out of range (at most " + limitText() + " in magnitude)", position);
    return v;
  }

  static std::string shortest(double v) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, end);
  }
  static std::string limitText() { return shortest(PromptLimits::kMaxWeight); }

  // Text s_[from, to) with weight 1, split at every BREAK that is a word of its own (webui's
  // \s*\bBREAK\b\s*: the spaces around it go with it).
  size_t literal(size_t from, size_t to) {
    size_t cursor = from;
    for (size_t q = from; q + 5 <= to; ++q) {
      if (s_.compare(q, 5, U"BREAK") != 0) continue;
      if ((q > from && isWord(s_[q - 1])) || (q + 5 < to && isWord(s_[q + 5]))) continue;
      if (!round_.empty() || !square_.empty())
        fail("BREAK inside brackets (webui would encode the word BREAK with a negative weight; close the brackets "
             "before BREAK)",
             q);
      size_t left = q, right = q + 5;
      while (left > cursor && isSpace(s_[left - 1])) --left;
      while (right < to && isSpace(s_[right])) ++right;
      res_.push_back({std::u32string(s_.substr(cursor, left - cursor)), 1.0, false, cursor});
      res_.push_back({U"", 1.0, true, q});
      cursor = right;
      q = right - 1;
    }
    res_.push_back({std::u32string(s_.substr(cursor, to - cursor)), 1.0, false, cursor});
    return to;
  }

  void checkWeights() const {
    for (const Entry& e : res_)
      if (!e.isBreak && !e.text.empty() && !(std::fabs(e.weight) <= PromptLimits::kMaxWeight))
        fail("the brackets around this text multiply its weight to " + shortest(e.weight) +
                 ", beyond the limit of " + limitText() + " in magnitude",
             e.start);
  }

  // Neighbours of exactly equal weight become one fragment (and are tokenized together), as in webui.
  std::vector<PromptFragment> merged() const {
    std::vector<PromptFragment> out;
    for (const Entry& e : res_) {
      if (!out.empty() && !e.isBreak && !out.back().isBreak && out.back().weight == e.weight) {
        out.back().text += models::unicode::encodeUtf8(e.text);
        continue;
      }
      out.push_back({models::unicode::encodeUtf8(e.text), e.isBreak ? -1.0 : e.weight, e.isBreak});
    }
    return out;
  }

  std::u32string_view s_;
  std::string_view what_;
  std::vector<Entry> res_;
  std::vector<Open> round_, square_;
};

}  // namespace

void checkPromptSize(std::string_view prompt, std::string_view what) {
  if (prompt.size() > PromptLimits::kMaxBytes)
    throw PromptSyntaxError(std::string(what) + " is " + std::to_string(prompt.size()) + " bytes long; at most " +
                                std::to_string(PromptLimits::kMaxBytes) + " are accepted",
                            0);
}

std::vector<PromptFragment> parsePromptAttention(std::string_view prompt, std::string_view what) {
  checkPromptSize(prompt, what);
  const std::u32string text = models::unicode::decodeUtf8(prompt);
  return Parser(text, what).run();
}

}  // namespace sdgen::prompt
