#pragma once
// JSON from files sdgen does not trust (configs, vocabularies, sdgen.json, safetensors headers, LoRA metadata)
// with a bound on nesting. nlohmann's parser itself is iterative, but serializing a value (every error message
// that quotes one), copying it and sdgen's own tree walks recurse once per level: a 1 MB file of "[[[[..." was a
// stack overflow, not an error message (docs/reliability.md, finding 1). No file sdgen reads nests beyond a few
// levels.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace sdgen::models {

inline constexpr int kMaxJsonFileDepth = 64;

// nlohmann::json::parse(text), throwing its parse_error for invalid JSON as before, and sdgen::Error
// "WHAT nests JSON deeper than 64 levels" when arrays/objects open more than maxDepth deep. `onEvent`, when
// given, is called for every parse event as nlohmann's parser callback is (return false to drop a value).
nlohmann::json parseJsonBounded(std::string_view text, const std::string& what,
                                const nlohmann::json::parser_callback_t& onEvent = nullptr,
                                int maxDepth = kMaxJsonFileDepth);

}  // namespace sdgen::models
