// CLIP tokenizer: id-for-id parity with transformers' CLIPTokenizer on the committed fixture
// (tests/fixtures/tokenizer/clip_cases.json, from scripts/make_tokenizer_fixtures.py), both vocabulary
// formats, the padding/truncation options, and errors that name the file.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "engine/file_util.h"
#include "models/tokenizer/clip_tokenizer.h"
#include "tests/models/models_test_util.h"

namespace sdgen::models {
namespace {

using nlohmann::json;
using test::errorOf;
using test::sourcePath;
using test::TempDir;

const std::string kVocab = sourcePath("models/vocab/clip/vocab.json");
const std::string kMerges = sourcePath("models/vocab/clip/merges.txt");
const std::string kFixture = sourcePath("tests/fixtures/tokenizer/clip_cases.json");
const std::string kFastJson = sourcePath("tests/fixtures/tokenizer/fast/tokenizer.json");

const json& fixture() {
  static const json j = [] {
    auto text = readFile(kFixture);
    if (!text) throw Error("cannot read " + kFixture);
    return json::parse(*text);
  }();
  return j;
}

const ClipBpeTokenizer& clip() {
  static const ClipBpeTokenizer t = ClipBpeTokenizer::fromVocabAndMerges(kVocab, kMerges);
  return t;
}

std::string printable(const std::string& text) { return json(text).dump(); }

void expectMatchesFixture(const ClipBpeTokenizer& tok) {
  const json& cases = fixture()["cases"];
  ASSERT_GE(cases.size(), 60u);
  size_t mismatches = 0;
  for (const json& c : cases) {
    std::string text = c["text"].get<std::string>();
    Encoding e = tok.encode(text);
    std::vector<int32_t> expected = c["ids"].get<std::vector<int32_t>>();
    bool same = e.ids == expected;
    mismatches += !same;
    EXPECT_EQ(e.ids, expected) << "prompt " << printable(text);
    EXPECT_EQ(e.truncated, c["truncated"].get<bool>()) << "prompt " << printable(text);
    EXPECT_EQ(e.droppedTokens, c["dropped"].get<size_t>()) << "prompt " << printable(text);
    EXPECT_EQ(e.length, c["length"].get<size_t>()) << "prompt " << printable(text);
  }
  EXPECT_EQ(mismatches, 0u) << "of " << cases.size() << " fixture prompts";
}

TEST(ClipTokenizer, KnownIds) {
  Encoding e = clip().encode("a photo of a cat");
  std::vector<int32_t> head(e.ids.begin(), e.ids.begin() + 7);
  EXPECT_EQ(head, (std::vector<int32_t>{49406, 320, 1125, 539, 320, 2368, 49407}));
  EXPECT_EQ(e.ids.size(), 77u);
  EXPECT_EQ(e.length, 7u);
  EXPECT_FALSE(e.truncated);
  EXPECT_EQ(e.ids.back(), 49407);  // SD 1.x pads with the end token
  EXPECT_EQ(clip().bosId(), 49406);
  EXPECT_EQ(clip().eosId(), 49407);
  EXPECT_EQ(clip().bpe().vocab().size(), 49408u);
  EXPECT_EQ(clip().bpe().mergeCount(), ClipBpeTokenizer::kClipMergeCount);
}

TEST(ClipTokenizer, MatchesTransformersOnEveryFixtureCase) {
  EXPECT_EQ(fixture()["max_length"].get<size_t>(), clip().maxLength());
  EXPECT_EQ(fixture()["pad_id"].get<int32_t>(), clip().padId());
  expectMatchesFixture(clip());
}

TEST(ClipTokenizer, TokenizerJsonGivesTheSameIds) {
  ClipBpeTokenizer fromJson = ClipBpeTokenizer::fromTokenizerJson(kFastJson);
  EXPECT_EQ(fromJson.bpe().vocab().size(), 49408u);
  EXPECT_EQ(fromJson.bpe().mergeCount(), ClipBpeTokenizer::kClipMergeCount);
  expectMatchesFixture(fromJson);
}

TEST(ClipTokenizer, FromDirectoryReadsTheCommittedVocabulary) {
  ClipBpeTokenizer t = ClipBpeTokenizer::fromDirectory(sourcePath("models/vocab/clip"));
  EXPECT_EQ(t.encode("a photo of a cat").ids, clip().encode("a photo of a cat").ids);
  ClipBpeTokenizer j = ClipBpeTokenizer::fromDirectory(sourcePath("tests/fixtures/tokenizer/fast"));
  EXPECT_EQ(j.encode("a photo of a cat").ids, clip().encode("a photo of a cat").ids);
}

TEST(ClipTokenizer, PadIdIsConfigurable) {
  // SD 2.x's OpenCLIP tokenizer pads with id 0 instead of the end token.
  ClipBpeTokenizer t = ClipBpeTokenizer::fromVocabAndMerges(kVocab, kMerges, {.padId = 0});
  Encoding e = t.encode("a photo of a cat");
  Encoding ref = clip().encode("a photo of a cat");
  ASSERT_EQ(e.length, ref.length);
  for (size_t i = 0; i < e.ids.size(); ++i) EXPECT_EQ(e.ids[i], i < e.length ? ref.ids[i] : 0) << "position " << i;
}

TEST(ClipTokenizer, TruncationKeepsTheEndTokenAndReports) {
  std::string reported;
  size_t reportedDropped = 0;
  ClipTokenizerOptions options;
  options.onTruncate = [&](std::string_view text, const Encoding& e) {
    reported = std::string(text);
    reportedDropped = e.droppedTokens;
  };
  ClipBpeTokenizer t = ClipBpeTokenizer::fromVocabAndMerges(kVocab, kMerges, options);
  std::string prompt;
  for (int i = 0; i < 80; ++i) prompt += "cat ";
  Encoding e = t.encode(prompt);
  EXPECT_TRUE(e.truncated);
  EXPECT_EQ(e.droppedTokens, 5u);
  EXPECT_EQ(e.length, 77u);
  EXPECT_EQ(e.ids.back(), 49407);
  EXPECT_EQ(e.ids[75], 2368);
  EXPECT_EQ(reported, prompt);
  EXPECT_EQ(reportedDropped, 5u);

  reported.clear();
  Encoding fits = t.encode("a cat");
  EXPECT_FALSE(fits.truncated);
  EXPECT_TRUE(reported.empty()) << "no report for a prompt that fits";
}

TEST(ClipTokenizer, ShorterMaxLength) {
  ClipBpeTokenizer t = ClipBpeTokenizer::fromVocabAndMerges(kVocab, kMerges, {.maxLength = 5});
  Encoding e = t.encode("a photo of a cat");
  EXPECT_EQ(e.ids, (std::vector<int32_t>{49406, 320, 1125, 539, 49407}));
  EXPECT_EQ(e.droppedTokens, 2u);
  EXPECT_NE(errorOf([&] { ClipBpeTokenizer::fromVocabAndMerges(kVocab, kMerges, {.maxLength = 1}); }), "");
}

TEST(ClipTokenizer, ContentIdsHaveNoSpecialTokens) {
  EXPECT_EQ(clip().contentIds("a photo of a cat"), (std::vector<int32_t>{320, 1125, 539, 320, 2368}));
  EXPECT_TRUE(clip().contentIds("").empty());
}

TEST(ClipTokenizer, MalformedUtf8IsDroppedLikeReplacementCharacters) {
  // Python would decode such bytes to U+FFFD, which the reference's cleanup removes.
  EXPECT_EQ(clip().contentIds("a\xff photo\xc3 of a c\xe2\x82" "at"), clip().contentIds("a photo of a cat"));
}

TEST(ClipTokenizer, BpeSymbolsCarryTheEndOfWordMarker) {
  EXPECT_EQ(clip().bpe().symbols("photo"), (std::vector<std::string>{"photo</w>"}));
  EXPECT_EQ(clip().bpe().symbols(" "), (std::vector<std::string>{"\xc4\xa0</w>"}));  // space stands in as U+0120
  EXPECT_TRUE(clip().bpe().symbols("").empty());
}

// A minimal CLIP-style vocabulary in tokenizer.json form, with merges in either spelling.
std::string tinyTokenizerJson(bool mergesAsStrings) {
  json vocab = {{"a", 0}, {"b</w>", 1}, {"ab</w>", 2}, {"<|startoftext|>", 3}, {"<|endoftext|>", 4}};
  json merges = mergesAsStrings ? json::array({"a b</w>"}) : json::array({json::array({"a", "b</w>"})});
  json root = {{"model", {{"type", "BPE"}, {"end_of_word_suffix", "</w>"}, {"vocab", vocab}, {"merges", merges}}},
               {"added_tokens", json::array({{{"id", 3}, {"content", "<|startoftext|>"}},
                                             {{"id", 4}, {"content", "<|endoftext|>"}}})}};
  return root.dump();
}

TEST(ClipTokenizer, TokenizerJsonMergesAsStringsOrPairs) {
  TempDir dir;
  for (bool strings : {true, false}) {
    ClipBpeTokenizer t = ClipBpeTokenizer::fromTokenizerJson(dir.write("tokenizer.json", tinyTokenizerJson(strings)),
                                                             {.maxLength = 5});
    EXPECT_EQ(t.encode("AB").ids, (std::vector<int32_t>{3, 2, 4, 4, 4})) << (strings ? "strings" : "pairs");
  }
}

TEST(ClipTokenizer, TokenizerJsonAddedTokensAreSplitOut) {
  // An added token beyond the two specials ("xy", id 5) is cut out of the text before the cleanup and BPE, so
  // "abxyab" is "ab" [xy] "ab" instead of one word whose symbols are unknown.
  json root = json::parse(tinyTokenizerJson(true));
  root["added_tokens"].push_back({{"id", 5}, {"content", "xy"}, {"special", false}});
  TempDir dir;
  ClipBpeTokenizer t = ClipBpeTokenizer::fromTokenizerJson(dir.write("tokenizer.json", root.dump()), {.maxLength = 6});
  EXPECT_EQ(t.encode("abxyab").ids, (std::vector<int32_t>{3, 2, 5, 2, 4, 4}));
  // Matching is case-sensitive: "XY" is cleaned to "xy" and BPE-encoded, its two symbols unknown (= end id).
  Encoding upper = t.encode("ab XY");
  EXPECT_EQ(upper.ids, (std::vector<int32_t>{3, 2, 4, 4, 4, 4}));
  EXPECT_EQ(upper.length, 5u);
  root["added_tokens"].back()["lstrip"] = "no";
  std::string bad = dir.write("bad.json", root.dump());
  std::string msg = errorOf([&] { ClipBpeTokenizer::fromTokenizerJson(bad); });
  EXPECT_NE(msg.find(bad), std::string::npos) << msg;
  EXPECT_NE(msg.find("added_tokens[2]"), std::string::npos) << msg;
}

TEST(ClipTokenizer, MergesWithWindowsLineEndingsAndTrailingBlankLines) {
  TempDir dir;
  std::string vocab = dir.write("vocab.json", json::parse(tinyTokenizerJson(true))["model"]["vocab"].dump());
  std::string merges = dir.write("merges.txt", "#version: 0.2\r\na b</w>\r\n\r\n\n");
  ClipBpeTokenizer t = ClipBpeTokenizer::fromVocabAndMerges(vocab, merges, {.maxLength = 4});
  EXPECT_EQ(t.encode("ab").ids, (std::vector<int32_t>{3, 2, 4, 4}));
  EXPECT_EQ(t.bpe().mergeCount(), 1u);
}

TEST(ClipTokenizer, MissingFilesNameThePath) {
  TempDir dir;
  std::string missing = dir.file("nope/vocab.json");
  std::string msg = errorOf([&] { ClipBpeTokenizer::fromVocabAndMerges(missing, kMerges); });
  EXPECT_NE(msg.find(missing), std::string::npos) << msg;
  msg = errorOf([&] { ClipBpeTokenizer::fromVocabAndMerges(kVocab, dir.file("merges.txt")); });
  EXPECT_NE(msg.find(dir.file("merges.txt")), std::string::npos) << msg;
  msg = errorOf([&] { ClipBpeTokenizer::fromTokenizerJson(dir.file("tokenizer.json")); });
  EXPECT_NE(msg.find(dir.file("tokenizer.json")), std::string::npos) << msg;
  msg = errorOf([&] { ClipBpeTokenizer::fromDirectory(dir.file("")); });
  EXPECT_NE(msg.find("sdgen_models_test_"), std::string::npos) << msg;
}

TEST(ClipTokenizer, CorruptFilesNameThePath) {
  TempDir dir;
  struct Case {
    const char* what;
    std::function<void()> load;
    std::string file;
    const char* detail;
  };
  std::string badJson = dir.write("bad_vocab.json", "{\"a\": 0, ");
  std::string badId = dir.write("bad_id.json", R"({"a": "zero"})");
  std::string noSpecials = dir.write("no_specials.json", R"({"a": 0, "b</w>": 1})");
  std::string noHeader = dir.write("no_header.txt", "a b\n");
  std::string badLine = dir.write("bad_line.txt", "#version: 0.2\na b\nc\n");
  std::string notModel = dir.write("not_model.json", R"({"version": "1.0"})");
  std::string wordPiece = dir.write("wordpiece.json", R"({"model": {"type": "WordPiece", "vocab": {}}})");
  std::string badMerge =
      dir.write("bad_merge.json", R"({"model": {"type": "BPE", "end_of_word_suffix": "</w>", "vocab": {"a": 0},
                                      "merges": [["a"]]}})");
  // fuzz_tokenizer_files' finding (session 13): a "type" that is not a string escaped as nlohmann's type_error.
  std::string typeArray = dir.write("type_array.json", R"({"model": {"type": ["c a", "t h"], "vocab": {}}})");
  // An error message quotes at most 80 characters of a hostile value.
  std::string longMerge = dir.write("long_merge.json", R"({"model": {"type": "BPE", "end_of_word_suffix": "</w>",
                                      "vocab": {"a": 0}, "merges": [[")" + std::string(100000, 'x') + R"("]]}})");
  std::vector<Case> cases = {
      {"invalid JSON", [&] { ClipBpeTokenizer::fromVocabAndMerges(badJson, kMerges); }, badJson, "not valid JSON"},
      {"non-integer id", [&] { ClipBpeTokenizer::fromVocabAndMerges(badId, kMerges); }, badId, "'a'"},
      {"no special tokens", [&] { ClipBpeTokenizer::fromVocabAndMerges(noSpecials, kMerges); }, noSpecials,
       "<|startoftext|>"},
      {"merges without header", [&] { ClipBpeTokenizer::fromVocabAndMerges(kVocab, noHeader); }, noHeader,
       "#version"},
      {"bad merge line", [&] { ClipBpeTokenizer::fromVocabAndMerges(kVocab, badLine); }, badLine, "line 3"},
      {"not a tokenizer.json", [&] { ClipBpeTokenizer::fromTokenizerJson(notModel); }, notModel, "model"},
      {"not BPE", [&] { ClipBpeTokenizer::fromTokenizerJson(wordPiece); }, wordPiece, "WordPiece"},
      {"bad merge entry", [&] { ClipBpeTokenizer::fromTokenizerJson(badMerge); }, badMerge, "merges[0]"},
      {"type not a string", [&] { ClipBpeTokenizer::fromTokenizerJson(typeArray); }, typeArray,
       "model type is [\"c a\",\"t h\"], expected \"BPE\""},
      {"long merge entry", [&] { ClipBpeTokenizer::fromTokenizerJson(longMerge); }, longMerge, "xxx..., expected"},
  };
  for (const Case& c : cases) {
    std::string msg = errorOf(c.load);
    EXPECT_NE(msg.find(c.file), std::string::npos) << c.what << ": " << msg.substr(0, 300);
    EXPECT_NE(msg.find(c.detail), std::string::npos) << c.what << ": " << msg.substr(0, 300);
    EXPECT_LT(msg.size(), 400u) << c.what;
  }
}

}  // namespace
}  // namespace sdgen::models
