#pragma once
// Request validation failures in FastAPI's shape, which webui clients already parse (HTTP 422):
//   {"detail": [{"loc": ["body", "steps"], "msg": "...", "type": "less_than_equal", "input": 5000,
//                "ctx": {"le": 1000}}]}
// Every message names the field and what it accepts; values quoted from the request are shortened first, so
// an error about a huge field stays small.
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sdgen::serve {

struct FieldError {
  std::vector<nlohmann::json> loc;  // "body", then field names and array indices
  std::string msg;
  std::string type;
  nlohmann::json input;  // the offending value (shortened), or null
  nlohmann::json ctx;    // the limits, e.g. {"ge": 1, "le": 1000}, or null
};

// Thrown with every problem found in one request, so the client sees them all at once.
class ValidationFailed : public std::runtime_error {
 public:
  explicit ValidationFailed(std::vector<FieldError> errors);
  const std::vector<FieldError>& errors() const { return errors_; }

 private:
  std::vector<FieldError> errors_;
};

// {"detail": [...]} for a 422 response.
nlohmann::json validationErrorBody(const std::vector<FieldError>& errors);

// At most `maxChars` bytes of `s` (cut on a UTF-8 character boundary), with "..." when cut.
std::string shorten(std::string_view s, size_t maxChars = 80);

// A copy of `value` safe to echo in an error: strings shortened, arrays and objects replaced by a summary.
nlohmann::json shortenedInput(const nlohmann::json& value);

}  // namespace sdgen::serve
