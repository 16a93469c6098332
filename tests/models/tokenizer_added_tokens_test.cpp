// Added tokens of tokenizer folders (models/tokenizer/added_tokens.h, formats/tokenizer_folder.h): SD 2.x's pad
// token "!" is an added special token that transformers splits out of every prompt, so "8k!!!" ends in 0 0 0 for
// tiny-sd2 but in 995 ("!!!") for tiny-sd1, which has no such token. Checked id for id against the fixtures of the
// tiny models (transformers' tokenizer of each model folder) and against transformers 4.57's Python
// CLIPTokenizer on synthetic folders with added tokens of every flag.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/file_util.h"
#include "models/formats/model_files.h"
#include "models/formats/tokenizer_folder.h"
#include "models/tokenizer/added_tokens.h"
#include "models/tokenizer/unicode.h"
#include "tests/models/models_test_util.h"

namespace sdgen::models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::errorOf;
using test::sourcePath;
using test::TempDir;

json readJsonFile(const std::string& path) {
  std::optional<std::string> text = readFile(path);
  if (!text) throw Error("cannot read " + path);
  return json::parse(*text);
}

// Every prompt of the text-encoder fixture, through the model folder's own tokenizer, gives every fixture id.
void expectFixtureIds(const std::string& model, const std::string& fixture) {
  ModelFiles m = openModel(sourcePath("tests/data/" + model));
  const json meta = readJsonFile(sourcePath("tests/data/fixtures/text_encoder_" + fixture + ".json"));
  const json& prompts = meta.at("prompts");
  const json& ids = meta.at("ids");
  ASSERT_EQ(prompts.size(), ids.size());
  ASSERT_GE(prompts.size(), 5u);
  for (size_t i = 0; i < prompts.size(); ++i) {
    const std::string prompt = prompts[i].get<std::string>();
    EXPECT_EQ(m.tokenizer->encode(prompt).ids, ids[i].get<std::vector<int32_t>>())
        << model << " prompt " << i << " " << json(prompt).dump();
  }
}

// The fixture prompt with "!!!", whose ids tell the two tokenizers apart.
std::vector<int32_t> exclamationPromptIds(const std::string& fixture) {
  const json meta = readJsonFile(sourcePath("tests/data/fixtures/text_encoder_" + fixture + ".json"));
  for (size_t i = 0; i < meta.at("prompts").size(); ++i)
    if (meta["prompts"][i].get<std::string>().find("8k!!!") != std::string::npos)
      return meta["ids"][i].get<std::vector<int32_t>>();
  ADD_FAILURE() << "no prompt with \"8k!!!\" in the " << fixture << " fixture";
  return {};
}

TEST(ClipAddedTokens, TinySd2SplitsItsPadTokenLikeTransformers) {
  // The fixture itself shows the behaviour: "8k" then three separate "!" (id 0) before the end token.
  std::vector<int32_t> ids = exclamationPromptIds("sd2");
  const std::vector<int32_t> tail = {279, 330, 0, 0, 0, 49407};  // 8 k ! ! ! EOS
  EXPECT_NE(std::search(ids.begin(), ids.end(), tail.begin(), tail.end()), ids.end());
  expectFixtureIds("tiny-sd2", "sd2");
}

TEST(ClipAddedTokens, TinySd1KeepsExclamationMarksInTheBpe) {
  std::vector<int32_t> ids = exclamationPromptIds("sd1");
  const std::vector<int32_t> tail = {279, 330, 995, 49407};  // 8 k !!! EOS
  EXPECT_NE(std::search(ids.begin(), ids.end(), tail.begin(), tail.end()), ids.end());
  expectFixtureIds("tiny-sd1", "sd1");
}

// A copy of the shipped CLIP vocabulary plus the given config files.
std::string writeFolder(const TempDir& tmp, const std::string& name, const json& files) {
  const fs::path dir = fs::path(tmp.file(name));
  fs::create_directories(dir);
  for (const char* f : {"vocab.json", "merges.txt"}) fs::copy_file(sourcePath("models/vocab/clip/") + f, dir / f);
  for (const auto& [file, content] : files.items()) tmp.write(name + "/" + file, content.dump());
  return dir.string();
}

