// PNG output with generation parameters: the file is checked by a chunk walker and a CRC written here
// independently of app/ (bitwise CRC, no table), and its pixels decoded with stb_image, so a wrong chunk layout,
// CRC or corrupted image data all fail.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "app/crc32.h"
#include "app/png_chunks.h"
#include "app/png_reader.h"
#include "app/png_writer.h"
#include "engine/error.h"
#include "tests/test_support.h"

#include <zlib.h>

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb/stb_image.h>
#pragma GCC diagnostic pop

namespace sdgen::app {
namespace {

// --- independent reference: bit-at-a-time CRC-32 and a chunk walker ---

uint32_t referenceCrc32(const uint8_t* p, size_t n) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int b = 0; b < 8; ++b) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

struct RawChunk {
  std::string type;
  std::vector<uint8_t> data;
  uint32_t storedCrc, computedCrc;
};

uint32_t be32(const uint8_t* p) { return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3]; }

// Walks the chunks; fails the test on any structural problem.
std::vector<RawChunk> walkChunks(const std::vector<uint8_t>& png) {
  static const uint8_t sig[8] = {137, 80, 78, 71, 13, 10, 26, 10};
  std::vector<RawChunk> out;
  if (png.size() < 8 || std::memcmp(png.data(), sig, 8) != 0) {
    ADD_FAILURE() << "no PNG signature";
    return out;
  }
  size_t at = 8;
  while (at + 12 <= png.size()) {
    uint32_t len = be32(&png[at]);
    if (at + 12 + len > png.size()) {
      ADD_FAILURE() << "chunk at " << at << " overruns the file";
      return out;
    }
    RawChunk c;
    c.type.assign(reinterpret_cast<const char*>(&png[at + 4]), 4);
    c.data.assign(png.begin() + at + 8, png.begin() + at + 8 + len);
    c.storedCrc = be32(&png[at + 8 + len]);
    c.computedCrc = referenceCrc32(&png[at + 4], 4 + len);
    out.push_back(c);
    at += 12 + len;
  }
  EXPECT_EQ(at, png.size()) << "trailing bytes after the last chunk";
  return out;
}

