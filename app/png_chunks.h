#pragma once
// The PNG container (PNG spec, 3rd edition, section 5): signature, then chunks of length, type, data and CRC-32.
// Enough of it to add text chunks to an encoded image and to read them back, without decoding pixels.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sdgen::app {

inline constexpr uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};

struct PngChunk {
  std::string type;  // four letters, e.g. "IHDR"
  std::vector<uint8_t> data;
};

// A text chunk's content. `text` is UTF-8 whatever the chunk stored; `compressed` marks zTXt / compressed iTXt,
// whose text sdgen does not inflate (and leaves empty).
struct PngText {
  std::string keyword;
  std::string text;
  bool compressed = false;
};

// Appends one chunk (length, type, data, CRC over type and data).
void appendPngChunk(std::vector<uint8_t>& out, std::string_view type, std::span<const uint8_t> data);

// Splits a PNG into its chunks, checking the signature, that every chunk lies inside the buffer, every CRC, that
// IHDR comes first and IEND last with nothing after it. Throws sdgen::Error naming `source` and the chunk.
std::vector<PngChunk> parsePngChunks(std::span<const uint8_t> png, const std::string& source);

// The chunk that stores `keyword` = `utf8Text` the way PIL (and so stable-diffusion-webui) does: tEXt with
// Latin-1 text when every character is Latin-1, else uncompressed iTXt with UTF-8 text. Throws sdgen::Error for
// an invalid keyword (1-79 printable Latin-1 characters, no leading, trailing or double spaces) or a NUL in text.
PngChunk makePngTextChunk(const std::string& keyword, const std::string& utf8Text);

// The tEXt, iTXt and zTXt chunks among `chunks`, in file order. Throws sdgen::Error naming `source` for a
// malformed one.
std::vector<PngText> extractPngTexts(const std::vector<PngChunk>& chunks, const std::string& source);

}  // namespace sdgen::app
