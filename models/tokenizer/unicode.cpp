#include "models/tokenizer/unicode.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace sdgen::models::unicode {

namespace {

struct PropertyRun {
  char32_t first;
  uint16_t flags;
};
struct CccRun {
  char32_t first;
  uint8_t ccc;
};
struct LowerRun {  // code points first, first + stride, ... (count of them) map to cp + delta
  char32_t first;
  uint32_t count;
  uint32_t stride;
  int32_t delta;
};
struct LowerMulti {
  char32_t cp;
  char32_t to[3];
};
struct Decomposition {
  char32_t cp, first, second;
};
struct Composition {
  char32_t first, second, composed;
};

#include "models/tokenizer/unicode_tables.inc"

constexpr char32_t kReplacement = 0xFFFD;

// Value of the run containing cp, for tables of runs sorted by `first` whose first entry starts at 0.
template <typename Run, size_t N>
const Run& runOf(const Run (&runs)[N], char32_t cp) {
  auto it = std::upper_bound(std::begin(runs), std::end(runs), cp,
                             [](char32_t c, const Run& r) { return c < r.first; });
  return *std::prev(it);
}

uint16_t flags(char32_t cp) { return cp > 0x10FFFF ? 0 : runOf(kPropertyRuns, cp).flags; }
uint8_t ccc(char32_t cp) { return cp > 0x10FFFF ? 0 : runOf(kCccRuns, cp).ccc; }

// Hangul syllables decompose and compose arithmetically (Unicode chapter 3.12), not through the tables.
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

void decomposeInto(char32_t cp, std::u32string& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    char32_t s = cp - kSBase;
    out += kLBase + s / kNCount;
    out += kVBase + (s % kNCount) / kTCount;
    if (s % kTCount != 0) out += kTBase + s % kTCount;
    return;
  }
  auto it = std::lower_bound(std::begin(kDecompositions), std::end(kDecompositions), cp,
                             [](const Decomposition& d, char32_t c) { return d.cp < c; });
  if (it == std::end(kDecompositions) || it->cp != cp) {
    out += cp;
    return;
  }
  decomposeInto(it->first, out);  // table entries are one level deep; the parts may decompose further
  if (it->second != 0) decomposeInto(it->second, out);
}

char32_t compose(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount)
    return a + (b - kTBase);
  auto it = std::lower_bound(std::begin(kCompositions), std::end(kCompositions), std::pair{a, b},
                             [](const Composition& c, const std::pair<char32_t, char32_t>& k) {
                               return c.first != k.first ? c.first < k.first : c.second < k.second;
                             });
  if (it != std::end(kCompositions) && it->first == a && it->second == b) return it->composed;
  return 0;
}

// Lowercase of one code point, ignoring context (final sigma is handled by the caller).
void appendLower(char32_t cp, std::u32string& out) {
  for (const LowerMulti& m : kLowerMulti) {
    if (m.cp == cp) {
      for (char32_t c : m.to)
        if (c != 0) out += c;
      return;
    }
  }
  auto it = std::upper_bound(std::begin(kLowerRuns), std::end(kLowerRuns), cp,
                             [](char32_t c, const LowerRun& r) { return c < r.first; });
  if (it != std::begin(kLowerRuns)) {
    const LowerRun& r = *std::prev(it);
    char32_t offset = cp - r.first;
    if (offset % r.stride == 0 && offset / r.stride < r.count) {
      out += static_cast<char32_t>(static_cast<int64_t>(cp) + r.delta);
      return;
    }
  }
  out += cp;
}

bool isCased(char32_t cp) { return flags(cp) & kCased; }
bool isCaseIgnorable(char32_t cp) { return flags(cp) & kCaseIgnorable; }

