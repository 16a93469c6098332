#include "app/image_decode.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "app/png_chunks.h"
#include "engine/error.h"

// stb_image's implementation, static and limited to the two formats sdgen accepts (less code facing hostile
// files). The GUI's screenshot test has its own copy; static keeps them apart.
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#define STBI_MAX_DIMENSIONS 8192
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#include <stb/stb_image.h>
#pragma GCC diagnostic pop

namespace sdgen::app {

namespace {

struct Header {
  int width = 0, height = 0;
};

uint32_t be32(const uint8_t* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }
uint32_t be16(const uint8_t* p) { return uint32_t(p[0]) << 8 | p[1]; }

void checkSize(int64_t width, int64_t height, const std::string& source) {
  if (width < 1 || height < 1 || width > ImageLimits::kMaxSide || height > ImageLimits::kMaxSide)
    throw Error("'" + source + "' is " + std::to_string(width) + "x" + std::to_string(height) +
                " pixels; sdgen reads images of 1 to " + std::to_string(ImageLimits::kMaxSide) + " pixels a side");
}

Header checkPng(std::span<const uint8_t> bytes, const std::string& source) {
  const std::vector<PngChunk> chunks = parsePngChunks(bytes, source);  // signature, bounds, CRCs, IHDR..IEND
  const PngChunk& ihdr = chunks.front();
  if (ihdr.data.size() != 13) throw Error("'" + source + "': the IHDR chunk is not 13 bytes long");
  const uint8_t* d = ihdr.data.data();
  const int64_t width = be32(d), height = be32(d + 4);
  const int depth = d[8], colorType = d[9];
  if (colorType == 4 || colorType == 6)
    throw Error("'" + source + "' has an alpha channel (PNG colour type " + std::to_string(colorType) +
                "); sdgen reads RGB or greyscale images: save it without alpha");
  if (colorType != 0 && colorType != 2 && colorType != 3)
    throw Error("'" + source + "': invalid PNG colour type " + std::to_string(colorType));
  if (depth == 16)
    throw Error("'" + source + "' is a 16-bit PNG; sdgen reads 8-bit images: save it with 8 bits per channel");
  const bool depthOk = colorType == 2 ? depth == 8 : (depth == 1 || depth == 2 || depth == 4 || depth == 8);
  if (!depthOk)
    throw Error("'" + source + "': invalid PNG bit depth " + std::to_string(depth) + " for colour type " +
                std::to_string(colorType));
  if (d[10] != 0 || d[11] != 0 || d[12] > 1)
    throw Error("'" + source + "': invalid PNG compression, filter or interlace method in IHDR");
  checkSize(width, height, source);
  bool data = false;
  for (const PngChunk& c : chunks) {
    if (c.type == "tRNS")
      throw Error("'" + source + "' has transparency (a tRNS chunk); sdgen reads images without alpha");
    if (c.type == "IDAT") data = true;
  }
  if (!data) throw Error("'" + source + "' has no image data (no IDAT chunk)");
  return {int(width), int(height)};
}

// A DHT segment's Huffman tables (ITU T.81 B.2.4.2): each is Tc/Th, 16 code counts and as many symbol bytes as their
// sum, back to back, filling the segment exactly. Debian 12's stb_image trusts the counts: a table of more than 256
// codes overflows its Huffman arrays (found by fuzz_image_decode, session 13; stb fixed it upstream later), and
// counts whose symbols run past the segment make it read the next segment as symbols.
void checkHuffmanTables(const uint8_t* p, size_t length, const std::string& source) {
  size_t at = 0;
  while (at < length) {
    if (length - at < 17) throw Error("'" + source + "': corrupt JPEG (a Huffman table header is cut short)");
    const int tableClass = p[at] >> 4, id = p[at] & 15;
    if (tableClass > 1 || id > 3)
      throw Error("'" + source + "': corrupt JPEG (Huffman table class " + std::to_string(tableClass) + ", id " +
                  std::to_string(id) + "; at most 1 and 3)");
    size_t codes = 0;
    for (int i = 1; i <= 16; ++i) codes += p[at + i];
    if (codes > 256)
      throw Error("'" + source + "': corrupt JPEG (a Huffman table of " + std::to_string(codes) +
                  " codes; at most 256)");
    if (length - at - 17 < codes)
      throw Error("'" + source + "': corrupt JPEG (a Huffman table's symbols run past its segment)");
    at += 17 + codes;
  }
}

// Walks the JPEG's marker segments (ITU T.81 annex B): SOI, segments with lengths, entropy-coded data after each
// SOS up to the next marker, until EOI. The frame header gives the size and must be baseline or progressive
// Huffman, 8-bit, 1 or 3 components.
Header checkJpeg(std::span<const uint8_t> b, const std::string& source) {
  const size_t n = b.size();
  auto truncated = [&] { return Error("'" + source + "' is truncated (the JPEG ends before its end-of-image marker)"); };
  Header h;
  bool frame = false, scan = false;
  size_t i = 2;  // after SOI
  while (true) {
    if (i + 2 > n) throw truncated();
    if (b[i] != 0xFF) throw Error("'" + source + "': corrupt JPEG (no marker at byte " + std::to_string(i) + ")");
    const uint8_t marker = b[i + 1];
    if (marker == 0xFF) {  // fill byte
      ++i;
      continue;
    }
    i += 2;
    if (marker == 0xD9) break;  // EOI
    if (marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7) || marker == 0x01)
      continue;  // markers without a length (a stray SOI or RST, TEM)
    if (i + 2 > n) throw truncated();
    const size_t length = be16(&b[i]);
    if (length < 2) throw Error("'" + source + "': corrupt JPEG (segment length " + std::to_string(length) + ")");
    if (i + length > n) throw truncated();
    const uint8_t* seg = &b[i + 2];
    if (marker == 0xC4) checkHuffmanTables(seg, length - 2, source);
    if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
      if (marker != 0xC0 && marker != 0xC1 && marker != 0xC2)
        throw Error("'" + source + "' uses a JPEG coding sdgen does not read (SOF" + std::to_string(marker - 0xC0) +
                    "; baseline and progressive Huffman JPEGs are read)");
      if (frame) throw Error("'" + source + "': corrupt JPEG (two frame headers)");
      if (length < 8) throw Error("'" + source + "': corrupt JPEG (short frame header)");
      if (seg[0] != 8)
        throw Error("'" + source + "' is a " + std::to_string(seg[0]) + "-bit JPEG; sdgen reads 8-bit images");
      h.height = int(be16(seg + 1));
      h.width = int(be16(seg + 3));
      const int components = seg[5];
      if (components != 1 && components != 3)
        throw Error("'" + source + "' has " + std::to_string(components) +
                    " colour components (CMYK?); sdgen reads greyscale or RGB JPEGs");
      checkSize(h.width, h.height, source);
      frame = true;
    }
    i += length;
    if (marker == 0xDA) {  // SOS: entropy-coded data up to the next marker that is not a stuffed 0 or a restart
      if (!frame) throw Error("'" + source + "': corrupt JPEG (scan before the frame header)");
      scan = true;
      while (true) {
        if (i + 1 >= n) throw truncated();
        if (b[i] == 0xFF && b[i + 1] != 0x00 && !(b[i + 1] >= 0xD0 && b[i + 1] <= 0xD7) && b[i + 1] != 0xFF) break;
        ++i;
      }
    }
  }
  if (!frame || !scan) throw Error("'" + source + "': corrupt JPEG (no frame or no scan before the end marker)");
  return h;
}

}  // namespace

