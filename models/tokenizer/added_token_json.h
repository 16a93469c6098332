#pragma once
// Reading a serialized AddedToken, the form tokenizer.json's added_tokens, tokenizer_config.json's
// added_tokens_decoder and special-token entries use: {"content": "...", "single_word": false, "lstrip": false,
// "rstrip": false, "normalized": true, "special": false} (older files add "__type": "AddedToken"). Internal to
// models/ (it exposes nlohmann::json, which sdgen_models links privately).
#include <nlohmann/json.hpp>
#include <string>

#include "models/tokenizer/added_tokens.h"

namespace sdgen::models {

// Absent flags take the reference's defaults: false, except `normalized`, which defaults to not `special`.
// forceSpecial: the token is special whatever the object says (special_tokens_map.json's entries).
// Errors name `file` and `where` (e.g. "added_tokens_decoder.\"0\"").
AddedToken addedTokenFromJson(const nlohmann::json& object, int32_t id, const std::string& file,
                              const std::string& where, bool forceSpecial = false);

}  // namespace sdgen::models
