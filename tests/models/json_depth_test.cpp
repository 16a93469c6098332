// Finding 1 of issue 24 (docs/reliability.md): every JSON file sdgen reads is refused with a message naming it
// when it nests deeper than 64 levels. Before, a deeply nested value in a config, a vocabulary or a safetensors
// header was quoted in the error message through nlohmann's recursive dump() (or walked recursively), and a file
// of a few hundred KB of "[[[[" overflowed the stack instead of giving an error.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "models/config/config_files.h"
#include "models/json_bounds.h"
#include "models/lora/lora_file.h"
#include "models/safetensors.h"
#include "models/tokenizer/vocab_files.h"
#include "tests/models/models_test_util.h"

namespace sdgen::models {
namespace {

constexpr int kDeep = 300000;  // ~600 KB of brackets: far past any stack when walked recursively

std::string nested(int depth) { return std::string(size_t(depth), '[') + std::string(size_t(depth), ']'); }

std::string safetensorsWithHeader(std::string header) {
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char((uint64_t(header.size()) >> (8 * i)) & 0xff);
  return out + header;
}

TEST(JsonDepth, TheBoundItself) {
  EXPECT_NO_THROW(parseJsonBounded(nested(kMaxJsonFileDepth), "x"));
  const std::string msg = test::errorOf([] { parseJsonBounded(nested(kMaxJsonFileDepth + 1), "'f.json'"); });
  EXPECT_EQ(msg, "'f.json' nests JSON deeper than 64 levels");
  // Invalid JSON is still nlohmann's parse_error, which each caller words with its file name.
  EXPECT_THROW(parseJsonBounded("{", "x"), nlohmann::json::parse_error);
}

TEST(JsonDepth, ModelConfigs) {
  test::TempDir dir;
  const std::string unet = dir.write("config.json", "{\"layers_per_block\": " + nested(kDeep) + "}");
  EXPECT_NE(test::errorOf([&] { loadUNetConfig(unet); }).find("'" + unet + "' nests JSON deeper than 64 levels"),
            std::string::npos);
  EXPECT_NE(test::errorOf([&] { parseModelIndex("{\"unet\": " + nested(kDeep) + "}", "model_index.json"); })
                .find("'model_index.json' nests JSON deeper"),
            std::string::npos);
}

TEST(JsonDepth, Vocabularies) {
  test::TempDir dir;
  const std::string vocab = dir.write("vocab.json", "{\"a\": " + nested(kDeep) + "}");
  const std::string merges = dir.write("merges.txt", "#version: 0.2\n");
  EXPECT_NE(test::errorOf([&] { loadVocabAndMerges(vocab, merges, 10); }).find("nests JSON deeper than 64 levels"),
            std::string::npos);
  const std::string tok = dir.write("tokenizer.json", "{\"model\": {\"vocab\": " + nested(kDeep) + "}}");
  EXPECT_NE(test::errorOf([&] { loadTokenizerJson(tok); }).find("'" + tok + "' nests JSON deeper"), std::string::npos);
}

// Finding 3 (docs/reliability.md): a number beyond double's range is nlohmann's out_of_range, not a parse_error;
// the vocabulary reader let it escape as an unexpected exception instead of naming the file.
TEST(JsonDepth, NumberOverflowInAVocabularyNamesTheFile) {
  test::TempDir dir;
  const std::string vocab = dir.write("vocab.json", "{\"a\": 1e400}");
  const std::string merges = dir.write("merges.txt", "#version: 0.2\n");
  const std::string msg = test::errorOf([&] { loadVocabAndMerges(vocab, merges, 10); });
  EXPECT_NE(msg.find("'" + vocab + "' is not valid JSON"), std::string::npos) << msg;
  EXPECT_NE(msg.find("number overflow"), std::string::npos) << msg;
}

TEST(JsonDepth, SafetensorsHeaderAndLoraMetadata) {
  test::TempDir dir;
  const std::string st =
      dir.write("deep.safetensors", safetensorsWithHeader("{\"a\": {\"dtype\": " + nested(kDeep) + "}}"));
  EXPECT_NE(test::errorOf([&] { SafetensorsFile::open(st); }).find("the header of '" + st + "' nests JSON deeper"),
            std::string::npos);
  // A PEFT LoRA's lora_adapter_metadata is JSON inside a metadata string.
  const std::string meta = "\"" + nested(200) + "\"";
  const std::string pair =
      "\"unet.down_blocks.0.attentions.0.proj_in.lora_A.weight\": {\"dtype\": \"F32\", \"shape\": [2, 32], "
      "\"data_offsets\": [0, 256]}, \"unet.down_blocks.0.attentions.0.proj_in.lora_B.weight\": {\"dtype\": "
      "\"F32\", \"shape\": [32, 2], \"data_offsets\": [256, 512]}";
  const std::string lora = dir.write(
      "lora.safetensors",
      safetensorsWithHeader("{\"__metadata__\": {\"lora_adapter_metadata\": " + meta + "}, " + pair + "}") +
          std::string(512, '\0'));
  const std::string msg = test::errorOf([&] { lora::readLoraFile(lora); });
  EXPECT_NE(msg.find("LoRA '" + lora + "': lora_adapter_metadata nests JSON deeper than 64 levels"), std::string::npos)
      << msg;
}

}  // namespace
}  // namespace sdgen::models
