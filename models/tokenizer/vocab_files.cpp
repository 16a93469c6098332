#include "models/tokenizer/vocab_files.h"

#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/error.h"
#include "engine/file_util.h"
#include "models/json_bounds.h"
#include "models/tokenizer/added_token_json.h"

namespace sdgen::models {

namespace {

using nlohmann::json;

std::string readOrThrow(const std::string& path, const char* what) {
  std::optional<std::string> text = readFile(path);
  if (!text) {
    std::error_code ec;
    bool exists = std::filesystem::exists(path, ec);
    throw Error(std::string("cannot read ") + what + " '" + path + "': " +
                (exists ? "the file exists but could not be read" : "no such file"));
  }
  return std::move(*text);
}

json parseJson(const std::string& path, const std::string& text, const char* what) {
  try {
    return parseJsonBounded(text, std::string(what) + " '" + path + "'");
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 1e400 (finding 3)
    throw Error(std::string(what) + " '" + path + "' is not valid JSON: " + e.what());
  }
}

// token -> id from a JSON object; ids must be non-negative 32-bit integers.
std::unordered_map<std::string, int32_t> readTokenIds(const json& object, const std::string& path,
                                                      const char* where) {
  if (!object.is_object()) throw Error(std::string(where) + " in '" + path + "' is not a JSON object");
  std::unordered_map<std::string, int32_t> tokens;
  tokens.reserve(object.size());
  for (const auto& [token, id] : object.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > std::numeric_limits<int32_t>::max())
      throw Error("token '" + token + "' in '" + path + "' has id " + jsonExcerpt(id) + ", not a non-negative integer");
    tokens.emplace(token, id.get<int32_t>());
  }
  if (tokens.empty()) throw Error(std::string(where) + " in '" + path + "' is empty");
  return tokens;
}

// Splits a merge rule into its two symbols; false unless there are exactly two.
bool splitMerge(std::string_view line, BpeMerge& merge) {
  std::istringstream in{std::string(line)};
  std::string extra;
  return static_cast<bool>(in >> merge.left >> merge.right) && !(in >> extra);
}

std::vector<BpeMerge> readMergesTxt(const std::string& path, size_t maxMerges) {
  std::string text = readOrThrow(path, "merges file");
  text.erase(text.find_last_not_of(" \t\r\n") + 1);  // trailing blank lines, as the reference strips them
  std::istringstream in(text);
  std::string line;
  size_t lineNo = 0;
  // The reference always skips the first line, which in every real file is the "#version: 0.2" header; a
  // file without it would silently lose its first merge there, so insist on the header instead.
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.find_first_not_of(" \t\r") != std::string::npos) break;
  }
  if (line.rfind("#version", 0) != 0)
    throw Error("merges file '" + path + "' does not start with a '#version' header line (line " +
                std::to_string(lineNo) + ")");
  std::vector<BpeMerge> merges;
  while (merges.size() < maxMerges && std::getline(in, line)) {
    ++lineNo;
    BpeMerge m;
    if (!splitMerge(line, m))
      throw Error("merges file '" + path + "' line " + std::to_string(lineNo) + ": expected two symbols, got '" +
                  line + "'");
    merges.push_back(std::move(m));
  }
  if (merges.empty()) throw Error("merges file '" + path + "' has no merges");
  return merges;
}

// tokenizer.json's "added_tokens": [{"id": 0, "content": "!", ...}, ...]; absent or null: none.
std::vector<AddedToken> readAddedTokens(const json& root, const std::string& path) {
  std::vector<AddedToken> tokens;
  if (!root.is_object() || !root.contains("added_tokens") || root["added_tokens"].is_null()) return tokens;
  const json& list = root["added_tokens"];
  if (!list.is_array()) throw Error("tokenizer file '" + path + "': added_tokens is not an array");
  for (size_t i = 0; i < list.size(); ++i) {
    const json& t = list[i];
    const std::string where = "added_tokens[" + std::to_string(i) + "]";
    if (!t.is_object() || !t.contains("id") || !t["id"].is_number_integer() || t["id"].get<int64_t>() < 0 ||
        t["id"].get<int64_t>() > std::numeric_limits<int32_t>::max())
      throw Error("tokenizer file '" + path + "': " + where + " " + jsonExcerpt(t) + " lacks a non-negative integer \"id\"");
    tokens.push_back(addedTokenFromJson(t, t["id"].get<int32_t>(), path, where));
  }
  return tokens;
}

}  // namespace

