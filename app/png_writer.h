#pragma once
// PNG output: 8-bit RGB pixels (adaptive row filters, zlib deflate), text chunks (the generation parameters)
// right after IHDR, written atomically.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "app/png_chunks.h"

namespace sdgen::app {

// `rgb` holds width * height * 3 bytes, row-major, top row first. Throws sdgen::Error on bad sizes.
std::vector<uint8_t> encodePng(int width, int height, std::span<const uint8_t> rgb, const std::vector<PngText>& texts);

// encodePng, then writeFileAtomically: on failure nothing is left at `path` (an existing file stays as it was).
void writePngFile(const std::string& path, int width, int height, std::span<const uint8_t> rgb,
                  const std::vector<PngText>& texts);

}  // namespace sdgen::app
