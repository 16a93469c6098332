#pragma once
// A stable 128-bit content hash (two independent FNV-1a-64 lanes) for cache keys.
// Not cryptographic: it only needs to make accidental collisions of cache entries negligible.
#include <cstdint>
#include <string>
#include <string_view>

namespace sdgen {

class ContentHash {
 public:
  ContentHash& add(std::string_view bytes);
  // Adds a length prefix so that ("ab","c") and ("a","bc") differ.
  ContentHash& field(std::string_view bytes);
  std::string hex() const;

 private:
  uint64_t a_ = 0xcbf29ce484222325ull;
  uint64_t b_ = 0x84222325cbf29ce4ull;
};

std::string hashHex(std::string_view bytes);

}  // namespace sdgen
