#pragma once
// PNG output: 8-bit RGB pixels (adaptive row filters, zlib deflate), text chunks (the generation parameters)
// right after IHDR, written atomically.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "app/png_chunks.h"

namespace sdgen::app {

// `rgb` holds width * height * 3 bytes, row-major, top row first. Throws sdgen::Error on bad sizes. Bands of 64
// rows are filtered and deflated on `threads` threads (0: the machine's cores, at most 8); the bytes written do
// not depend on the thread count.
std::vector<uint8_t> encodePng(int width, int height, std::span<const uint8_t> rgb, const std::vector<PngText>& texts,
                               unsigned threads = 0);

// encodePng, then writeFileAtomically: on failure nothing is left at `path` (an existing file stays as it was).
void writePngFile(const std::string& path, int width, int height, std::span<const uint8_t> rgb,
                  const std::vector<PngText>& texts);

}  // namespace sdgen::app
