#pragma once
// CRC-32 as PNG chunks use it (ISO 3309 / ITU-T V.42: polynomial 0xEDB88320 reflected, initial and final
// value 0xFFFFFFFF).
#include <cstdint>
#include <span>

namespace sdgen::app {

// Continues a running CRC: crc32(b, crc32(a)) == crc32(a + b). Start with 0.
uint32_t crc32(std::span<const uint8_t> bytes, uint32_t crc = 0);

}  // namespace sdgen::app
