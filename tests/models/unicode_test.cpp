// The Unicode pieces of the CLIP tokenizer, checked against what Python gives for the same input.
#include <gtest/gtest.h>

#include "models/tokenizer/pretokenizer.h"
#include "models/tokenizer/text_cleanup.h"
#include "models/tokenizer/unicode.h"

namespace sdgen::models {
namespace {

using namespace unicode;

TEST(Unicode, Utf8RoundTripAndMalformedInput) {
  std::string text = "a\xc3\xa9\xe6\x97\xa5\xf0\x9f\x90\xb1";  // a é 日 🐱
  EXPECT_EQ(decodeUtf8(text), (std::u32string{U'a', 0xE9, 0x65E5, 0x1F431}));
  EXPECT_EQ(encodeUtf8(decodeUtf8(text)), text);
  // Lone continuation byte, truncated sequence, overlong '/', encoded surrogate: one U+FFFD per bad byte.
  EXPECT_EQ(decodeUtf8("\x80"), U"\uFFFD");
  EXPECT_EQ(decodeUtf8("\xe6\x97"), U"\uFFFD\uFFFD");
  EXPECT_EQ(decodeUtf8("\xc0\xaf"), U"\uFFFD\uFFFD");
  EXPECT_EQ(decodeUtf8("\xed\xa0\x80"), U"\uFFFD\uFFFD\uFFFD");
}

TEST(Unicode, CharacterClassesOfThePattern) {
  EXPECT_TRUE(isLetter(U'a'));
  EXPECT_TRUE(isLetter(0xE9));     // é
  EXPECT_TRUE(isLetter(0x3B1));    // α
  EXPECT_TRUE(isLetter(0x436));    // ж
  EXPECT_TRUE(isLetter(0x65E5));   // 日
  EXPECT_FALSE(isLetter(U'1'));
  EXPECT_TRUE(isNumber(U'7'));
  EXPECT_TRUE(isNumber(0xB2));     // ²
  EXPECT_TRUE(isNumber(0x663));    // Arabic-Indic three
  EXPECT_TRUE(isOtherSymbol(U'!'));
  EXPECT_TRUE(isOtherSymbol(0x1F431));
  EXPECT_FALSE(isOtherSymbol(U' '));
  EXPECT_FALSE(isOtherSymbol(U'a'));
  for (char32_t c = 0; c < 0x80; ++c) {
    bool space = c == ' ' || (c >= 9 && c <= 13);  // the regex module's \s, unlike str.isspace(), omits 0x1C-0x1F
    int classes = isLetter(c) + isNumber(c) + isOtherSymbol(c);
    EXPECT_EQ(classes, space ? 0 : 1) << "U+" << std::hex << static_cast<uint32_t>(c);
  }
}

TEST(Unicode, LowerCaseLikePython) {
  EXPECT_EQ(toLower(U"ABC Déjà ÀÉÎ"), U"abc déjà àéî");
  EXPECT_EQ(toLower(U"ПРИВЕТ"), U"привет");
  EXPECT_EQ(toLower(U"\u0130"), U"i\u0307");         // İ lower-cases to two code points
  EXPECT_EQ(toLower(U"\u212A"), U"k");               // Kelvin sign
  EXPECT_EQ(toLower(U"ΟΔΥΣΣΕΥΣ"), U"οδυσσευς");      // final sigma only at the end
  EXPECT_EQ(toLower(U"Σ"), U"σ");                    // nothing cased before it
  EXPECT_EQ(toLower(U"ΑΣ'"), U"ας'");                // the apostrophe is case-ignorable
  EXPECT_EQ(toLower(U"ΑΣA"), U"ασa");
}

TEST(Unicode, Nfc) {
  EXPECT_EQ(toNfc(U"cafe\u0301"), U"caf\u00E9");
  EXPECT_EQ(toNfc(U"caf\u00E9"), U"caf\u00E9");
  EXPECT_EQ(toNfc(U"\u212B"), U"\u00C5");                      // Angstrom sign is a singleton: Å
  EXPECT_EQ(toNfc(U"a\u0323\u0302"), U"\u1EAD" "");            // ậ from either mark order
  EXPECT_EQ(toNfc(U"a\u0302\u0323"), U"\u1EAD");
  EXPECT_EQ(toNfc(U"\u1100\u1161\u11A8"), U"\uAC01");          // Hangul jamo compose to 각
  EXPECT_EQ(toNfc(U"\uAC01"), U"\uAC01");
  EXPECT_EQ(toNfc(U"\u0301a"), U"\u0301a");                    // a leading mark has nothing to join
  EXPECT_EQ(toNfc(U"\uFB01"), U"\uFB01");                      // compatibility ligature stays (NFC, not NFKC)
}

TEST(TextCleanup, WordsLikeTheReference) {
  using namespace std::literals;  // the input holds a NUL, so it needs its length
  auto words = cleanTextToWords(U" A\tphoto\n\nof\u00A0a\u200Bcat\u0000 東京 "sv);
  EXPECT_EQ(words, (std::vector<std::u32string>{U"a", U"photo", U"of", U"acat", U"東", U"京"}));
  EXPECT_TRUE(cleanTextToWords(U" \t\r\n").empty());
}

TEST(Pretokenizer, PiecesLikeThePattern) {
  auto pieces = [](std::u32string_view s) {
    std::vector<std::u32string> out;
    for (auto p : splitClipPieces(s)) out.emplace_back(p);
    return out;
  };
  EXPECT_EQ(pieces(U"it's"), (std::vector<std::u32string>{U"it", U"'s"}));
  EXPECT_EQ(pieces(U"don't"), (std::vector<std::u32string>{U"don", U"'t"}));
  EXPECT_EQ(pieces(U"123"), (std::vector<std::u32string>{U"1", U"2", U"3"}));
  EXPECT_EQ(pieces(U"(red:1.3)"), (std::vector<std::u32string>{U"(", U"red", U":", U"1", U".", U"3", U")"}));
  EXPECT_EQ(pieces(U"a<|endoftext|>b"), (std::vector<std::u32string>{U"a", U"<|endoftext|>", U"b"}));
  EXPECT_EQ(pieces(U"!<|endoftext|>"), (std::vector<std::u32string>{U"!<|", U"endoftext", U"|>"}));
  EXPECT_EQ(pieces(U"'\u017F"), (std::vector<std::u32string>{U"'\u017F"}));  // long s folds to 's
  EXPECT_EQ(pieces(U"a b"), (std::vector<std::u32string>{U"a", U"b"}));
}

}  // namespace
}  // namespace sdgen::models