std::vector<uint8_t> testPixels(int w, int h) {
  std::vector<uint8_t> rgb(size_t(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &rgb[(size_t(y) * w + x) * 3];
      p[0] = uint8_t(x * 7 + y);
      p[1] = uint8_t(y * 13);
      p[2] = uint8_t((x ^ y) * 5);
    }
  return rgb;
}

std::string latin1(const std::vector<uint8_t>& bytes, size_t from) { return {bytes.begin() + from, bytes.end()}; }

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/sdgen-png-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// --- tests ---

TEST(Crc32, MatchesKnownValuesAndTheBitwiseReference) {
  const std::string check = "123456789";  // the CRC-32 check value of the catalogue of CRC algorithms
  EXPECT_EQ(crc32({reinterpret_cast<const uint8_t*>(check.data()), check.size()}), 0xCBF43926u);
  EXPECT_EQ(crc32({}), 0u);
  const uint8_t iend[] = {'I', 'E', 'N', 'D'};
  EXPECT_EQ(crc32(iend), 0xAE426082u);  // the CRC every PNG ends with
  auto data = test::randomFloats(1000, 7);
  std::vector<uint8_t> bytes(reinterpret_cast<uint8_t*>(data.data()), reinterpret_cast<uint8_t*>(data.data()) + 4000);
  EXPECT_EQ(crc32(bytes), referenceCrc32(bytes.data(), bytes.size()));
  // Continuation: crc(a + b) == crc(b, crc(a)).
  std::span<const uint8_t> all(bytes);
  EXPECT_EQ(crc32(all.subspan(1234), crc32(all.first(1234))), crc32(all));
}

TEST(PngWriter, TextChunkRoundTripWithIndependentChecks) {
  const int w = 37, h = 23;
  auto rgb = testPixels(w, h);
  const std::string params =
      "a cat, oil painting\nNegative prompt: blurry\nSteps: 20, Sampler: Euler a, CFG scale: 7.5, Seed: 42, "
      "Size: 37x23, Model: tiny, Version: sdgen 0.1.0";
  auto png = encodePng(w, h, rgb, {{"parameters", params}, {"Comment", "caf\xC3\xA9"}});

  auto chunks = walkChunks(png);
  ASSERT_GE(chunks.size(), 5u);
  EXPECT_EQ(chunks.front().type, "IHDR");
  EXPECT_EQ(chunks.back().type, "IEND");
  for (const auto& c : chunks) EXPECT_EQ(c.storedCrc, c.computedCrc) << "chunk " << c.type;
  // The texts follow IHDR directly, in the given order, as tEXt with Latin-1 text ("é" is one byte 0xE9).
  EXPECT_EQ(chunks[1].type, "tEXt");
  EXPECT_EQ(latin1(chunks[1].data, 0), std::string("parameters") + '\0' + params);
  EXPECT_EQ(chunks[2].type, "tEXt");
  EXPECT_EQ(latin1(chunks[2].data, 0), std::string("Comment") + '\0' + "caf\xE9");
  EXPECT_EQ(be32(&chunks[0].data[0]), uint32_t(w));
  EXPECT_EQ(be32(&chunks[0].data[4]), uint32_t(h));

  // The reader gives the texts back as UTF-8.
  auto texts = extractPngTexts(parsePngChunks(png, "mem"), "mem");
  ASSERT_EQ(texts.size(), 2u);
  EXPECT_EQ(texts[0].keyword, "parameters");
  EXPECT_EQ(texts[0].text, params);
  EXPECT_FALSE(texts[0].compressed);
  EXPECT_EQ(texts[1].keyword, "Comment");
  EXPECT_EQ(texts[1].text, "caf\xC3\xA9");

  // The pixels survive the insertion exactly.
  int dw = 0, dh = 0, comp = 0;
  uint8_t* decoded = stbi_load_from_memory(png.data(), int(png.size()), &dw, &dh, &comp, 3);
  ASSERT_NE(decoded, nullptr) << stbi_failure_reason();
  EXPECT_EQ(dw, w);
  EXPECT_EQ(dh, h);
  EXPECT_EQ(std::memcmp(decoded, rgb.data(), rgb.size()), 0);
  stbi_image_free(decoded);
}

TEST(PngWriter, SmoothAndNoisyImagesDecodeExactly) {
  // Smooth gradients (Up / Paeth filters win), noise (None / Sub), and both within one image: every row's
  // filter choice must decode back to the same pixels with an independent decoder (stb_image).
  const int w = 301, h = 203;
  std::vector<uint8_t> rgb(size_t(w) * h * 3);
  uint32_t state = 12345;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        state = state * 1664525u + 1013904223u;
        const int smooth = (x * 255 / w + y * (c + 1)) & 255;
        rgb[(size_t(y) * w + x) * 3 + c] = uint8_t(y < h / 2 ? smooth : (state >> 24));
      }
  auto png = encodePng(w, h, rgb, {});
  EXPECT_LT(png.size(), rgb.size()) << "the smooth half compresses";
  int dw = 0, dh = 0, comp = 0;
  uint8_t* decoded = stbi_load_from_memory(png.data(), int(png.size()), &dw, &dh, &comp, 3);
  ASSERT_NE(decoded, nullptr) << stbi_failure_reason();
  ASSERT_EQ(dw, w);
  ASSERT_EQ(dh, h);
  EXPECT_EQ(std::memcmp(decoded, rgb.data(), rgb.size()), 0);
  stbi_image_free(decoded);
}

