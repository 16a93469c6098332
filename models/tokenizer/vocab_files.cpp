#include "models/tokenizer/vocab_files.h"

#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/error.h"
#include "engine/file_util.h"

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
    return json::parse(text);
  } catch (const json::parse_error& e) {
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
      throw Error("token '" + token + "' in '" + path + "' has id " + id.dump() + ", not a non-negative integer");
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

}  // namespace

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
  std::string type = model.value("type", std::string("BPE"));
  if (type != "BPE") throw fail("model type is " + type + ", expected BPE");
  const json suffix = model.value("end_of_word_suffix", json());
  if (!suffix.is_string() || suffix.get<std::string>() != "</w>")
    throw fail("end_of_word_suffix is " + suffix.dump() + ", expected \"</w>\" (a CLIP BPE model)");
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
    if (!ok) throw fail("model.merges[" + std::to_string(i) + "] is " + m.dump() + ", expected \"a b\" or [\"a\", \"b\"]");
    v.merges.push_back(std::move(merge));
  }
  if (root.contains("added_tokens") && root["added_tokens"].is_array()) {
    for (const json& t : root["added_tokens"]) {
      if (!t.is_object() || !t.contains("content") || !t["content"].is_string() || !t.contains("id") ||
          !t["id"].is_number_integer())
        throw fail("added_tokens entry " + t.dump() + " lacks a string \"content\" and an integer \"id\"");
      v.addedTokens[t["content"].get<std::string>()] = t["id"].get<int32_t>();
    }
  }
  return v;
}

}  // namespace sdgen::models
