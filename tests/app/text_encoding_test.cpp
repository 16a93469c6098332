// UTF-8 <-> Latin-1 for PNG text chunks.
#include <gtest/gtest.h>

#include "app/text_encoding.h"

namespace sdgen::app {
namespace {

TEST(TextEncoding, Latin1RoundTrip) {
  std::string all;
  for (int c = 1; c < 256; ++c) all.push_back(static_cast<char>(c));
  const std::string utf8 = latin1ToUtf8(all);
  EXPECT_EQ(utf8.size(), 127u + 2u * 128u);  // ASCII one byte, U+0080..U+00FF two
  EXPECT_TRUE(isValidUtf8(utf8));
  EXPECT_EQ(utf8ToLatin1(utf8), all);
  EXPECT_EQ(latin1ToUtf8("\xE9"), "\xC3\xA9");
  EXPECT_EQ(utf8ToLatin1("caf\xC3\xA9"), std::string("caf\xE9"));
}

TEST(TextEncoding, NotLatin1) {
  EXPECT_FALSE(utf8ToLatin1("\xC4\x80").has_value());          // U+0100
  EXPECT_FALSE(utf8ToLatin1("\xE7\x8C\xAB").has_value());      // 猫
  EXPECT_FALSE(utf8ToLatin1("\xF0\x9F\x90\x88").has_value());  // 🐈
  EXPECT_FALSE(utf8ToLatin1("\xE9").has_value());              // a bare Latin-1 byte is not UTF-8
}

TEST(TextEncoding, Validation) {
  EXPECT_TRUE(isValidUtf8(""));
  EXPECT_TRUE(isValidUtf8("\xF4\x8F\xBF\xBF"));   // U+10FFFF
  EXPECT_FALSE(isValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(isValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(isValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(isValidUtf8("\xE7\x8C"));          // truncated
  EXPECT_FALSE(isValidUtf8("\x80"));              // lone continuation
  EXPECT_EQ(sanitizeUtf8("a\xFF" "b\xE7\x8C\xAB"), "a\xEF\xBF\xBD" "b\xE7\x8C\xAB");
  EXPECT_EQ(sanitizeUtf8("\xE7\x8C"), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace sdgen::app