json addedToken(const std::string& content, bool special, bool lstrip = false, bool rstrip = false,
                bool singleWord = false) {
  return {{"content", content}, {"lstrip", lstrip},     {"rstrip", rstrip},
          {"single_word", singleWord}, {"normalized", !special}, {"special", special}};
}

struct Case {
  const char* text;
  std::vector<int32_t> ids;  // transformers 4.57.6 CLIPTokenizer (Python, no ftfy), with BOS/EOS, unpadded
};

void expectCases(const ClipTokenizerFolder& folder, const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    Encoding e = folder.tokenizer->encode(c.text);
    ASSERT_EQ(e.ids.size(), 77u);
    EXPECT_EQ(std::vector<int32_t>(e.ids.begin(), e.ids.begin() + static_cast<ptrdiff_t>(e.length)), c.ids)
        << json(c.text).dump();
    for (size_t i = e.length; i < e.ids.size(); ++i) ASSERT_EQ(e.ids[i], folder.padId) << json(c.text).dump();
  }
}

TEST(ClipAddedTokens, FlagsFollowTheTransformersPythonTokenizer) {
  TempDir tmp;
  json decoder = {{"0", addedToken("!", true)},
                  {"49406", addedToken("<|startoftext|>", true)},
                  {"49407", addedToken("<|endoftext|>", true)},
                  {"49408", addedToken("<cat-toy>", false)},
                  {"49409", addedToken("<cat-toy>-v2", false)},
                  {"49410", addedToken("Sks", false, false, false, true)},
                  {"49411", addedToken("<L>", false, true)},
                  {"49412", addedToken("<R>", false, false, true)},
                  {"49413", addedToken("<LSW>", false, true, false, true)},
                  {"49414", addedToken("<RSW>", false, false, true, true)},
                  {"49415", addedToken("two words", false)}};
  json config = {{"added_tokens_decoder", decoder}, {"bos_token", "<|startoftext|>"}, {"eos_token", "<|endoftext|>"},
                 {"pad_token", "!"}, {"unk_token", "<|endoftext|>"}, {"model_max_length", 77}};
  ClipTokenizerFolder folder =
      loadClipTokenizerFolder(writeFolder(tmp, "flags", {{"tokenizer_config.json", config}}), std::nullopt, 77);
  EXPECT_EQ(folder.padId, 0);
  EXPECT_EQ(folder.maxTokenId, 49415);
  expectCases(folder, {
      // Plain added tokens; the longest content wins; text around them is tokenized on its own.
      {"a <cat-toy> on a table", {49406, 320, 49408, 525, 320, 2175, 49407}},
      {"a <cat-toy>-v2, <cat-toy>s!!", {49406, 320, 49409, 267, 49408, 338, 0, 0, 49407}},
      {"<cat-toy><cat-toy>", {49406, 49408, 49408, 49407}},
      // Matched in the raw text: case-sensitive, before lower-casing and whitespace cleanup.
      {"a <CAT-TOY> on a table", {49406, 320, 283, 2368, 268, 5988, 285, 525, 320, 2175, 49407}},
      {"two words", {49406, 49415, 49407}},
      {"two  words", {49406, 1237, 2709, 49407}},
      {"Two words", {49406, 1237, 2709, 49407}},
      {"sks dog", {49406, 48136, 1929, 49407}},
      // single_word: alone between spaces, else glued onto its neighbour and tokenized with it.
      {"photo of Sks dog", {49406, 1125, 539, 49410, 1929, 49407}},
      {"Sks", {49406, 49410, 49407}},
      {"Sks Sks", {49406, 49410, 49410, 49407}},
      {"photo of Sksdog", {49406, 1125, 539, 909, 82, 1929, 49407}},
      {"photo ofSks dog", {49406, 1125, 684, 48136, 1929, 49407}},
      {"(Sks)", {49406, 263, 48136, 264, 49407}},
      {"x\tSks y", {49406, 343, 48136, 344, 49407}},
      {"SksSks", {49406, 909, 690, 662, 49407}},
      {"caf\xc3\xa9<cat-toy>Sks", {49406, 15304, 283, 2368, 268, 5988, 285, 48136, 49407}},
      // lstrip / rstrip strip the neighbour before single_word glues the token onto it.
      {"x <L>y", {49406, 343, 49411, 344, 49407}},
      {"x\t<L>y", {49406, 343, 49411, 344, 49407}},
      {"x\t<LSW> y", {49406, 343, 283, 75, 4457, 285, 344, 49407}},
      {"x <LSW>y", {49406, 343, 283, 75, 4457, 285, 344, 49407}},
      {"x <LSW> y", {49406, 343, 49413, 344, 49407}},
      {"a <R>  b", {49406, 320, 49412, 321, 49407}},
      {"a <RSW>  b", {49406, 320, 49414, 321, 49407}},
      {"a <RSW>\tb", {49406, 320, 283, 81, 4457, 285, 321, 49407}},
      // The pad token "!" and the begin/end tokens.
      {"!!!", {49406, 0, 0, 0, 49407}},
      {"8k!!!", {49406, 279, 330, 0, 0, 0, 49407}},
      {"wow!!! <|endoftext|> more", {49406, 2781, 0, 0, 0, 49407, 750, 49407}},
      {"<|ENDOFTEXT|>!", {49406, 49407, 0, 49407}},
      {"!<|startoftext|>!", {49406, 0, 49406, 0, 49407}},
      {"", {49406, 49407}},
      {"   ", {49406, 49407}},
  });
}

