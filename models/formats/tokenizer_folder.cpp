#include "models/formats/tokenizer_folder.h"

#include <algorithm>
#include <filesystem>
#include <limits>

#include "engine/error.h"
#include "models/config/config_json.h"
#include "models/tokenizer/added_token_json.h"
#include "models/tokenizer/vocab_files.h"

namespace sdgen::models {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// transformers' SPECIAL_TOKENS_ATTRIBUTES, in its order, without the list additional_special_tokens.
constexpr const char* kSpecialTokenKeys[] = {"bos_token", "eos_token", "unk_token", "sep_token",
                                             "pad_token", "cls_token", "mask_token"};

// A special token a config file names, and where, for messages.
struct NamedToken {
  AddedToken token;  // id not yet known
  std::string file, key;
};

struct SpecialTokens {
  std::vector<NamedToken> named;       // one per key at most
  std::vector<NamedToken> additional;  // additional_special_tokens
  const NamedToken* find(const std::string& key) const {
    for (const NamedToken& t : named)
      if (t.key == key) return &t;
    return nullptr;
  }
};

// A special-token entry is a string or a serialized AddedToken; null: none. Either way the token is special.
std::optional<AddedToken> specialTokenEntry(const ConfigJson& j, const json& v, const std::string& key) {
  if (v.is_null()) return std::nullopt;
  if (v.is_string()) {
    if (v.get<std::string>().empty()) return std::nullopt;  // the reference skips empty tokens
    AddedToken t;
    t.content = v.get<std::string>();
    t.special = true;
    t.normalized = false;
    return t;
  }
  if (v.is_object() && v.contains("content")) return addedTokenFromJson(v, 0, j.file(), "field '" + key + "'", true);
  j.fail(key, "must be a string or {\"content\": string}, got " + v.dump());
}

// Reads the special-token fields of one config file over what earlier files gave: named ones replace, the
// additional ones are appended (as transformers merges special_tokens_map.json into tokenizer_config.json's).
void readSpecialTokens(const ConfigJson& j, SpecialTokens& out) {
  for (const char* key : kSpecialTokenKeys) {
    if (!j.root().contains(key)) continue;
    std::erase_if(out.named, [&](const NamedToken& t) { return t.key == key; });
    if (std::optional<AddedToken> t = specialTokenEntry(j, j.root()[key], key))
      out.named.push_back({std::move(*t), j.file(), key});
  }
  const char* listKey = "additional_special_tokens";
  if (!j.present(listKey)) return;
  const json& list = j.raw(listKey);
  if (!list.is_array()) j.fail(listKey, "must be a list, got " + list.dump());
  for (const json& v : list) {
    std::optional<AddedToken> t = specialTokenEntry(j, v, listKey);
    if (!t) continue;
    bool known = std::any_of(out.additional.begin(), out.additional.end(),
                             [&](const NamedToken& n) { return n.token.content == t->content; });
    if (!known) out.additional.push_back({std::move(*t), j.file(), listKey});
  }
}

// The reference keys added tokens by id: a later entry for an id replaces the earlier one.
void addById(std::vector<AddedToken>& tokens, AddedToken t) {
  for (AddedToken& existing : tokens) {
    if (existing.id == t.id) {
      existing = std::move(t);
      return;
    }
  }
  tokens.push_back(std::move(t));
}

const AddedToken* findContent(const std::vector<AddedToken>& tokens, const std::string& content) {
  for (auto it = tokens.rbegin(); it != tokens.rend(); ++it)
    if (it->content == content) return &*it;
  return nullptr;
}

int32_t tokenId(const json& v, const ConfigJson& j, const std::string& where) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > std::numeric_limits<int32_t>::max())
    j.fail(where, "has id " + v.dump() + ", not a non-negative integer");
  return v.get<int32_t>();
}

// tokenizer_config.json's "added_tokens_decoder": {"0": {"content": "!", ...}, ...}.
void readAddedTokensDecoder(const ConfigJson& config, std::vector<AddedToken>& tokens) {
  const json& decoder = config.raw("added_tokens_decoder");
  if (!decoder.is_object()) config.fail("added_tokens_decoder", "must be an object, got " + decoder.dump());
  for (const auto& [key, value] : decoder.items()) {
    int64_t id = -1;
    try {
      size_t used = 0;
      id = std::stoll(key, &used);
      if (used != key.size()) id = -1;
    } catch (const std::exception&) {
    }
    if (id < 0 || id > std::numeric_limits<int32_t>::max())
      config.fail("added_tokens_decoder", "has the key \"" + key + "\", not a token id");
    addById(tokens, addedTokenFromJson(value, static_cast<int32_t>(id), config.file(),
                                       "added_tokens_decoder.\"" + key + "\""));
  }
}

