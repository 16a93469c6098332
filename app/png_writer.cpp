#include "app/png_writer.h"

#include "app/atomic_file.h"
#include "engine/error.h"

// The one translation unit with stb_image_write's implementation; static so that no other part of the program
// (the GUI, say) can clash with it.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#define STBI_WRITE_NO_STDIO
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

namespace sdgen::app {

namespace {

void appendToVector(void* context, void* data, int size) {
  auto* out = static_cast<std::vector<uint8_t>*>(context);
  auto* bytes = static_cast<const uint8_t*>(data);
  out->insert(out->end(), bytes, bytes + size);
}

}  // namespace

std::vector<uint8_t> encodePng(int width, int height, std::span<const uint8_t> rgb, const std::vector<PngText>& texts) {
  if (width <= 0 || height <= 0 || width > (1 << 16) || height > (1 << 16))
    throw Error("cannot encode a " + std::to_string(width) + "x" + std::to_string(height) + " image as PNG");
  const size_t expected = size_t(width) * size_t(height) * 3;
  if (rgb.size() != expected)
    throw Error("PNG encoder got " + std::to_string(rgb.size()) + " bytes for a " + std::to_string(width) + "x" +
                std::to_string(height) + " RGB image (expected " + std::to_string(expected) + ")");

  // Build the text chunks first: a bad keyword or text fails before any encoding work.
  std::vector<uint8_t> textChunks;
  for (const auto& t : texts) {
    PngChunk chunk = makePngTextChunk(t.keyword, t.text);
    appendPngChunk(textChunks, chunk.type, chunk.data);
  }

  std::vector<uint8_t> encoded;
  if (!stbi_write_png_to_func(appendToVector, &encoded, width, height, 3, rgb.data(), width * 3))
    throw Error("stb_image_write failed to encode a " + std::to_string(width) + "x" + std::to_string(height) +
                " PNG");
  // stb writes the signature and then IHDR (8 + 4 + 4 + 13 + 4 bytes); the text goes right after it. Parsing
  // the result checks that assumption rather than trusting it.
  parsePngChunks(encoded, "stb_image_write output");
  constexpr size_t kAfterIhdr = sizeof kPngSignature + 12 + 13;
  encoded.insert(encoded.begin() + kAfterIhdr, textChunks.begin(), textChunks.end());
  return encoded;
}

void writePngFile(const std::string& path, int width, int height, std::span<const uint8_t> rgb,
                  const std::vector<PngText>& texts) {
  writeFileAtomically(path, encodePng(width, height, rgb, texts));
}

}  // namespace sdgen::app
