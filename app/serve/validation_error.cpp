#include "app/serve/validation_error.h"

namespace sdgen::serve {

namespace {
std::string summary(const std::vector<FieldError>& errors) {
  std::string s = "request validation failed";
  if (!errors.empty()) s += ": " + errors.front().msg;
  return s;
}
}  // namespace

ValidationFailed::ValidationFailed(std::vector<FieldError> errors)
    : std::runtime_error(summary(errors)), errors_(std::move(errors)) {}

nlohmann::json validationErrorBody(const std::vector<FieldError>& errors) {
  nlohmann::json detail = nlohmann::json::array();
  for (const auto& e : errors) {
    nlohmann::json item = {{"loc", e.loc}, {"msg", e.msg}, {"type", e.type}};
    if (!e.input.is_null()) item["input"] = e.input;
    if (!e.ctx.is_null()) item["ctx"] = e.ctx;
    detail.push_back(std::move(item));
  }
  return {{"detail", std::move(detail)}};
}

std::string shorten(std::string_view s, size_t maxChars) {
  if (s.size() <= maxChars) return std::string(s);
  size_t cut = maxChars;
  // Back off continuation bytes (10xxxxxx) so a multi-byte character is not split.
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "...";
}

nlohmann::json shortenedInput(const nlohmann::json& value) {
  if (value.is_string()) return shorten(value.get_ref<const std::string&>());
  if (value.is_array()) return "[array of " + std::to_string(value.size()) + "]";
  if (value.is_object()) return "{object of " + std::to_string(value.size()) + " fields}";
  return value;
}

}  // namespace sdgen::serve
