// libFuzzer target: what sdgen reads of a PNG without decoding pixels: the chunk structure and text chunks
// (png_chunks.h, --show-params and webui's png-info), then the "parameters" text as png-info reads it
// (serve/infotext.h).
#include <cstdint>

#include "app/png_chunks.h"
#include "app/serve/infotext.h"
#include "app/serve/json_body.h"
#include "engine/error.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sdgen;
  try {
    const auto chunks = app::parsePngChunks({data, size}, "fuzz.png");
    for (const app::PngText& t : app::extractPngTexts(chunks, "fuzz.png"))
      if (t.keyword == "parameters") (void)serve::dumpJson(serve::parseInfotext(t.text));
  } catch (const Error&) {
  }
  // The infotext parser on the raw bytes too: png-info accepts whatever text a PNG carries.
  (void)serve::dumpJson(serve::parseInfotext(fuzz::asText(data, size)));
  return 0;
}
