// The input image reader (app/image_decode.h): what it accepts decodes to the exact pixels, everything else is an
// error naming the file. PNGs are built here byte by byte (stored deflate blocks), so every IHDR field and chunk
// can be chosen; JPEGs come from stb_image_write.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "app/image_decode.h"
#include "app/png_chunks.h"
#include "engine/error.h"

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

void put32(std::vector<uint8_t>& v, uint32_t x) {
  for (int s = 24; s >= 0; s -= 8) v.push_back(uint8_t(x >> s));
}

// zlib stream of stored (uncompressed) deflate blocks.
std::vector<uint8_t> zlibStored(const std::vector<uint8_t>& raw) {
  std::vector<uint8_t> z = {0x78, 0x01};
  size_t pos = 0;
  do {
    const size_t n = std::min<size_t>(65535, raw.size() - pos);
    z.push_back(pos + n == raw.size() ? 1 : 0);
    z.push_back(uint8_t(n & 0xff));
    z.push_back(uint8_t(n >> 8));
    z.push_back(uint8_t(~n & 0xff));
    z.push_back(uint8_t((~n >> 8) & 0xff));
    z.insert(z.end(), raw.begin() + pos, raw.begin() + pos + n);
    pos += n;
  } while (pos < raw.size());
  uint32_t a = 1, b = 0;
  for (uint8_t c : raw) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  put32(z, b << 16 | a);
  return z;
}

// A PNG of `channels` samples per pixel of `depth` bits (8 or 16) from `samples` (row-major, one value each).
std::vector<uint8_t> makePng(int w, int h, int colorType, int depth, const std::vector<uint16_t>& samples,
                             int channels, const std::vector<PngChunk>& extra = {}) {
  std::vector<uint8_t> png(kPngSignature, kPngSignature + 8), ihdr;
  put32(ihdr, uint32_t(w));
  put32(ihdr, uint32_t(h));
  ihdr.insert(ihdr.end(), {uint8_t(depth), uint8_t(colorType), 0, 0, 0});
  appendPngChunk(png, "IHDR", ihdr);
  for (const PngChunk& c : extra) appendPngChunk(png, c.type, c.data);
  std::vector<uint8_t> raw;
  for (int y = 0; y < h; ++y) {
    raw.push_back(0);  // filter: none
    for (int i = 0; i < w * channels; ++i) {
      const uint16_t v = samples[size_t(y) * w * channels + i];
      if (depth == 16) raw.push_back(uint8_t(v >> 8));
      raw.push_back(uint8_t(v & 0xff));
    }
  }
  appendPngChunk(png, "IDAT", zlibStored(raw));
  appendPngChunk(png, "IEND", {});
  return png;
}

std::vector<uint16_t> ramp(size_t n) {
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint16_t((i * 37) % 256);
  return v;
}

