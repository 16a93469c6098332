#include "app/png_writer.h"

#include "app/atomic_file.h"
#include "engine/error.h"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>

namespace sdgen::app {

namespace {

// Filter type per row (PNG spec 9.2), chosen by the usual minimum-sum-of-absolute-differences heuristic over
// None, Sub, Up and Paeth (the filter bytes read as signed): what libpng does by default, a few ms at 512^2.
uint8_t paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return uint8_t(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

// Appends the filter byte and the filtered row; `trial` is scratch of 4 rows of n bytes.
void filterRow(const uint8_t* row, const uint8_t* prev, size_t n, std::vector<uint8_t>& trial,
               std::vector<uint8_t>& out) {
  constexpr size_t bpp = 3;
  long cost[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < n; ++i) {
    const int a = i >= bpp ? row[i - bpp] : 0, b = prev ? prev[i] : 0, c = prev && i >= bpp ? prev[i - bpp] : 0;
    const uint8_t v[4] = {row[i], uint8_t(row[i] - a), uint8_t(row[i] - b), uint8_t(row[i] - paeth(a, b, c))};
    for (int f = 0; f < 4; ++f) {
      trial[f * n + i] = v[f];
      cost[f] += std::abs(int(int8_t(v[f])));
    }
  }
  const int f = int(std::min_element(cost, cost + 4) - cost);
  out.push_back(uint8_t(f == 3 ? 4 : f));  // filter codes: 0 None, 1 Sub, 2 Up, 4 Paeth
  out.insert(out.end(), trial.begin() + long(f * n), trial.begin() + long((f + 1) * n));
}

void appendBigEndian32(std::vector<uint8_t>& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(uint8_t(v >> s));
}

}  // namespace

std::vector<uint8_t> encodePng(int width, int height, std::span<const uint8_t> rgb, const std::vector<PngText>& texts) {
  if (width <= 0 || height <= 0 || width > (1 << 16) || height > (1 << 16))
    throw Error("cannot encode a " + std::to_string(width) + "x" + std::to_string(height) + " image as PNG");
  const size_t expected = size_t(width) * size_t(height) * 3;
  if (rgb.size() != expected)
    throw Error("PNG encoder got " + std::to_string(rgb.size()) + " bytes for a " + std::to_string(width) + "x" +
                std::to_string(height) + " RGB image (expected " + std::to_string(expected) + ")");

  // Text chunks first: a bad keyword or text fails before any encoding work.
  std::vector<PngChunk> textChunks;
  for (const auto& t : texts) textChunks.push_back(makePngTextChunk(t.keyword, t.text));

  const size_t stride = size_t(width) * 3;
  std::vector<uint8_t> filtered, trial(4 * stride);
  filtered.reserve((stride + 1) * size_t(height));
  for (int y = 0; y < height; ++y)
    filterRow(rgb.data() + y * stride, y ? rgb.data() + (y - 1) * stride : nullptr, stride, trial, filtered);
  // zlib level 1: 4 % larger than level 3 and 6 % larger than level 6 on a smooth 512^2 image, in half and a
  // quarter of their time (stb_image_write took 3x as long as this).
  uLongf packedSize = compressBound(uLong(filtered.size()));
  std::vector<uint8_t> packed(packedSize);
  if (compress2(packed.data(), &packedSize, filtered.data(), uLong(filtered.size()), 1) != Z_OK)
    throw Error("zlib failed to compress a " + std::to_string(width) + "x" + std::to_string(height) + " PNG");
  packed.resize(packedSize);

  std::vector<uint8_t> png(std::begin(kPngSignature), std::end(kPngSignature));
  std::vector<uint8_t> ihdr;
  appendBigEndian32(ihdr, uint32_t(width));
  appendBigEndian32(ihdr, uint32_t(height));
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});  // 8-bit, truecolour RGB, deflate, adaptive filtering, no interlace
  appendPngChunk(png, "IHDR", ihdr);
  for (const PngChunk& c : textChunks) appendPngChunk(png, c.type, c.data);
  appendPngChunk(png, "IDAT", packed);
  appendPngChunk(png, "IEND", {});
  parsePngChunks(png, "the PNG encoder's output");  // the chunk layout checked, not trusted
  return png;
}

void writePngFile(const std::string& path, int width, int height, std::span<const uint8_t> rgb,
                  const std::vector<PngText>& texts) {
  writeFileAtomically(path, encodePng(width, height, rgb, texts));
}

}  // namespace sdgen::app
