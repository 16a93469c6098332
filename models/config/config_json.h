#pragma once
// Typed access to one diffusers/transformers JSON config file. Every error is an sdgen::Error that names the
// file and the field ("'unet/config.json': field 'layers_per_block' must be an integer or a list of integers,
// got "two""), so a bad config is found without reading sdgen's sources. Internal to models/config and
// models/formats (it exposes nlohmann::json, which sdgen_models links privately).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace sdgen::models {

// `v` as JSON text, with non-finite numbers spelled as Python's json module spells them (-Infinity, Infinity,
// NaN), so that ConfigJson::parse reads the text back as the same value.
std::string pythonJsonDump(const nlohmann::json& v);

class ConfigJson {
 public:
  // Reads and parses `path`; a missing file, unreadable file or invalid JSON is an error naming it.
  static ConfigJson load(const std::string& path);
  // Parses `text` as the content of `file` (used for messages only).
  // Python's spellings of non-finite numbers (-Infinity, Infinity, NaN outside strings), which diffusers writes,
  // are read as those numbers.
  static ConfigJson parse(const std::string& text, const std::string& file);
  // An object built in code; `file` is what messages call it.
  static ConfigJson fromObject(nlohmann::json root, const std::string& file);

  const std::string& file() const { return file_; }
  const nlohmann::json& root() const { return root_; }

  bool present(const std::string& field) const;   // present and not null
  bool isNull(const std::string& field) const;    // absent or null
  const nlohmann::json& raw(const std::string& field) const;  // requires present()

  // Scalars: absent -> `fallback`, or an error "missing required field" when there is none; null or a value of
  // the wrong type -> an error naming the field and the value.
  int integer(const std::string& field, std::optional<int> fallback = std::nullopt) const;
  double number(const std::string& field, std::optional<double> fallback = std::nullopt) const;
  bool boolean(const std::string& field, std::optional<bool> fallback = std::nullopt) const;
  std::string string(const std::string& field, std::optional<std::string> fallback = std::nullopt) const;
  // For fields whose default is None: absent or null -> nullopt.
  std::optional<std::string> optionalString(const std::string& field) const;
  std::optional<int> optionalInteger(const std::string& field) const;
  std::optional<double> optionalNumber(const std::string& field) const;

  // Lists. intOrList: an integer repeated `count` times, or a list of exactly `count` integers.
  std::vector<int> intOrList(const std::string& field, size_t count, std::optional<int> fallback) const;
  std::vector<int> intList(const std::string& field, std::optional<std::vector<int>> fallback = std::nullopt) const;
  std::vector<std::string> stringList(const std::string& field,
                                      std::optional<std::vector<std::string>> fallback = std::nullopt) const;

  // Throws "'FILE': field 'FIELD' WHAT".
  [[noreturn]] void fail(const std::string& field, const std::string& what) const;
  // Throws "'FILE': FIELD = VALUE is not supported by sdgen (WHY)".
  [[noreturn]] void unsupported(const std::string& field, const std::string& why) const;
  // unsupported() when the field is present and not null.
  void refuseIfSet(const std::string& field, const std::string& why) const;
  // unsupported() when the field is present (null included) with a value other than `allowed`.
  void refuseUnlessEquals(const std::string& field, const nlohmann::json& allowed, const std::string& why) const;

 private:
  ConfigJson(nlohmann::json root, std::string file) : root_(std::move(root)), file_(std::move(file)) {}
  const nlohmann::json* find(const std::string& field) const;

  nlohmann::json root_;
  std::string file_;
};

}  // namespace sdgen::models