AddedToken addedTokenFromJson(const json& object, int32_t id, const std::string& file, const std::string& where,
                              bool forceSpecial) {
  auto fail = [&](const std::string& what) { return Error("'" + file + "': " + where + " " + what); };
  if (!object.is_object() || !object.contains("content") || !object["content"].is_string())
    throw fail("is " + jsonExcerpt(object) + ", expected an added token {\"content\": string, ...}");
  auto flag = [&](const char* name, bool fallback) {
    if (!object.contains(name) || object[name].is_null()) return fallback;
    if (!object[name].is_boolean())
      throw fail("has \"" + std::string(name) + "\": " + jsonExcerpt(object[name]) + ", not a boolean");
    return object[name].get<bool>();
  };
  AddedToken t;
  t.content = object["content"].get<std::string>();
  if (t.content.empty()) throw fail("has an empty \"content\"");
  t.id = id;
  t.singleWord = flag("single_word", false);
  t.lstrip = flag("lstrip", false);
  t.rstrip = flag("rstrip", false);
  t.special = forceSpecial || flag("special", false);
  t.normalized = flag("normalized", !t.special);
  return t;
}

BpeVocabulary loadVocabAndMerges(const std::string& vocabJsonPath, const std::string& mergesPath,
                                 size_t maxMerges) {
  BpeVocabulary v;
  json vocab = parseJson(vocabJsonPath, readOrThrow(vocabJsonPath, "vocabulary file"), "vocabulary file");
  v.tokens = readTokenIds(vocab, vocabJsonPath, "the vocabulary");
  v.merges = readMergesTxt(mergesPath, maxMerges);
  v.source = "'" + vocabJsonPath + "' with '" + mergesPath + "'";
  return v;
}

BpeVocabulary loadTokenizerJson(const std::string& path) {
  json root = parseJson(path, readOrThrow(path, "tokenizer file"), "tokenizer file");
  auto fail = [&](const std::string& what) { return Error("tokenizer file '" + path + "': " + what); };
  if (!root.is_object() || !root.contains("model") || !root["model"].is_object())
    throw fail("no \"model\" object (not a tokenizers-format tokenizer.json)");
  const json& model = root["model"];
  // A "type" of another JSON type is an error naming the file, not nlohmann's type_error (found by
  // fuzz_tokenizer_files, session 13: it escaped every handler and ended the process).
  const json type = model.value("type", json("BPE"));
  if (!type.is_string() || type.get<std::string>() != "BPE")
    throw fail("model type is " + jsonExcerpt(type) + ", expected \"BPE\"");
  const json suffix = model.value("end_of_word_suffix", json());
  if (!suffix.is_string() || suffix.get<std::string>() != "</w>")
    throw fail("end_of_word_suffix is " + jsonExcerpt(suffix) + ", expected \"</w>\" (a CLIP BPE model)");
  if (!model.contains("vocab")) throw fail("model has no \"vocab\"");
  if (!model.contains("merges") || !model["merges"].is_array()) throw fail("model has no \"merges\" array");

  BpeVocabulary v;
  v.source = "'" + path + "'";
  v.tokens = readTokenIds(model["vocab"], path, "model.vocab");
  const json& merges = model["merges"];
  v.merges.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const json& m = merges[i];
    BpeMerge merge;
    bool ok = false;
    if (m.is_string()) {  // older files: "left right"
      ok = splitMerge(m.get<std::string>(), merge);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {  // newer: [left, right]
      merge = {m[0].get<std::string>(), m[1].get<std::string>()};
      ok = true;
    }
    if (!ok)
      throw fail("model.merges[" + std::to_string(i) + "] is " + jsonExcerpt(m) + ", expected \"a b\" or [\"a\", \"b\"]");
    v.merges.push_back(std::move(merge));
  }
  v.addedTokens = readAddedTokens(root, path);
  return v;
}

std::vector<AddedToken> loadTokenizerJsonAddedTokens(const std::string& path) {
  return readAddedTokens(parseJson(path, readOrThrow(path, "tokenizer file"), "tokenizer file"), path);
}

}  // namespace sdgen::models
