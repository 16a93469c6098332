#include "app/serve/base64.h"

#include <array>

namespace sdgen::serve {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int8_t, 256> makeDecodeTable() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 64; ++i) t[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
  return t;
}
constexpr auto kDecode = makeDecodeTable();

bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

std::string base64Encode(std::span<const uint8_t> bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = uint32_t(bytes[i]) << 16 | uint32_t(bytes[i + 1]) << 8 | bytes[i + 2];
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += kAlphabet[v >> 6 & 63];
    out += kAlphabet[v & 63];
  }
  if (const size_t rest = bytes.size() - i; rest > 0) {
    uint32_t v = uint32_t(bytes[i]) << 16;
    if (rest == 2) v |= uint32_t(bytes[i + 1]) << 8;
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += rest == 2 ? kAlphabet[v >> 6 & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::vector<uint8_t>> base64Decode(std::string_view text, size_t maxBytes) {
  std::vector<uint8_t> out;
  uint32_t acc = 0;
  int bits = 0, padding = 0;
  for (char c : text) {
    if (isSpace(c)) continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    const int8_t v = kDecode[static_cast<uint8_t>(c)];
    if (v < 0 || padding > 0) return std::nullopt;  // a bad character, or data after the padding
    acc = acc << 6 | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (out.size() == maxBytes) return std::nullopt;
      out.push_back(static_cast<uint8_t>(acc >> bits & 0xFF));
    }
  }
  // 6 leftover bits (one character of a group) cannot encode a byte; more than two '=' are never written.
  if (bits >= 6 || padding > 2) return std::nullopt;
  return out;
}

std::optional<std::vector<uint8_t>> decodeImageText(std::string_view text, size_t maxBytes) {
  if (text.rfind("data:", 0) == 0) {
    const size_t comma = text.find(',');
    if (comma == std::string_view::npos) return std::nullopt;
    text = text.substr(comma + 1);
  }
  return base64Decode(text, maxBytes);
}

}  // namespace sdgen::serve