std::string errorOf(const std::vector<uint8_t>& bytes, const std::string& source = "in.png") {
  try {
    decodeImage(bytes, source);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ImageDecode, RgbAndGreyPngsDecodeToTheirPixels) {
  const auto rgb = ramp(5 * 3 * 3);
  pipeline::RgbImage img = decodeImage(makePng(5, 3, 2, 8, rgb, 3), "rgb.png");
  EXPECT_EQ(img.width, 5);
  EXPECT_EQ(img.height, 3);
  EXPECT_EQ(img.rgb, std::vector<uint8_t>(rgb.begin(), rgb.end()));

  const auto grey = ramp(4 * 2);
  img = decodeImage(makePng(4, 2, 0, 8, grey, 1), "grey.png");
  ASSERT_EQ(img.rgb.size(), 4u * 2 * 3);
  for (size_t i = 0; i < grey.size(); ++i)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(img.rgb[3 * i + c], grey[i]);
}

TEST(ImageDecode, AlphaSixteenBitAndTransparencyAreRefusedByName) {
  EXPECT_NE(errorOf(makePng(2, 2, 6, 8, ramp(16), 4), "rgba.png").find("'rgba.png' has an alpha channel"),
            std::string::npos);
  EXPECT_NE(errorOf(makePng(2, 2, 4, 8, ramp(8), 2)).find("has an alpha channel (PNG colour type 4)"),
            std::string::npos);
  EXPECT_NE(errorOf(makePng(2, 2, 2, 16, ramp(12), 3), "deep.png").find("'deep.png' is a 16-bit PNG"),
            std::string::npos);
  EXPECT_NE(errorOf(makePng(2, 2, 0, 16, ramp(4), 1)).find("16-bit"), std::string::npos);
  const PngChunk trns{"tRNS", {0, 0, 0, 0, 0, 0}};
  EXPECT_NE(errorOf(makePng(2, 2, 2, 8, ramp(12), 3, {trns})).find("has transparency"), std::string::npos);
}

TEST(ImageDecode, TruncatedNotAnImageAndTooLargeAreRefused) {
  std::vector<uint8_t> png = makePng(8, 8, 2, 8, ramp(8 * 8 * 3), 3);
  png.resize(png.size() - 30);  // cut inside IDAT
  const std::string cut = errorOf(png, "cut.png");
  EXPECT_NE(cut.find("cut.png"), std::string::npos) << cut;
  EXPECT_FALSE(cut.empty());

  const std::string gif = "GIF89a\x01\x00\x01\x00";
  EXPECT_NE(errorOf({gif.begin(), gif.end()}, "x.gif").find("'x.gif' is not a PNG or JPEG image"),
            std::string::npos);
  EXPECT_NE(errorOf({}, "empty.png").find("(it is empty)"), std::string::npos);

  // only the header says 9000 pixels: refused before any decoding
  std::vector<uint8_t> big(kPngSignature, kPngSignature + 8), ihdr;
  put32(ihdr, 9000);
  put32(ihdr, 16);
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});
  appendPngChunk(big, "IHDR", ihdr);
  appendPngChunk(big, "IDAT", zlibStored({0}));
  appendPngChunk(big, "IEND", {});
  EXPECT_NE(errorOf(big, "big.png").find("'big.png' is 9000x16 pixels; sdgen reads images of 1 to 8192"),
            std::string::npos);
}

