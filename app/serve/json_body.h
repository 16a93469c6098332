#pragma once
// Parsing a request body as JSON with bounds: the size is bounded by the server (--max-body), the nesting depth
// here, because deeply nested input is the cheap way to make a parser or a destructor recurse without end.
#include <nlohmann/json.hpp>
#include <string_view>

#include "app/serve/validation_error.h"

namespace sdgen::serve {

inline constexpr int kMaxJsonDepth = 32;

// The parsed body. Throws ValidationFailed (loc ["body", byte offset], type "json_invalid") for malformed JSON
// or nesting deeper than kMaxJsonDepth. An empty body parses as an empty object (webui's GET-style POSTs).
nlohmann::json parseJsonBody(std::string_view body, int maxDepth = kMaxJsonDepth);

// The JSON text for a response: invalid UTF-8 (never produced by parsing, but possible in file names) is
// replaced rather than throwing.
std::string dumpJson(const nlohmann::json& j);

}  // namespace sdgen::serve