// added_tokens.json: {"<token>": id, ...}; tokens named as special tokens are special, the others normalized.
void readAddedTokensJson(const std::string& path, const SpecialTokens& specials, std::vector<AddedToken>& tokens) {
  ConfigJson j = ConfigJson::load(path);
  for (const auto& [content, id] : j.root().items()) {
    if (content.empty()) continue;
    AddedToken t;
    t.content = content;
    t.id = tokenId(id, j, content);
    // (Compared through t.content: clang 14 cannot capture a structured binding in a lambda.)
    auto named = [&t](const NamedToken& n) { return n.token.content == t.content; };
    t.special = std::any_of(specials.named.begin(), specials.named.end(), named) ||
                std::any_of(specials.additional.begin(), specials.additional.end(), named);
    t.normalized = !t.special;
    addById(tokens, std::move(t));
  }
}

}  // namespace

ClipTokenizerFolder loadClipTokenizerFolder(const std::string& dir, std::optional<int32_t> padFallback,
                                            size_t maxPositions) {
  const fs::path d(dir);
  if (!fs::is_directory(d)) throw Error("tokenizer folder '" + dir + "' does not exist");
  const fs::path tokenizerJson = d / "tokenizer.json";
  BpeVocabulary vocab;
  const bool fromVocabJson = fs::exists(d / "vocab.json") && fs::exists(d / "merges.txt");
  if (fromVocabJson)
    vocab = loadVocabAndMerges((d / "vocab.json").string(), (d / "merges.txt").string(),
                               ClipBpeTokenizer::kClipMergeCount);
  else if (fs::exists(tokenizerJson))
    vocab = loadTokenizerJson(tokenizerJson.string());
  else
    throw Error("tokenizer folder '" + dir + "' has neither vocab.json + merges.txt nor tokenizer.json");

  std::optional<ConfigJson> config, map;
  if (fs::exists(d / "tokenizer_config.json")) config = ConfigJson::load((d / "tokenizer_config.json").string());
  if (fs::exists(d / "special_tokens_map.json")) map = ConfigJson::load((d / "special_tokens_map.json").string());
  // Folders saved by transformers >= 4.34 list every added token in tokenizer_config.json's added_tokens_decoder;
  // then transformers reads neither special_tokens_map.json nor added_tokens.json nor tokenizer.json's list.
  const bool savedDecoder = config && config->present("added_tokens_decoder");

  SpecialTokens specials;
  if (config) readSpecialTokens(*config, specials);
  if (map && !savedDecoder) readSpecialTokens(*map, specials);

  std::vector<AddedToken> added;
  if (savedDecoder) {
    // Such a folder without vocab.json only the `tokenizers` library reads, which keeps tokenizer.json's list.
    if (!fromVocabJson) added = vocab.addedTokens;
    readAddedTokensDecoder(*config, added);
  } else {
    if (fs::exists(d / "added_tokens.json")) readAddedTokensJson((d / "added_tokens.json").string(), specials, added);
    if (fs::exists(tokenizerJson)) {
      std::vector<AddedToken> listed =
          fromVocabJson ? loadTokenizerJsonAddedTokens(tokenizerJson.string()) : vocab.addedTokens;
      for (AddedToken& t : listed) addById(added, std::move(t));
    }
  }
  // Every special token the configs name is an added token too (SD 2.x's pad token "!" is split out of prompts
  // this way even where no file lists it as added), with its vocabulary id when no added token has its content.
  std::vector<const NamedToken*> allSpecials;
  for (const NamedToken& t : specials.named) allSpecials.push_back(&t);
  for (const NamedToken& t : specials.additional) allSpecials.push_back(&t);
  for (const NamedToken* s : allSpecials) {
    if (findContent(added, s->token.content)) continue;
    auto inVocab = vocab.tokens.find(s->token.content);
    if (inVocab == vocab.tokens.end())
      throw Error("'" + s->file + "': field '" + s->key + "' names \"" + s->token.content +
                  "\", which is not in the vocabulary of " + vocab.source);
    AddedToken t = s->token;
    t.id = inVocab->second;
    added.push_back(std::move(t));
  }
  vocab.addedTokens = std::move(added);

  ClipTokenizerFolder out;
  for (const auto& [token, id] : vocab.tokens) out.maxTokenId = std::max(out.maxTokenId, id);
  for (const AddedToken& t : vocab.addedTokens) out.maxTokenId = std::max(out.maxTokenId, t.id);

  ClipTokenizerOptions options;
  options.maxLength = maxPositions;
  options.padId = padFallback;
  if (const NamedToken* pad = specials.find("pad_token"))
    options.padId = findContent(vocab.addedTokens, pad->token.content)->id;
  // transformers writes a huge sentinel (1e30) when the length is unset.
  for (const std::optional<ConfigJson>* file : {&config, &map}) {
    if (!*file) continue;
    const ConfigJson& j = **file;
    if (j.present("model_max_length") && j.raw("model_max_length").is_number() &&
        j.raw("model_max_length").get<double>() < 1e9) {
      const int length = j.integer("model_max_length");
      if (length < 2 || static_cast<size_t>(length) > maxPositions)
        j.fail("model_max_length", "is " + std::to_string(length) + ", but the text encoder takes 2 to " +
                                       std::to_string(maxPositions) + " positions");
      options.maxLength = static_cast<size_t>(length);
    }
  }
  out.tokenizer = std::make_unique<ClipBpeTokenizer>(std::move(vocab), options);
  out.padId = out.tokenizer->padId();
  return out;
}

}  // namespace sdgen::models