std::vector<uint8_t> makeJpeg(int w, int h, int comp) {
  std::vector<uint8_t> out;
  std::vector<uint8_t> pixels(size_t(w) * h * comp);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = uint8_t((i * 7) % 256);
  stbi_write_jpg_to_func(
      [](void* ctx, void* data, int size) {
        auto* v = static_cast<std::vector<uint8_t>*>(ctx);
        v->insert(v->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
      },
      &out, w, h, comp, pixels.data(), 95);
  return out;
}

TEST(ImageDecode, JpegsDecodeAndTruncatedOnesAreRefused) {
  const std::vector<uint8_t> jpeg = makeJpeg(24, 16, 3);
  pipeline::RgbImage img = decodeImage(jpeg, "in.jpg");
  EXPECT_EQ(img.width, 24);
  EXPECT_EQ(img.height, 16);
  EXPECT_EQ(img.rgb.size(), 24u * 16 * 3);
  EXPECT_EQ(decodeImage(makeJpeg(8, 8, 1), "grey.jpg").rgb.size(), 8u * 8 * 3);

  std::vector<uint8_t> cut(jpeg.begin(), jpeg.begin() + long(jpeg.size() / 2));
  EXPECT_NE(errorOf(cut, "cut.jpg").find("'cut.jpg' is truncated"), std::string::npos) << errorOf(cut, "cut.jpg");
  std::vector<uint8_t> noEnd(jpeg.begin(), jpeg.end() - 2);  // all but the EOI marker
  EXPECT_NE(errorOf(noEnd, "noend.jpg").find("truncated"), std::string::npos);
}

TEST(ImageDecode, HuffmanTablesThatOverflowTheDecoderAreRefused) {
  // fuzz_image_decode's finding (session 13): a DHT segment whose 16 code counts add up to more than 256 overflowed
  // stb_image's Huffman arrays (UBSan: index out of bounds in stbi__build_huffman). Refused before stb sees it.
  const std::vector<uint8_t> crash = {
      0xff, 0xd8, 0xff, 0xc4, 0x00, 0x12, 0x10, 0x01, 0x00, 0x3c, 0xff, 0xff, 0x01, 0xff, 0xff, 0xff, 0xff, 0xd7,
      0x09, 0xff, 0xff, 0xc4, 0xff, 0xd8, 0xff, 0xc0, 0x00, 0x0f, 0x08, 0x00, 0x2e, 0x08, 0xc3, 0x01, 0x02, 0x00,
      0xff, 0x00, 0x00, 0xf9, 0xff, 0xff, 0xda, 0x00, 0x0e, 0xda, 0xc0, 0x00, 0x0f, 0xc3, 0x01, 0x02, 0x00, 0xff,
      0x00, 0x00, 0xf9, 0xff, 0xff, 0xda, 0x00, 0x08, 0xc3, 0x01, 0x02, 0x00, 0xff, 0x00, 0x00, 0xf9, 0xff, 0xff,
      0xda, 0x00, 0x0e, 0xff, 0xd8, 0xff, 0xc0, 0x00, 0x0f, 0x08, 0x08, 0x2e, 0x00, 0x10, 0xff, 0xff, 0xff, 0x00,
      0xc3, 0x01, 0x02, 0x00, 0xff, 0xff, 0xda, 0x00, 0x0e, 0xff, 0x4a, 0x00, 0x2e, 0xc3, 0xef, 0xc0, 0x00, 0x0f,
      0x08, 0xff, 0xfd, 0x00, 0x00, 0x00, 0xff, 0xd9, 0xff, 0xc0, 0x1b, 0xff, 0xff, 0xdf, 0xff, 0xff, 0x00, 0x00,
      0xff, 0xff, 0xff, 0xff, 0xd9};
  EXPECT_NE(errorOf(crash, "fuzz.jpg").find("'fuzz.jpg': corrupt JPEG (a Huffman table"), std::string::npos)
      << errorOf(crash, "fuzz.jpg");
  // A valid JPEG with one table's counts raised past 256 (its segment grown to hold the symbols): the count is
  // named; with the symbols missing, the overrun is.
  std::vector<uint8_t> jpeg = makeJpeg(24, 16, 3);
  size_t dht = 2;
  while (!(jpeg[dht] == 0xff && jpeg[dht + 1] == 0xc4)) dht += 2 + (size_t(jpeg[dht + 2]) << 8 | jpeg[dht + 3]);
  // stb_image_write puts its four tables in one segment: the last one's 1-bit code count (0 in the standard
  // tables) raised.
  const size_t segmentEnd = dht + 2 + (size_t(jpeg[dht + 2]) << 8 | jpeg[dht + 3]);
  size_t last = dht + 4;
  for (size_t t = last; t < segmentEnd;) {
    last = t;
    size_t n = 0;
    for (int i = 1; i <= 16; ++i) n += jpeg[t + size_t(i)];
    t += 17 + n;
  }
  std::vector<uint8_t> overrun = jpeg;
  ASSERT_EQ(overrun[last + 1], 0);
  overrun[last + 1] = 50;  // 162 + 50 codes: within 256, but their symbols are not in the segment
  EXPECT_NE(errorOf(overrun, "run.jpg").find("symbols run past its segment"), std::string::npos)
      << errorOf(overrun, "run.jpg");
  std::vector<uint8_t> many = jpeg;
  size_t codes = 0;
  for (int i = 1; i <= 16; ++i) codes += many[dht + 4 + size_t(i)];
  many[dht + 4 + 15] = 255;  // the 15- and 16-bit code counts: 510 more codes
  many[dht + 4 + 16] = 255;
  many.insert(many.begin() + long(dht + 4 + 17 + codes), 510, uint8_t(0));  // their symbols, the length to match
  const size_t length = (size_t(many[dht + 2]) << 8 | many[dht + 3]) + 510;
  many[dht + 2] = uint8_t(length >> 8);
  many[dht + 3] = uint8_t(length & 0xff);
  EXPECT_NE(errorOf(many, "many.jpg").find("codes; at most 256"), std::string::npos) << errorOf(many, "many.jpg");
}

TEST(ImageDecode, FilesThatCannotBeReadAreNamed) {
  try {
    readImageFile("/nonexistent/init.png");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/init.png"), std::string::npos) << e.what();
  }
  const auto dir = std::filesystem::temp_directory_path();
  try {
    readImageFile(dir.string());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("it is a directory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sdgen::app