pipeline::RgbImage decodeImage(std::span<const uint8_t> bytes, const std::string& source, int64_t maxPixels) {
  if (bytes.size() > ImageLimits::kMaxFileBytes)
    throw Error("'" + source + "' is " + std::to_string(bytes.size()) + " bytes; sdgen reads images of at most " +
                std::to_string(ImageLimits::kMaxFileBytes) + " bytes");
  Header h;
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), kPngSignature, 8) == 0)
    h = checkPng(bytes, source);
  else if (bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF)
    h = checkJpeg(bytes, source);
  else
    throw Error("'" + source + "' is not a PNG or JPEG image" + (bytes.empty() ? " (it is empty)" : ""));
  if (int64_t(h.width) * h.height > maxPixels)
    throw Error("'" + source + "' is " + std::to_string(h.width) + "x" + std::to_string(h.height) + " = " +
                std::to_string(int64_t(h.width) * h.height) + " pixels; at most " + std::to_string(maxPixels) +
                " are read here");
  int w = 0, hh = 0, channels = 0;
  stbi_uc* pixels = stbi_load_from_memory(bytes.data(), int(bytes.size()), &w, &hh, &channels, 3);
  if (!pixels) throw Error("cannot decode '" + source + "': " + std::string(stbi_failure_reason()));
  std::unique_ptr<stbi_uc, void (*)(void*)> owner(pixels, stbi_image_free);
  if (w != h.width || hh != h.height)
    throw Error("cannot decode '" + source + "': the decoder found " + std::to_string(w) + "x" +
                std::to_string(hh) + " pixels, the header says " + std::to_string(h.width) + "x" +
                std::to_string(h.height));
  pipeline::RgbImage image;
  image.width = w;
  image.height = hh;
  image.rgb.assign(pixels, pixels + size_t(w) * size_t(hh) * 3);
  return image;
}

pipeline::RgbImage readImageFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error("cannot read '" + path + "': it is a directory");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw Error("cannot open '" + path + "': " + ec.message());
  if (size > ImageLimits::kMaxFileBytes)
    throw Error("'" + path + "' is " + std::to_string(size) + " bytes; sdgen reads images of at most " +
                std::to_string(ImageLimits::kMaxFileBytes) + " bytes");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open '" + path + "': " + std::strerror(errno));
  std::vector<uint8_t> bytes(size);
  in.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(size));
  if (!in || in.gcount() != std::streamsize(size)) throw Error("cannot read '" + path + "'");
  return decodeImage(bytes, path);
}

}  // namespace sdgen::app
