// Token windows from parsed prompts (webui's tokenize_line rules) with the shipped CLIP vocabulary. The expected
// chunk boundaries are worked out by hand from webui's rules (75 tokens, the last comma within 20 tokens), with
// prompts whose words are one token each ("cat", "dog", ",").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/prompt/conditioning_windows.h"
#include "models/prompt/prompt_chunks.h"
#include "models/tokenizer/clip_tokenizer.h"
#include "tests/models/models_test_util.h"

namespace sdgen::prompt {
namespace {

using Ids = std::vector<int32_t>;

const models::ClipBpeTokenizer& clip() {
  static const models::ClipBpeTokenizer t =
      models::ClipBpeTokenizer::fromDirectory(test::sourcePath("models/vocab/clip"));
  return t;
}

// SD 2.x's tokenizer pads with id 0 instead of EOS.
const models::ClipBpeTokenizer& clipPad0() {
  static const models::ClipBpeTokenizer t = models::ClipBpeTokenizer::fromDirectory(
      test::sourcePath("models/vocab/clip"), {.padId = 0});
  return t;
}

std::string repeat(const std::string& word, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += word + " ";
  return s;
}

int32_t id(const std::string& word) { return clip().contentIds(word).at(0); }

TokenWindows chunks(const std::string& prompt, const models::Tokenizer& t = clip()) {
  return chunkPrompt(parsePromptAttention(prompt), t);
}

Ids window(const TokenWindows& w, size_t k) {
  return Ids(w.ids.begin() + ptrdiff_t(k * w.windowLength), w.ids.begin() + ptrdiff_t((k + 1) * w.windowLength));
}

// BOS, content, EOS, then padding to 77: what a window must hold.
Ids expected(const Ids& content, const models::Tokenizer& t = clip()) {
  Ids out{t.bosId()};
  out.insert(out.end(), content.begin(), content.end());
  out.push_back(t.eosId());
  out.resize(77, t.padId());
  return out;
}

Ids times(const std::string& word, int n) { return Ids(size_t(n), id(word)); }
Ids cat(Ids a, const Ids& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(PromptChunks, WordsAreOneTokenEach) {
  ASSERT_EQ(clip().contentIds("cat cat , dog"), (Ids{id("cat"), id("cat"), id(","), id("dog")}));
  ASSERT_EQ(clip().vocabularyId(",</w>"), id(","));
}

TEST(PromptChunks, ShortPlainPromptsAreTheTokenizersOwnWindow) {
  for (const char* p : {"", "a red circle on a blue background", "it's a dog's life, isn't it?", "café crème"}) {
    for (const models::ClipBpeTokenizer* t : {&clip(), &clipPad0()}) {
      TokenWindows w = chunks(p, *t);
      ASSERT_EQ(w.windows(), 1u) << p;
      EXPECT_EQ(w.ids, t->encode(p).ids) << p;
      EXPECT_FALSE(w.weighted()) << p;
    }
  }
  // 75 tokens still fit one window.
  EXPECT_EQ(chunks(repeat("cat", 75)).ids, expected(times("cat", 75)));
}

TEST(PromptChunks, SeventyFiveTokensPerChunk) {
  TokenWindows w = chunks(repeat("cat", 80));
  ASSERT_EQ(w.windows(), 2u);
  EXPECT_EQ(window(w, 0), expected(times("cat", 75)));
  EXPECT_EQ(window(w, 1), expected(times("cat", 5)));
  EXPECT_EQ(w.tokenCount, 80u);
  // SD 2.x: the second window is padded with 0 after its EOS.
  TokenWindows w2 = chunks(repeat("cat", 80), clipPad0());
  EXPECT_EQ(window(w2, 1), expected(times("cat", 5), clipPad0()));
  EXPECT_EQ(window(w2, 1)[7], 0);
}

TEST(PromptChunks, TheLastCommaWithinTwentyTokensStartsTheNextChunk) {
  // 70 cats, a comma (token 71), 10 dogs: when the 76th token arrives the comma is 5 back, so the 4 dogs after it
  // move on with the rest.
  TokenWindows w = chunks(repeat("cat", 70) + ", " + repeat("dog", 10));
  ASSERT_EQ(w.windows(), 2u);
  EXPECT_EQ(window(w, 0), expected(cat(times("cat", 70), {id(",")})));
  EXPECT_EQ(window(w, 1), expected(times("dog", 10)));
  EXPECT_EQ(w.tokenCount, 85u);

  // Exactly 20 back (comma at index 55) still moves; 21 back does not.
  w = chunks(repeat("cat", 55) + ", " + repeat("dog", 30));
  EXPECT_EQ(window(w, 0), expected(cat(times("cat", 55), {id(",")})));
  EXPECT_EQ(window(w, 1), expected(times("dog", 30)));
  w = chunks(repeat("cat", 54) + ", " + repeat("dog", 30));
  EXPECT_EQ(window(w, 0), expected(cat(cat(times("cat", 54), {id(",")}), times("dog", 20))));
  EXPECT_EQ(window(w, 1), expected(times("dog", 10)));

  // A comma arriving when the chunk is full opens the next chunk and is not remembered there.
  w = chunks(repeat("cat", 75) + ", " + repeat("dog", 80));
  ASSERT_EQ(w.windows(), 3u);
  EXPECT_EQ(window(w, 0), expected(times("cat", 75)));
  EXPECT_EQ(window(w, 1), expected(cat({id(",")}, times("dog", 74))));
  EXPECT_EQ(window(w, 2), expected(times("dog", 6)));

  // Backtracking off: a hard cut at 75.
  w = chunkPrompt(parsePromptAttention(repeat("cat", 70) + ", " + repeat("dog", 10)), clip(), "p",
                  {.commaBacktrack = 0});
  EXPECT_EQ(window(w, 0), expected(cat(cat(times("cat", 70), {id(",")}), times("dog", 4))));
}

TEST(PromptChunks, BreakClosesTheChunk) {
  TokenWindows w = chunks("cat BREAK dog");
  ASSERT_EQ(w.windows(), 2u);
  EXPECT_EQ(window(w, 0), expected({id("cat")}));
  EXPECT_EQ(window(w, 1), expected({id("dog")}));
  EXPECT_EQ(w.tokenCount, 76u);  // webui counts a chunk closed by BREAK as 75
  // Each BREAK closes a chunk, even an empty one; a BREAK at the end leaves no empty chunk after it.
  w = chunks("BREAK BREAK cat");
  ASSERT_EQ(w.windows(), 3u);
  EXPECT_EQ(window(w, 0), clip().encode("").ids);
  EXPECT_EQ(window(w, 1), clip().encode("").ids);
  EXPECT_EQ(window(w, 2), expected({id("cat")}));
  EXPECT_EQ(chunks("cat BREAK").windows(), 1u);
}

TEST(PromptChunks, WeightsFollowTheirTokens) {
  TokenWindows w = chunks("a (red:1.5) [cat], ((dog))");
  const Ids content = clip().contentIds("a red cat, dog");
  ASSERT_EQ(content.size(), 5u);
  EXPECT_EQ(window(w, 0), expected(content));
  std::vector<float> want(77, 1.f);
  want[2] = 1.5f;
  want[3] = float(1.0 / 1.1);
  want[5] = float(1.1 * 1.1);
  EXPECT_EQ(w.weights, want);
  EXPECT_TRUE(w.weighted());
  // Fragments of equal weight are tokenized together: "unnecessaryparens" is not "unnecessary" + "parens".
  EXPECT_EQ(window(chunks("(unnecessary)(parens)"), 0), expected(clip().contentIds("unnecessaryparens")));
  EXPECT_NE(clip().contentIds("unnecessaryparens"),
            cat(clip().contentIds("unnecessary"), clip().contentIds("parens")));
}

TEST(PromptChunks, TooManyChunksIsAnError) {
  EXPECT_EQ(chunks(repeat("cat", 32 * 75)).windows(), 32u);
  std::string message = test::errorOf(
      [] { chunkPrompt(parsePromptAttention(repeat("cat", 32 * 75 + 1)), clip(), "the negative prompt"); });
  EXPECT_NE(message.find("the negative prompt needs 33 chunks of 75 tokens (2401 tokens); at most 32 chunks (2400 "
                         "tokens) are supported"),
            std::string::npos)
      << message;
}

TEST(ConditioningWindows, NegativePromptPaddedToTheSameChunks) {
  const std::string longPrompt = repeat("cat", 80);
  ConditioningWindows c = makeConditioningWindows(clip(), PromptSyntax::Webui, longPrompt, "blurry", true);
  ASSERT_EQ(c.chunks, 2u);
  ASSERT_EQ(c.windows(), 4u);
  EXPECT_EQ(c.contextLength(), 154u);
  auto w = [&](size_t k) { return Ids(c.ids.begin() + ptrdiff_t(k * 77), c.ids.begin() + ptrdiff_t((k + 1) * 77)); };
  EXPECT_EQ(w(0), clip().encode("blurry").ids);  // the negative prompt first
  EXPECT_EQ(w(1), clip().encode("").ids);        // padded with the empty prompt's window
  EXPECT_EQ(w(2), expected(times("cat", 75)));
  EXPECT_EQ(w(3), expected(times("cat", 5)));
  EXPECT_FALSE(c.weighted);
  EXPECT_TRUE(c.warnings.empty());

  // The other way round: the prompt is padded.
  c = makeConditioningWindows(clip(), PromptSyntax::Webui, "cat", longPrompt, true);
  ASSERT_EQ(c.chunks, 2u);
  EXPECT_EQ(w(3), clip().encode("").ids);
  // No guidance: the prompt's windows alone.
  c = makeConditioningWindows(clip(), PromptSyntax::Webui, longPrompt, "ignored (x:1.2.3)", false);
  EXPECT_EQ(c.batch, 1);
  EXPECT_EQ(c.windows(), 2u);
  c = makeConditioningWindows(clip(), PromptSyntax::Webui, "(cat:1.2)", "", true);
  EXPECT_TRUE(c.weighted);
  EXPECT_EQ(c.weights[77 + 1], 1.2f);
}

TEST(ConditioningWindows, PlainSyntaxTruncatesWithAWarning) {
  const std::string longPrompt = repeat("cat", 80);
  ConditioningWindows c = makeConditioningWindows(clip(), PromptSyntax::Plain, longPrompt, "(x:1.2.3)", true);
  ASSERT_EQ(c.chunks, 1u);
  ASSERT_EQ(c.windows(), 2u);
  EXPECT_EQ(Ids(c.ids.begin(), c.ids.begin() + 77), clip().encode("(x:1.2.3)").ids);  // read literally
  EXPECT_EQ(Ids(c.ids.begin() + 77, c.ids.end()), clip().encode(longPrompt).ids);
  EXPECT_FALSE(c.weighted);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0], "the prompt is longer than the text encoder's 77 tokens: 5 tokens were cut off");
}

TEST(ConditioningWindows, ErrorsNameWhichPrompt) {
  EXPECT_NE(test::errorOf([] { makeConditioningWindows(clip(), PromptSyntax::Webui, "ok", "(x:1.2.3)", true); })
                .find("the negative prompt: malformed weight '1.2.3' at character 4"),
            std::string::npos);
  EXPECT_NE(test::errorOf([] { makeConditioningWindows(clip(), PromptSyntax::Webui, "(x:500)", "", true); })
                .find("the prompt: weight '500' is out of range"),
            std::string::npos);
  EXPECT_NE(test::errorOf([] {
              makeConditioningWindows(clip(), PromptSyntax::Plain, std::string(20000, 'a'), "", true);
            }).find("the prompt is 20000 bytes long"),
            std::string::npos);
}

}  // namespace
}  // namespace sdgen::prompt
