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

// A value as an error message quotes it: its JSON text, cut to `maxChars` (then "...") so that a hostile file's
// megabyte-long string or array does not become the message.
inline std::string jsonExcerpt(const nlohmann::json& v, size_t maxChars = 80) {
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > maxChars) s = s.substr(0, maxChars) + "...";
  return s;
}

}  // namespace sdgen::models