TEST(ClipAddedTokens, LegacyFilesAddTokensToo) {
  // Folders saved before transformers 4.34: no added_tokens_decoder; special_tokens_map.json names the pad token
  // (in the vocabulary, id 0) and an extra special token, added_tokens.json gives the new tokens' ids.
  TempDir tmp;
  json files = {{"special_tokens_map.json", {{"pad_token", "!"}, {"additional_special_tokens", {"<extra>"}}}},
                {"added_tokens.json", {{"<new>", 49408}, {"<extra>", 49409}}},
                {"tokenizer_config.json", {{"model_max_length", 77}}}};
  ClipTokenizerFolder folder = loadClipTokenizerFolder(writeFolder(tmp, "legacy", files), std::nullopt, 77);
  EXPECT_EQ(folder.padId, 0);
  EXPECT_EQ(folder.maxTokenId, 49409);
  expectCases(folder, {
      {"8k!!!", {49406, 279, 330, 0, 0, 0, 49407}},
      {"a <new> and <extra>!", {49406, 320, 49408, 537, 49409, 0, 49407}},
      {"a <NEW>", {49406, 320, 283, 686, 285, 49407}},
      {"<new><extra>", {49406, 49408, 49409, 49407}},
  });
}

TEST(ClipAddedTokens, PadTokenNamedOnlyInTheConfigIsSplitOut) {
  // stabilityai/stable-diffusion-2-1's tokenizer folder: vocab.json + merges.txt and pad_token "!" in both configs,
  // no list of added tokens; transformers still adds every special token, so "!" is id 0 on its own.
  TempDir tmp;
  json files = {{"special_tokens_map.json", {{"pad_token", "!"}}}, {"tokenizer_config.json", {{"pad_token", "!"}}}};
  ClipTokenizerFolder folder = loadClipTokenizerFolder(writeFolder(tmp, "sd21", files), std::nullopt, 77);
  EXPECT_EQ(folder.padId, 0);
  expectCases(folder, {{"8k!!!", {49406, 279, 330, 0, 0, 0, 49407}}});
  // Without a config naming it, "!!!" is one BPE token, as in SD 1.x.
  ClipTokenizerFolder plain = loadClipTokenizerFolder(writeFolder(tmp, "plain", json::object()), 0, 77);
  EXPECT_EQ(plain.padId, 0);
  expectCases(plain, {{"8k!!!", {49406, 279, 330, 995, 49407}}});
}