// The IDAT stream is deflated in bands of 64 rows on several threads: one valid zlib stream (zlib checks the
// Adler-32 combined from the bands), the same bytes for every thread count, a 1-row and a 1-band image too.
TEST(PngWriter, BandedDeflateIsOneStreamWhateverTheThreads) {
  for (auto [w, h] : {std::pair{97, 300}, std::pair{5, 1}, std::pair{40, 64}, std::pair{33, 65}}) {
    std::vector<uint8_t> rgb(size_t(w) * h * 3);
    uint32_t state = 99;
    for (size_t i = 0; i < rgb.size(); ++i) {
      state = state * 1664525u + 1013904223u;
      rgb[i] = (i / 3) % 7 == 0 ? uint8_t(state >> 24) : uint8_t(i / 5);
    }
    const auto one = encodePng(w, h, rgb, {}, 1);
    for (unsigned threads : {2u, 3u, 8u, 0u}) EXPECT_EQ(encodePng(w, h, rgb, {}, threads), one) << w << "x" << h;
    // The IDAT payload through zlib's own inflate: the filtered rows, 1 + 3w bytes each, checksum verified.
    std::vector<uint8_t> idat;
    for (const PngChunk& c : parsePngChunks(one, "test"))
      if (c.type == "IDAT") idat.insert(idat.end(), c.data.begin(), c.data.end());
    std::vector<uint8_t> raw(size_t(h) * (1 + 3 * size_t(w)) + 1);
    uLongf rawSize = uLongf(raw.size());
    ASSERT_EQ(uncompress(raw.data(), &rawSize, idat.data(), uLong(idat.size())), Z_OK) << w << "x" << h;
    EXPECT_EQ(rawSize, uLongf(size_t(h) * (1 + 3 * size_t(w))));
    int dw = 0, dh = 0, comp = 0;
    uint8_t* decoded = stbi_load_from_memory(one.data(), int(one.size()), &dw, &dh, &comp, 3);
    ASSERT_NE(decoded, nullptr) << stbi_failure_reason();
    EXPECT_EQ(std::memcmp(decoded, rgb.data(), rgb.size()), 0) << w << "x" << h;
    stbi_image_free(decoded);
  }
}

TEST(PngWriter, NonLatin1TextBecomesUtf8ITXt) {
  const std::string prompt = "\xE7\x8C\xAB, a cat \xF0\x9F\x90\x88";  // 猫 and 🐈: not Latin-1
  auto png = encodePng(2, 2, testPixels(2, 2), {{"parameters", prompt}});
  auto chunks = walkChunks(png);
  ASSERT_GE(chunks.size(), 3u);
  EXPECT_EQ(chunks[1].type, "iTXt");
  for (const auto& c : chunks) EXPECT_EQ(c.storedCrc, c.computedCrc) << c.type;
  // keyword NUL, compression flag 0, method 0, language "" NUL, translated keyword "" NUL, UTF-8 text.
  std::string expected = std::string("parameters") + '\0' + '\0' + '\0' + '\0' + '\0' + prompt;
  EXPECT_EQ(latin1(chunks[1].data, 0), expected);
  auto texts = extractPngTexts(parsePngChunks(png, "mem"), "mem");
  ASSERT_EQ(texts.size(), 1u);
  EXPECT_EQ(texts[0].text, prompt);
}

TEST(PngWriter, FileRoundTripThroughTheReader) {
  TempDir dir;
  const std::string path = dir.path() + "/out.png";
  writePngFile(path, 8, 4, testPixels(8, 4), {{"parameters", "x\nSteps: 1"}});
  auto texts = readPngTexts(path);
  ASSERT_EQ(texts.size(), 1u);
  EXPECT_EQ(texts[0].keyword, "parameters");
  EXPECT_EQ(texts[0].text, "x\nSteps: 1");
  // Only the file itself is in the directory: the temporary was renamed, not copied.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(PngWriter, RejectsBadInput) {
  auto rgb = testPixels(4, 4);
  test::expectErrorContaining([&] { encodePng(4, 5, rgb, {}); }, "4x5");
  test::expectErrorContaining([&] { encodePng(0, 4, {}, {}); }, "0x4");
  test::expectErrorContaining([&] { encodePng(4, 4, rgb, {{"", "x"}}); }, "keyword");
  test::expectErrorContaining([&] { encodePng(4, 4, rgb, {{" lead", "x"}}); }, "' lead'");
  test::expectErrorContaining([&] { encodePng(4, 4, rgb, {{"a  b", "x"}}); }, "'a  b'");
  test::expectErrorContaining([&] { encodePng(4, 4, rgb, {{std::string(80, 'k'), "x"}}); }, "1 to 79");
  test::expectErrorContaining([&] { encodePng(4, 4, rgb, {{"tab\tkey", "x"}}); }, "printable");
  test::expectErrorContaining([&] { encodePng(4, 4, rgb, {{"parameters", std::string("a\0b", 3)}}); }, "NUL");
}

