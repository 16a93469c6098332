#include "models/config/config_json.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/error.h"
#include "models/json_bounds.h"

namespace sdgen::models {

using nlohmann::json;

namespace {

// Short rendering of a value for messages (long lists are cut).
std::string shortDump(const json& v) {
  std::string s = v.dump();
  return s.size() > 120 ? s.substr(0, 117) + "..." : s;
}

bool isInt(const json& v) { return v.is_number_integer() || v.is_number_unsigned(); }

// Python's json module writes float('inf'), float('-inf') and float('nan') as the bare words Infinity, -Infinity
// and NaN (diffusers' DPMSolverMultistepScheduler saves lambda_min_clipped = -Infinity), which JSON does not
// allow. Outside strings they become these marker strings before parsing and numbers after.
constexpr std::pair<const char*, double> kPythonWords[] = {{"-Infinity", -HUGE_VAL}, {"Infinity", HUGE_VAL}, {"NaN", NAN}};
constexpr const char* kWordMarker = "\\u0001python:";  // a JSON escape: the string holds \x01

std::string markPythonWords(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == '"') inString = false;
      continue;
    }
    if (c == '"') inString = true;
    bool replaced = false;
    for (const auto& [word, value] : kPythonWords) {
      const size_t n = std::strlen(word);
      if (text.compare(i, n, word) == 0) {
        out += std::string("\"") + kWordMarker + word + "\"";
        i += n - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

void unmarkPythonWords(json& v) {
  if (v.is_structured()) {
    for (json& e : v) unmarkPythonWords(e);
    return;
  }
  if (!v.is_string()) return;
  const std::string marker = "\x01python:";
  const std::string& s = v.get_ref<const std::string&>();
  if (s.rfind(marker, 0) != 0) return;
  const std::string word = s.substr(marker.size());
  for (const auto& [name, value] : kPythonWords)
    if (word == name) {
      v = value;
      return;
    }
}

}  // namespace

std::string pythonJsonDump(const json& v) {
  if (v.is_number_float() && !std::isfinite(v.get<double>())) {
    const double d = v.get<double>();
    return std::isnan(d) ? "NaN" : d < 0 ? "-Infinity" : "Infinity";
  }
  if (v.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + pythonJsonDump(v[i]);
    return out + "]";
  }
  if (v.is_object()) {
    std::string out = "{";
    bool first = true;
    for (const auto& [k, e] : v.items()) {
      out += (first ? "" : ",") + json(k).dump() + ":" + pythonJsonDump(e);
      first = false;
    }
    return out + "}";
  }
  return v.dump();
}

ConfigJson ConfigJson::load(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) throw Error("config file '" + path + "' does not exist");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read config file '" + path + "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse(buffer.str(), path);
}

ConfigJson ConfigJson::parse(const std::string& text, const std::string& file) {
  json root;
  try {
    root = parseJsonBounded(markPythonWords(text), "'" + file + "'");
  } catch (const json::exception& e) {
    throw Error("'" + file + "' is not valid JSON: " + e.what());
  }
  unmarkPythonWords(root);
  return fromObject(std::move(root), file);
}

ConfigJson ConfigJson::fromObject(json root, const std::string& file) {
  if (!root.is_object()) throw Error("'" + file + "' is not a JSON object");
  return ConfigJson(std::move(root), file);
}

const json* ConfigJson::find(const std::string& field) const {
  auto it = root_.find(field);
  return it == root_.end() ? nullptr : &*it;
}

bool ConfigJson::present(const std::string& field) const {
  const json* v = find(field);
  return v && !v->is_null();
}

bool ConfigJson::isNull(const std::string& field) const { return !present(field); }

const json& ConfigJson::raw(const std::string& field) const {
  const json* v = find(field);
  if (!v || v->is_null()) fail(field, "is missing");
  return *v;
}

void ConfigJson::fail(const std::string& field, const std::string& what) const {
  throw Error("'" + file_ + "': field '" + field + "' " + what);
}

void ConfigJson::unsupported(const std::string& field, const std::string& why) const {
  const json* v = find(field);
  throw Error("'" + file_ + "': " + field + " = " + (v ? shortDump(*v) : std::string("(absent)")) +
              " is not supported by sdgen (" + why + ")");
}

void ConfigJson::refuseIfSet(const std::string& field, const std::string& why) const {
  if (present(field)) unsupported(field, why);
}

void ConfigJson::refuseUnlessEquals(const std::string& field, const json& allowed, const std::string& why) const {
  const json* v = find(field);
  if (v && *v != allowed) unsupported(field, why);
}

int ConfigJson::integer(const std::string& field, std::optional<int> fallback) const {
  const json* v = find(field);
  if (!v) {
    if (fallback) return *fallback;
    fail(field, "is missing (required)");
  }
  if (!isInt(*v)) fail(field, "must be an integer, got " + shortDump(*v));
  int64_t i = v->get<int64_t>();
  if (i < INT32_MIN || i > INT32_MAX) fail(field, "is out of range: " + shortDump(*v));
  return static_cast<int>(i);
}

double ConfigJson::number(const std::string& field, std::optional<double> fallback) const {
  const json* v = find(field);
  if (!v) {
    if (fallback) return *fallback;
    fail(field, "is missing (required)");
  }
  if (!v->is_number()) fail(field, "must be a number, got " + shortDump(*v));
  double d = v->get<double>();
  if (!std::isfinite(d)) fail(field, "must be finite, got " + shortDump(*v));
  return d;
}

bool ConfigJson::boolean(const std::string& field, std::optional<bool> fallback) const {
  const json* v = find(field);
  if (!v) {
    if (fallback) return *fallback;
    fail(field, "is missing (required)");
  }
  if (!v->is_boolean()) fail(field, "must be true or false, got " + shortDump(*v));
  return v->get<bool>();
}

std::string ConfigJson::string(const std::string& field, std::optional<std::string> fallback) const {
  const json* v = find(field);
  if (!v) {
    if (fallback) return *fallback;
    fail(field, "is missing (required)");
  }
  if (!v->is_string()) fail(field, "must be a string, got " + shortDump(*v));
  return v->get<std::string>();
}

std::optional<std::string> ConfigJson::optionalString(const std::string& field) const {
  if (!present(field)) return std::nullopt;
  return string(field);
}

std::optional<int> ConfigJson::optionalInteger(const std::string& field) const {
  if (!present(field)) return std::nullopt;
  return integer(field);
}

std::optional<double> ConfigJson::optionalNumber(const std::string& field) const {
  if (!present(field)) return std::nullopt;
  return number(field);
}

std::vector<int> ConfigJson::intOrList(const std::string& field, size_t count, std::optional<int> fallback) const {
  const json* v = find(field);
  if (!v) {
    if (!fallback) fail(field, "is missing (required)");
    return std::vector<int>(count, *fallback);
  }
  if (isInt(*v)) return std::vector<int>(count, integer(field));
  if (!v->is_array()) fail(field, "must be an integer or a list of integers, got " + shortDump(*v));
  std::vector<int> out = intList(field);
  if (out.size() != count)
    fail(field, "has " + std::to_string(out.size()) + " entries, expected one per block (" + std::to_string(count) +
                    "): " + shortDump(*v));
  return out;
}

std::vector<int> ConfigJson::intList(const std::string& field, std::optional<std::vector<int>> fallback) const {
  const json* v = find(field);
  if (!v) {
    if (fallback) return *fallback;
    fail(field, "is missing (required)");
  }
  if (!v->is_array()) fail(field, "must be a list of integers, got " + shortDump(*v));
  std::vector<int> out;
  for (const json& e : *v) {
    if (!isInt(e)) fail(field, "must be a list of integers, got " + shortDump(*v));
    int64_t i = e.get<int64_t>();
    if (i < INT32_MIN || i > INT32_MAX) fail(field, "has an entry out of range: " + shortDump(*v));
    out.push_back(static_cast<int>(i));
  }
  return out;
}

std::vector<std::string> ConfigJson::stringList(const std::string& field,
                                                std::optional<std::vector<std::string>> fallback) const {
  const json* v = find(field);
  if (!v) {
    if (fallback) return *fallback;
    fail(field, "is missing (required)");
  }
  if (!v->is_array()) fail(field, "must be a list of strings, got " + shortDump(*v));
  std::vector<std::string> out;
  for (const json& e : *v) {
    if (!e.is_string()) fail(field, "must be a list of strings, got " + shortDump(*v));
    out.push_back(e.get<std::string>());
  }
  return out;
}

}  // namespace sdgen::models
