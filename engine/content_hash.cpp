#include "engine/content_hash.h"

#include <cstdio>

namespace sdgen {

ContentHash& ContentHash::add(std::string_view bytes) {
  for (unsigned char c : bytes) {
    a_ = (a_ ^ c) * 0x100000001b3ull;
    b_ = (b_ ^ static_cast<unsigned char>(c + 0x5b)) * 0x100000001b3ull;
    b_ ^= b_ >> 29;
  }
  return *this;
}

ContentHash& ContentHash::field(std::string_view bytes) {
  std::string len = std::to_string(bytes.size()) + ":";
  add(len);
  return add(bytes);
}

std::string ContentHash::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a_),
                static_cast<unsigned long long>(b_));
  return buf;
}

std::string hashHex(std::string_view bytes) { return ContentHash().add(bytes).hex(); }

}  // namespace sdgen