// "[x]" for an added token's id x, the text otherwise.
std::vector<std::string> render(const std::vector<PromptPiece>& pieces) {
  std::vector<std::string> out;
  for (const PromptPiece& p : pieces)
    out.push_back(p.addedId ? "[" + std::to_string(*p.addedId) + "]" : unicode::encodeUtf8(p.text));
  return out;
}

std::vector<std::string> splitWith(const std::vector<std::string>& contents, std::string_view text) {
  std::vector<AddedToken> tokens;
  for (size_t i = 0; i < contents.size(); ++i) tokens.push_back(AddedToken{.content = contents[i], .id = int32_t(i)});
  return render(AddedTokenSplitter(tokens).split(unicode::decodeUtf8(text)));
}

TEST(ClipAddedTokens, SplitterCutsLeftmostLongest) {
  // The cuts transformers' Trie.split makes for the same tokens and texts.
  using V = std::vector<std::string>;
  EXPECT_EQ(splitWith({"ab", "bc"}, "abcd"), (V{"[0]", "cd"}));
  EXPECT_EQ(splitWith({"ab", "bcd"}, "abcd"), (V{"[0]", "cd"}));
  EXPECT_EQ(splitWith({"a", "abc"}, "abd"), (V{"[0]", "bd"}));
  EXPECT_EQ(splitWith({"a", "abc"}, "abcabc"), (V{"[1]", "[1]"}));
  EXPECT_EQ(splitWith({"bc", "abcd"}, "xabcx"), (V{"xa", "[0]", "x"}));
  EXPECT_EQ(splitWith({"x", "yx"}, "yyx"), (V{"y", "[1]"}));
  EXPECT_EQ(splitWith({"\xc3\xa9t\xc3\xa9"}, "l'\xc3\xa9t\xc3\xa9!"), (V{"l'", "[0]", "!"}));
  EXPECT_TRUE(splitWith({"a"}, "").empty());
  EXPECT_EQ(splitWith({}, "abc"), (V{"abc"}));
  // Same content twice: the later entry is used, as a Python dict keeps the last value.
  EXPECT_EQ(splitWith({"a", "a"}, "a"), (V{"[1]"}));
}

TEST(ClipAddedTokens, ErrorsNameTheFileAndField) {
  TempDir tmp;
  // A special token that is in neither the vocabulary nor the added tokens.
  std::string dir = writeFolder(tmp, "mask", {{"tokenizer_config.json", {{"mask_token", "<mask>"}}}});
  std::string msg = errorOf([&] { loadClipTokenizerFolder(dir, std::nullopt, 77); });
  for (const std::string& part : {dir + "/tokenizer_config.json", std::string("mask_token"), std::string("<mask>")})
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
  // added_tokens_decoder entries: objects with string content under integer keys, boolean flags.
  const std::vector<std::pair<json, std::string>> badDecoders = {
      {{{"0", "!"}}, "added_tokens_decoder.\"0\""},
      {{{"zero", addedToken("!", true)}}, "\"zero\""},
      {{{"5", {{"content", "x"}, {"lstrip", "yes"}}}}, "lstrip"},
      {json::array(), "added_tokens_decoder"},
  };
  for (size_t i = 0; i < badDecoders.size(); ++i) {
    const auto& [decoder, detail] = badDecoders[i];
    std::string bad = writeFolder(tmp, "bad" + std::to_string(i),
                                  {{"tokenizer_config.json", {{"added_tokens_decoder", decoder}}}});
    msg = errorOf([&] { loadClipTokenizerFolder(bad, std::nullopt, 77); });
    EXPECT_NE(msg.find(bad + "/tokenizer_config.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find(detail), std::string::npos) << msg;
  }
  std::string badIds = writeFolder(tmp, "ids", {{"added_tokens.json", {{"<new>", "49408"}}}});
  msg = errorOf([&] { loadClipTokenizerFolder(badIds, std::nullopt, 77); });
  EXPECT_NE(msg.find(badIds + "/added_tokens.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("<new>"), std::string::npos) << msg;
}

}  // namespace
}  // namespace sdgen::models
