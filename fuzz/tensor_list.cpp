#include "fuzz/tensor_list.h"

#include <charconv>
#include <cstring>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

namespace sdgen::fuzz {

namespace {

uint16_t toHalf(float f) {  // good enough for the small values the corpora use: sign, exponent, 10 mantissa bits
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000;
  const int exp = int((x >> 23) & 0xff) - 127 + 15;
  if (exp <= 0) return uint16_t(sign);
  if (exp >= 31) return uint16_t(sign | 0x7c00);
  return uint16_t(sign | uint32_t(exp) << 10 | ((x >> 13) & 0x3ff));
}

}  // namespace

std::optional<std::string> tensorListToSafetensors(std::string_view text, bool f16, uint64_t maxDataBytes) {
  nlohmann::json header = nlohmann::json::object();
  std::string body;
  std::set<std::string> seen;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    if (line.empty()) continue;
    const size_t sp = line.find(' ');
    if (sp == std::string_view::npos || sp == 0) return std::nullopt;
    std::string name(line.substr(0, sp));
    std::string_view rest = line.substr(sp + 1);
    const size_t sp2 = rest.find(' ');
    std::string_view dims = rest.substr(0, sp2);
    float value = 0;
    if (sp2 != std::string_view::npos) {
      std::string v(rest.substr(sp2 + 1));
      char* e = nullptr;
      value = std::strtof(v.c_str(), &e);
    }
    std::vector<int64_t> shape;
    uint64_t count = 1;
    if (dims != "-") {
      size_t p = 0;
      while (p <= dims.size()) {
        size_t c = dims.find(',', p);
        if (c == std::string_view::npos) c = dims.size();
        int64_t d = 0;
        auto [ptr, ec] = std::from_chars(dims.data() + p, dims.data() + c, d);
        if (ec != std::errc() || ptr != dims.data() + c || d < 0 || d > (1 << 20) || shape.size() >= 8)
          return std::nullopt;
        shape.push_back(d);
        count *= uint64_t(d);
        if (count * 4 > maxDataBytes) return std::nullopt;
        p = c + 1;
      }
    }
    if (!seen.insert(name).second) return std::nullopt;
    const size_t elem = f16 ? 2 : 4;
    if (body.size() + count * elem > maxDataBytes) return std::nullopt;
    const uint64_t off = body.size();
    body.resize(off + count * elem);  // zeros; filled element by element only for a non-zero value
    if (value != 0) {
      const uint16_t h = toHalf(value);
      char* p = body.data() + off;
      for (uint64_t i = 0; i < count; ++i) std::memcpy(p + i * elem, f16 ? static_cast<const void*>(&h) : &value, elem);
    }
    header[name] = {{"dtype", f16 ? "F16" : "F32"}, {"shape", shape}, {"data_offsets", {off, body.size()}}};
  }
  std::string h = header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  h.append((8 - h.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  const uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char((n >> (8 * i)) & 0xff);
  return out + h + body;
}

}  // namespace sdgen::fuzz
