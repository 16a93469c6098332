// libFuzzer target: a tokenizer folder. The input is split at "\n=====\n" into up to five files: vocab.json,
// merges.txt, tokenizer.json, tokenizer_config.json, special_tokens_map.json (an empty part leaves the file out);
// the folder is loaded as openModel loads it and a few prompts are encoded with the result.
#include <array>
#include <cstdint>
#include <string>

#include "engine/error.h"
#include "fuzz/fuzz_support.h"
#include "models/formats/tokenizer_folder.h"

namespace {
const sdgen::fuzz::ScratchDir& scratch() {
  static const sdgen::fuzz::ScratchDir dir;
  return dir;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sdgen;
  static const std::array<const char*, 5> kFiles = {"vocab.json", "merges.txt", "tokenizer.json",
                                                    "tokenizer_config.json", "special_tokens_map.json"};
  const auto parts = fuzz::splitInput(fuzz::asText(data, size), "\n=====\n");
  scratch().clear();
  for (size_t i = 0; i < parts.size() && i < kFiles.size(); ++i)
    if (!parts[i].empty()) scratch().write(kFiles[i], parts[i]);
  try {
    models::ClipTokenizerFolder folder = models::loadClipTokenizerFolder(scratch().path(), std::nullopt, 77);
    for (const char* prompt : {"a photo of a cat", "<|startoftext|>!! hello,world 123 </w>", "\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80"}) {
      auto encoding = folder.tokenizer->encode(prompt);
      for (int32_t id : encoding.ids)
        if (id < 0 || id > folder.maxTokenId) __builtin_trap();  // an id outside the embedding table
    }
  } catch (const Error&) {
  }
  return 0;
}
