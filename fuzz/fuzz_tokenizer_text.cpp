// libFuzzer target: the CLIP tokenizer sdgen ships (models/vocab/clip) on arbitrary bytes, invalid UTF-8
// included: encode() and contentIds() must return ids of the vocabulary, exactly maxLength of them from encode().
#include <cstdint>
#include <string_view>

#include "engine/error.h"
#include "fuzz/fuzz_support.h"
#include "models/resources.h"
#include "models/tokenizer/clip_tokenizer.h"

namespace {
// Loaded once, in LLVMFuzzerInitialize, so that the load does not count against the first input's time limit.
const sdgen::models::ClipBpeTokenizer& clipTokenizer() {
  static const auto t = sdgen::models::ClipBpeTokenizer::fromDirectory(sdgen::models::resourcePath("models/vocab/clip"));
  return t;
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)clipTokenizer();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sdgen;
  const models::ClipBpeTokenizer& tokenizer = clipTokenizer();
  const std::string_view text = fuzz::asText(data, size);
  try {
    const models::Encoding e = tokenizer.encode(text);
    if (e.ids.size() != tokenizer.maxLength() || e.length > e.ids.size()) __builtin_trap();
    for (int32_t id : e.ids)
      if (id < 0 || id > 49407) __builtin_trap();
    for (int32_t id : tokenizer.contentIds(text))
      if (id < 0 || id > 49407) __builtin_trap();
  } catch (const Error&) {
  }
  return 0;
}
