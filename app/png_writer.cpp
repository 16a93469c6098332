#include "app/png_writer.h"

#include "app/atomic_file.h"
#include "engine/error.h"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <thread>

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

struct DeflatedBand {
  std::vector<uint8_t> bytes;  // raw deflate blocks
  uLong adler = 0;             // Adler-32 of the filtered bytes
  size_t length = 0;           // filtered bytes
};

// The filtered rows [y0, y1) as raw deflate blocks (zlib level 1), ending on a byte boundary (Z_SYNC_FLUSH) or,
// for the last band, with the final block.
DeflatedBand deflateBand(const uint8_t* rgb, size_t stride, int y0, int y1, bool last) {
  std::vector<uint8_t> filtered, trial(4 * stride);
  filtered.reserve((stride + 1) * size_t(y1 - y0));
  for (int y = y0; y < y1; ++y)
    filterRow(rgb + y * stride, y ? rgb + (y - 1) * stride : nullptr, stride, trial, filtered);
  z_stream z{};
  // level 1: 4 % larger than level 3 and 6 % larger than level 6 on a smooth 512^2 image, in half and a quarter
  // of their time (stb_image_write took 3x as long as this). windowBits -15: raw deflate, no header or checksum.
  if (deflateInit2(&z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw Error("zlib: deflateInit2 failed");
  std::vector<uint8_t> out(deflateBound(&z, uLong(filtered.size())) + 64);  // + the sync flush's marker
  z.next_in = filtered.data();
  z.avail_in = uInt(filtered.size());
  z.next_out = out.data();
  z.avail_out = uInt(out.size());
  const int rc = deflate(&z, last ? Z_FINISH : Z_SYNC_FLUSH);
  const bool ok = (last ? rc == Z_STREAM_END : rc == Z_OK) && z.avail_in == 0 && z.avail_out > 0;
  out.resize(out.size() - z.avail_out);
  deflateEnd(&z);
  if (!ok) throw Error("zlib failed to compress rows " + std::to_string(y0) + "-" + std::to_string(y1) + " of a PNG");
  return {std::move(out), adler32(adler32(0, nullptr, 0), filtered.data(), uInt(filtered.size())), filtered.size()};
}

// The IDAT payload: one zlib stream made of independently deflated bands of kRowsPerBand rows (as pigz does),
// filtered and compressed on up to `threads` threads. The bands are fixed, so the bytes do not depend on the
// thread count; each band starts without the previous one's 32 KB history (a fraction of a percent larger).
constexpr int kRowsPerBand = 64;

std::vector<uint8_t> filterAndDeflate(int width, int height, std::span<const uint8_t> rgb, unsigned threads) {
  const size_t stride = size_t(width) * 3;
  const int bands = (height + kRowsPerBand - 1) / kRowsPerBand;
  std::vector<DeflatedBand> packed(static_cast<size_t>(bands));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(bands));
  auto work = [&](unsigned first, unsigned step) {
    for (int b = int(first); b < bands; b += int(step)) try {
        packed[size_t(b)] = deflateBand(rgb.data(), stride, b * kRowsPerBand,
                                        std::min(height, (b + 1) * kRowsPerBand), b + 1 == bands);
      } catch (...) {
        errors[size_t(b)] = std::current_exception();
      }
  };
  if (threads == 0) threads = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  threads = std::min(threads, unsigned(bands));
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t, threads);
    work(0, threads);
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  // zlib header (deflate, 32 KB window, "fastest" level hint; (0x78 << 8 | 0x01) % 31 == 0), the bands, and the
  // Adler-32 of all filtered bytes, combined from the bands' lengths and sums.
  std::vector<uint8_t> out = {0x78, 0x01};
  uLong adler = adler32(0, nullptr, 0);
  for (const DeflatedBand& p : packed) {
    out.insert(out.end(), p.bytes.begin(), p.bytes.end());
    adler = adler32_combine(adler, p.adler, z_off_t(p.length));
  }
  appendBigEndian32(out, uint32_t(adler));
  return out;
}

}  // namespace

std::vector<uint8_t> encodePng(int width, int height, std::span<const uint8_t> rgb, const std::vector<PngText>& texts,
                               unsigned threads) {
  if (width <= 0 || height <= 0 || width > (1 << 16) || height > (1 << 16))
    throw Error("cannot encode a " + std::to_string(width) + "x" + std::to_string(height) + " image as PNG");
  const size_t expected = size_t(width) * size_t(height) * 3;
  if (rgb.size() != expected)
    throw Error("PNG encoder got " + std::to_string(rgb.size()) + " bytes for a " + std::to_string(width) + "x" +
                std::to_string(height) + " RGB image (expected " + std::to_string(expected) + ")");

  // Text chunks first: a bad keyword or text fails before any encoding work.
  std::vector<PngChunk> textChunks;
  for (const auto& t : texts) textChunks.push_back(makePngTextChunk(t.keyword, t.text));

  const std::vector<uint8_t> packed = filterAndDeflate(width, height, rgb, threads);
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
