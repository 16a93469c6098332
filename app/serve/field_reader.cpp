#include "app/serve/field_reader.h"

#include <cmath>
#include <limits>

namespace sdgen::serve {

using nlohmann::json;

const json* FieldReader::get(const char* field) const {
  auto it = obj_.find(field);
  return it == obj_.end() || it->is_null() ? nullptr : &*it;
}

void FieldReader::fail(const char* field, const std::string& msg, const char* type, const json* value, json ctx) {
  auto loc = loc_;
  loc.push_back(field);
  errors_.push_back(FieldError{std::move(loc), msg, type, value ? shortenedInput(*value) : json(nullptr), ctx});
}

std::optional<int64_t> FieldReader::integer(const char* field, int64_t lo, int64_t hi) {
  const json* v = get(field);
  if (!v) return std::nullopt;
  int64_t x = 0;
  if (v->is_number_unsigned()) {
    const uint64_t u = v->get<uint64_t>();
    x = u > uint64_t(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max() : int64_t(u);
  } else if (v->is_number_integer()) {
    x = v->get<int64_t>();
  } else if (v->is_number_float() && std::isfinite(v->get<double>()) && v->get<double>() == std::floor(v->get<double>()) &&
             std::abs(v->get<double>()) < 9e18) {
    x = static_cast<int64_t>(v->get<double>());
  } else {
    fail(field, std::string(field) + ": expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi),
         "int_type", v);
    return std::nullopt;
  }
  if (x < lo || x > hi) {
    fail(field, std::string(field) + ": " + std::to_string(x) + " is out of range; expected an integer from " +
                    std::to_string(lo) + " to " + std::to_string(hi),
         x < lo ? "greater_than_equal" : "less_than_equal", v, {{"ge", lo}, {"le", hi}});
    return std::nullopt;
  }
  return x;
}

std::optional<std::pair<int, int>> FieldReader::intPair(const char* field, int lo, int hi, const char* what) {
  const json* v = get(field);
  if (!v) return std::nullopt;
  const std::string expected = std::string(field) + ": expected " + what + ", two integers from " +
                               std::to_string(lo) + " to " + std::to_string(hi);
  if (!v->is_array() || v->size() != 2) {
    fail(field, expected, "list_type", v);
    return std::nullopt;
  }
  int out[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    const json& e = (*v)[size_t(i)];
    const bool integral = e.is_number_integer() || e.is_number_unsigned() ||
                          (e.is_number_float() && std::isfinite(e.get<double>()) &&
                           e.get<double>() == std::floor(e.get<double>()));
    const double x = integral ? e.get<double>() : 0;
    if (!integral || x < lo || x > hi) {
      fail(field, expected + "; element " + std::to_string(i) + " is " + shortenedInput(e).dump(), "value_error", v,
           {{"ge", lo}, {"le", hi}});
      return std::nullopt;
    }
    out[i] = int(x);
  }
  return std::pair{out[0], out[1]};
}

std::optional<double> FieldReader::number(const char* field, double lo, double hi) {
  const json* v = get(field);
  if (!v) return std::nullopt;
  auto range = [&] { return json(lo).dump() + " to " + json(hi).dump(); };
  if (!v->is_number() || !std::isfinite(v->get<double>())) {
    fail(field, std::string(field) + ": expected a number from " + range(), "float_type", v);
    return std::nullopt;
  }
  const double x = v->get<double>();
  if (x < lo || x > hi) {
    fail(field, std::string(field) + ": " + v->dump() + " is out of range; expected a number from " + range(),
         x < lo ? "greater_than_equal" : "less_than_equal", v, {{"ge", lo}, {"le", hi}});
    return std::nullopt;
  }
  return x;
}

std::optional<std::string> FieldReader::string(const char* field, size_t maxBytes) {
  const json* v = get(field);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    fail(field, std::string(field) + ": expected a string", "string_type", v);
    return std::nullopt;
  }
  const auto& s = v->get_ref<const std::string&>();
  if (s.size() > maxBytes) {
    fail(field, std::string(field) + ": " + std::to_string(s.size()) + " bytes is too long; at most " +
                    std::to_string(maxBytes),
         "string_too_long", v, {{"max_length", maxBytes}});
    return std::nullopt;
  }
  return s;
}

std::optional<bool> FieldReader::boolean(const char* field) {
  const json* v = get(field);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) {
    fail(field, std::string(field) + ": expected true or false", "bool_type", v);
    return std::nullopt;
  }
  return v->get<bool>();
}

void FieldReader::unsupported(const char* field, const std::function<bool(const json&)>& isOff,
                              const std::string& what) {
  const json* v = get(field);
  if (v && !isOff(*v)) fail(field, std::string(field) + ": " + what + " is not supported by sdgen", "value_error", v);
}

bool isFalse(const json& v) { return v.is_boolean() && !v.get<bool>(); }
bool isZero(const json& v) { return v.is_number() && v.get<double>() == 0; }
bool isEmpty(const json& v) { return (v.is_array() || v.is_object() || v.is_string()) && v.empty(); }
bool isNoResize(const json& v) { return v.is_number() && (v.get<double>() == 0 || v.get<double>() == -1); }

}  // namespace sdgen::serve
