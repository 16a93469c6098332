#pragma once
// A text form of a safetensors file for the key-mapping fuzzers: one tensor a line, "NAME DIMS [VALUE]", DIMS
// comma-separated ("-" for a scalar), VALUE the number every element holds (default 0). Mutating names and shapes
// as text reaches the LDM and LoRA key mapping far more often than mutating the binary header does.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sdgen::fuzz {

// The safetensors bytes (F32 tensors, or F16 when `f16`), or none when a line is malformed or the data would
// exceed maxDataBytes.
std::optional<std::string> tensorListToSafetensors(std::string_view text, bool f16, uint64_t maxDataBytes);

}  // namespace sdgen::fuzz