TEST(PngReader, RejectsCorruptFiles) {
  auto png = encodePng(3, 3, testPixels(3, 3), {{"parameters", "hello"}});
  {
    auto bad = png;
    bad[8 + 12 + 13 + 8 + 2] ^= 0x01;  // a byte inside the tEXt data: its CRC no longer matches
    test::expectErrorContaining([&] { parsePngChunks(bad, "bad.png"); }, "tEXt has a wrong CRC");
    test::expectErrorContaining([&] { parsePngChunks(bad, "bad.png"); }, "'bad.png'");
  }
  {
    auto bad = png;
    bad[0] = 'X';
    test::expectErrorContaining([&] { parsePngChunks(bad, "sig.png"); }, "signature");
  }
  {
    std::vector<uint8_t> truncated(png.begin(), png.end() - 12);  // IEND removed
    test::expectErrorContaining([&] { parsePngChunks(truncated, "t.png"); }, "no IEND");
    std::vector<uint8_t> cut(png.begin(), png.begin() + 50);  // inside the data of the tEXt chunk
    test::expectErrorContaining([&] { parsePngChunks(cut, "c.png"); }, "tEXt");
  }
  {
    auto extra = png;
    extra.push_back(0);
    test::expectErrorContaining([&] { parsePngChunks(extra, "e.png"); }, "follow IEND");
  }
  {
    // A text chunk placed before IHDR.
    std::vector<uint8_t> swapped(kPngSignature, kPngSignature + 8);
    const uint8_t text[] = {'k', 0, 'v'};
    appendPngChunk(swapped, "tEXt", text);
    swapped.insert(swapped.end(), png.begin() + 8, png.end());
    test::expectErrorContaining([&] { parsePngChunks(swapped, "o.png"); }, "first chunk is tEXt");
  }
  test::expectErrorContaining([] { readPngTexts("/nonexistent/dir/x.png"); }, "/nonexistent/dir/x.png");
  test::expectErrorContaining([] { readPngTexts("/tmp"); }, "directory");
}

TEST(PngReader, ReadsCompressedChunksAsCompressed) {
  // A zTXt and a compressed iTXt as another tool would write them (the payload need not inflate: sdgen does not
  // inflate, it only reports them).
  std::vector<uint8_t> png(kPngSignature, kPngSignature + 8);
  const uint8_t ihdr[13] = {0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0};
  appendPngChunk(png, "IHDR", ihdr);
  const uint8_t ztxt[] = {'z', 'k', 0, 0, 0x78, 0x9c};
  appendPngChunk(png, "zTXt", ztxt);
  const uint8_t itxt[] = {'i', 'k', 0, 1, 0, 'e', 'n', 0, 0, 0x78};
  appendPngChunk(png, "iTXt", itxt);
  const uint8_t text[] = {'t', 0, 0xE9};
  appendPngChunk(png, "tEXt", text);
  appendPngChunk(png, "IEND", {});
  for (const auto& c : walkChunks(png)) EXPECT_EQ(c.storedCrc, c.computedCrc) << c.type;
  auto texts = extractPngTexts(parsePngChunks(png, "z.png"), "z.png");
  ASSERT_EQ(texts.size(), 3u);
  EXPECT_EQ(texts[0].keyword, "zk");
  EXPECT_TRUE(texts[0].compressed);
  EXPECT_EQ(texts[1].keyword, "ik");
  EXPECT_TRUE(texts[1].compressed);
  EXPECT_EQ(texts[2].keyword, "t");
  EXPECT_EQ(texts[2].text, "\xC3\xA9");
  EXPECT_FALSE(texts[2].compressed);

  std::vector<PngChunk> malformed = {{"tEXt", {'n', 'o', 'n', 'u', 'l'}}};
  test::expectErrorContaining([&] { extractPngTexts(malformed, "m.png"); }, "malformed tEXt");
}

}  // namespace
}  // namespace sdgen::app
