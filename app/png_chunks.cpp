#include "app/png_chunks.h"

#include <algorithm>
#include <cstring>

#include "app/crc32.h"
#include "app/text_encoding.h"
#include "engine/error.h"

namespace sdgen::app {

namespace {

void appendBigEndian32(std::vector<uint8_t>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
}

uint32_t readBigEndian32(const uint8_t* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

bool isChunkTypeLetter(uint8_t c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

void checkKeyword(const std::string& keyword) {
  auto bad = [&](const char* why) { throw Error("PNG text keyword '" + keyword + "' is invalid: " + why); };
  if (keyword.empty() || keyword.size() > 79) bad("it must have 1 to 79 characters");
  for (char ch : keyword) {
    auto c = static_cast<uint8_t>(ch);
    if (!((c >= 32 && c <= 126) || c >= 161)) bad("only printable Latin-1 characters are allowed");
  }
  if (keyword.front() == ' ' || keyword.back() == ' ' || keyword.find("  ") != std::string::npos)
    bad("no leading, trailing or consecutive spaces are allowed");
}

std::string_view asText(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

void appendPngChunk(std::vector<uint8_t>& out, std::string_view type, std::span<const uint8_t> data) {
  if (type.size() != 4) throw Error("PNG chunk type '" + std::string(type) + "' is not four letters");
  if (data.size() > 0x7FFFFFFFu) throw Error("PNG chunk " + std::string(type) + " is larger than 2^31-1 bytes");
  appendBigEndian32(out, static_cast<uint32_t>(data.size()));
  const size_t typeAt = out.size();
  out.insert(out.end(), type.begin(), type.end());
  out.insert(out.end(), data.begin(), data.end());
  appendBigEndian32(out, crc32(std::span<const uint8_t>(out).subspan(typeAt)));
}

std::vector<PngChunk> parsePngChunks(std::span<const uint8_t> png, const std::string& source) {
  auto bad = [&](const std::string& why) -> Error { return Error("'" + source + "' is not a valid PNG: " + why); };
  if (png.size() < sizeof kPngSignature || std::memcmp(png.data(), kPngSignature, sizeof kPngSignature) != 0)
    throw bad("the PNG signature is missing");
  std::vector<PngChunk> chunks;
  size_t at = sizeof kPngSignature;
  while (at < png.size()) {
    if (png.size() - at < 12) throw bad("truncated chunk header at byte " + std::to_string(at));
    const uint32_t length = readBigEndian32(png.data() + at);
    const uint8_t* type = png.data() + at + 4;
    if (!std::all_of(type, type + 4, isChunkTypeLetter))
      throw bad("chunk at byte " + std::to_string(at) + " has an invalid type");
    PngChunk chunk;
    chunk.type.assign(reinterpret_cast<const char*>(type), 4);
    if (length > 0x7FFFFFFFu || png.size() - at - 12 < length)
      throw bad("chunk " + chunk.type + " at byte " + std::to_string(at) + " runs past the end of the file");
    auto typeAndData = png.subspan(at + 4, 4 + length);
    const uint32_t stored = readBigEndian32(png.data() + at + 8 + length);
    if (crc32(typeAndData) != stored) throw bad("chunk " + chunk.type + " has a wrong CRC");
    chunk.data.assign(typeAndData.begin() + 4, typeAndData.end());
    at += 12 + length;
    if (chunks.empty() && (chunk.type != "IHDR" || chunk.data.size() != 13))
      throw bad("the first chunk is " + chunk.type + ", not a 13-byte IHDR");
    const bool end = chunk.type == "IEND";
    chunks.push_back(std::move(chunk));
    if (end) {
      if (at != png.size()) throw bad(std::to_string(png.size() - at) + " bytes follow IEND");
      return chunks;
    }
  }
  throw bad("no IEND chunk (truncated file)");
}

PngChunk makePngTextChunk(const std::string& keyword, const std::string& utf8Text) {
  checkKeyword(keyword);
  if (utf8Text.find('\0') != std::string::npos) throw Error("PNG text '" + keyword + "' contains a NUL character");
  PngChunk chunk;
  auto append = [&](std::string_view s) { chunk.data.insert(chunk.data.end(), s.begin(), s.end()); };
  append(keyword);
  chunk.data.push_back(0);
  if (auto latin1 = utf8ToLatin1(utf8Text)) {
    chunk.type = "tEXt";
    append(*latin1);
  } else {
    // iTXt: keyword NUL, compression flag 0, method 0, empty language tag NUL, empty translated keyword NUL, text.
    chunk.type = "iTXt";
    chunk.data.insert(chunk.data.end(), {0, 0, 0, 0});
    append(sanitizeUtf8(utf8Text));
  }
  return chunk;
}

std::vector<PngText> extractPngTexts(const std::vector<PngChunk>& chunks, const std::string& source) {
  std::vector<PngText> texts;
  for (const auto& chunk : chunks) {
    if (chunk.type != "tEXt" && chunk.type != "iTXt" && chunk.type != "zTXt") continue;
    auto bad = [&](const char* why) { return Error("'" + source + "': malformed " + chunk.type + " chunk: " + why); };
    std::span<const uint8_t> data(chunk.data);
    auto nul = std::find(data.begin(), data.end(), uint8_t{0});
    if (nul == data.end() || nul == data.begin()) throw bad("no keyword");
    PngText text;
    text.keyword = latin1ToUtf8(asText(data.first(static_cast<size_t>(nul - data.begin()))));
    auto rest = data.subspan(static_cast<size_t>(nul - data.begin()) + 1);
    if (chunk.type == "tEXt") {
      text.text = latin1ToUtf8(asText(rest));
    } else if (chunk.type == "zTXt") {
      text.compressed = true;
    } else {  // iTXt
      if (rest.size() < 2) throw bad("truncated after the keyword");
      text.compressed = rest[0] != 0;
      rest = rest.subspan(2);
      for (int field = 0; field < 2; ++field) {  // language tag, translated keyword
        auto end = std::find(rest.begin(), rest.end(), uint8_t{0});
        if (end == rest.end()) throw bad("the language tag or translated keyword is not terminated");
        rest = rest.subspan(static_cast<size_t>(end - rest.begin()) + 1);
      }
      if (!text.compressed) text.text = sanitizeUtf8(asText(rest));
    }
    texts.push_back(std::move(text));
  }
  return texts;
}

}  // namespace sdgen::app