// Python's rule: capital sigma becomes final when a cased letter precedes it and none follows, looking past
// case-ignorable characters (apostrophes, combining marks, ...) in both directions.
bool isFinalSigma(std::u32string_view text, size_t i) {
  size_t j = i;
  while (j > 0 && isCaseIgnorable(text[j - 1])) --j;
  if (j == 0 || !isCased(text[j - 1])) return false;
  size_t k = i + 1;
  while (k < text.size() && isCaseIgnorable(text[k])) ++k;
  return k == text.size() || !isCased(text[k]);
}

}  // namespace

std::u32string decodeUtf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    auto b0 = static_cast<uint8_t>(text[i]);
    if (b0 < 0x80) {
      out += b0;
      ++i;
      continue;
    }
    size_t len = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC0 ? 2 : 0;
    char32_t cp = len == 4 ? b0 & 0x07u : len == 3 ? b0 & 0x0Fu : b0 & 0x1Fu;
    bool ok = len != 0 && b0 < 0xF8 && i + len <= text.size();
    for (size_t k = 1; ok && k < len; ++k) {
      auto b = static_cast<uint8_t>(text[i + k]);
      ok = (b & 0xC0u) == 0x80u;
      cp = (cp << 6) | (b & 0x3Fu);
    }
    constexpr char32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= kMinForLength[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (ok) {
      out += cp;
      i += len;
    } else {
      out += kReplacement;
      ++i;
    }
  }
  return out;
}

void appendUtf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string encodeUtf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t cp : text) appendUtf8(out, cp);
  return out;
}

bool isLetter(char32_t cp) { return flags(cp) & kLetter; }
bool isNumber(char32_t cp) { return flags(cp) & kNumber; }
bool isOtherSymbol(char32_t cp) { return flags(cp) & kOther; }
bool isDroppedByCleanup(char32_t cp) { return flags(cp) & kDropped; }
bool isCleanupSpace(char32_t cp) { return flags(cp) & kCleanSpace; }
bool isPythonSpace(char32_t cp) { return flags(cp) & kPySpace; }

bool isCjkIdeograph(char32_t cp) {
  // The blocks the reference (BERT's basic tokenizer) calls Chinese characters; not Hangul, kana, etc.
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

std::u32string toLower(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == 0x3A3) {
      out += isFinalSigma(text, i) ? 0x3C2 : 0x3C3;
    } else {
      appendLower(text[i], out);
    }
  }
  return out;
}

std::u32string toNfc(std::u32string_view text) {
  // Everything below U+0300 is already in NFC and composes with nothing before it: the common case.
  if (std::all_of(text.begin(), text.end(), [](char32_t c) { return c < 0x300; })) return std::u32string(text);

  std::u32string d;
  d.reserve(text.size() + 8);
  for (char32_t cp : text) decomposeInto(cp, d);

  // Canonical ordering: a stable sort of each run of non-starters by combining class.
  for (size_t i = 0; i < d.size();) {
    if (ccc(d[i]) == 0) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < d.size() && ccc(d[end]) != 0) ++end;
    std::stable_sort(d.begin() + static_cast<ptrdiff_t>(i), d.begin() + static_cast<ptrdiff_t>(end),
                     [](char32_t a, char32_t b) { return ccc(a) < ccc(b); });
    i = end;
  }

  // Canonical composition: each character joins the last starter unless a character in between blocks it
  // (one with class 0 or a class not lower than its own).
  std::u32string out;
  out.reserve(d.size());
  size_t starter = std::u32string::npos;
  uint8_t lastCcc = 0;
  for (char32_t cp : d) {
    uint8_t cc = ccc(cp);
    if (starter != std::u32string::npos) {
      bool adjacent = starter == out.size() - 1;
      if (adjacent || (lastCcc != 0 && lastCcc < cc)) {
        if (char32_t composed = compose(out[starter], cp)) {
          out[starter] = composed;
          continue;
        }
      }
    }
    if (cc == 0) starter = out.size();
    lastCcc = cc;
    out += cp;
  }
  return out;
}

}  // namespace sdgen::models::unicode
