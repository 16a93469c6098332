#pragma once
// Reading the fields of one JSON object of a request (webui's bodies), collecting an error per bad field instead
// of stopping at the first, so a 422 lists every problem at once. Shared by the txt2img and img2img parsers.
#include <cstdint>
#include <utility>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/serve/validation_error.h"

namespace sdgen::serve {

class FieldReader {
 public:
  FieldReader(const nlohmann::json& obj, std::vector<nlohmann::json> loc, std::vector<FieldError>& errors)
      : obj_(obj), loc_(std::move(loc)), errors_(errors) {}

  // The field's value, or nullptr when missing or null (webui's Optional fields: null means the default).
  const nlohmann::json* get(const char* field) const;
  void fail(const char* field, const std::string& msg, const char* type, const nlohmann::json* value,
            nlohmann::json ctx = nullptr);
  // An integer in [lo, hi]; integral floats such as 20.0 count (JSON writers differ), strings do not.
  std::optional<int64_t> integer(const char* field, int64_t lo, int64_t hi);
  std::optional<double> number(const char* field, double lo, double hi);
  // An array of exactly two integers in [lo, hi] ([width, height], [x, y]).
  std::optional<std::pair<int, int>> intPair(const char* field, int lo, int hi, const char* what);
  std::optional<std::string> string(const char* field, size_t maxBytes);
  std::optional<bool> boolean(const char* field);
  // A field sdgen does not implement: accepted while it holds the value that means "off".
  void unsupported(const char* field, const std::function<bool(const nlohmann::json&)>& isOff, const std::string& what);

 private:
  const nlohmann::json& obj_;
  std::vector<nlohmann::json> loc_;
  std::vector<FieldError>& errors_;
};

// The "off" values of unsupported fields.
bool isFalse(const nlohmann::json& v);
bool isZero(const nlohmann::json& v);
bool isEmpty(const nlohmann::json& v);
bool isNoResize(const nlohmann::json& v);  // seed_resize_from_*: 0 or -1

}  // namespace sdgen::serve
