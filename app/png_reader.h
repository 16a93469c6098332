#pragma once
// Reading the text chunks (generation parameters) of a PNG file without decoding its pixels.
#include <cstdint>
#include <string>
#include <vector>

#include "app/png_chunks.h"

namespace sdgen::app {

// The whole file; throws sdgen::Error naming `path` when it cannot be read.
std::vector<uint8_t> readFileBytes(const std::string& path);

// The tEXt / iTXt / zTXt chunks of the PNG at `path`, in file order, after validating the whole chunk structure
// (signature, CRCs, IHDR first, IEND last). Throws sdgen::Error naming the file.
std::vector<PngText> readPngTexts(const std::string& path);

}  // namespace sdgen::app
