// text_encoder/config.json -> ClipTextConfig, with transformers' CLIPTextConfig defaults for absent fields.
#include "engine/error.h"
#include "models/config/config_files.h"
#include "models/config/config_json.h"

namespace sdgen::models {

namespace {

ClipTextConfig fromJson(const ConfigJson& j) {
  if (j.present("model_type") && j.string("model_type") != "clip_text_model")
    j.unsupported("model_type", "the text encoder must be a CLIP text model, model_type \"clip_text_model\"");
  if (j.present("architectures")) {
    for (const std::string& a : j.stringList("architectures"))
      if (a != "CLIPTextModel" && a != "CLIPTextModelWithProjection")
        j.unsupported("architectures", "the text encoder must be CLIPTextModel");
  }
  ClipTextConfig c;
  // Defaults: transformers CLIPTextConfig (openai/clip-vit-base-patch32 sizes), not SD's.
  c.vocabSize = j.integer("vocab_size", 49408);
  c.hiddenSize = j.integer("hidden_size", 512);
  c.intermediateSize = j.integer("intermediate_size", 2048);
  c.numHiddenLayers = j.integer("num_hidden_layers", 12);
  c.numAttentionHeads = j.integer("num_attention_heads", 8);
  c.maxPositionEmbeddings = j.integer("max_position_embeddings", 77);
  c.hiddenAct = j.string("hidden_act", "quick_gelu");
  if (c.hiddenAct != "quick_gelu" && c.hiddenAct != "gelu")
    j.unsupported("hidden_act", "the CLIP text encoder implements \"quick_gelu\" (SD 1.x) and \"gelu\" (SD 2.x)");
  c.layerNormEps = static_cast<float>(j.number("layer_norm_eps", 1e-5));
  c.projectionDim = j.integer("projection_dim", 512);
  c.eosTokenId = j.integer("eos_token_id", 49407);
  // pad_token_id in this file is not what the tokenizer pads with (transformers' default 1 is in neither SD
  // tokenizer); openModel sets padTokenId from the tokenizer's own files.
  c.source = j.file();
  validateClipTextConfig(c);
  return c;
}

}  // namespace

ClipTextConfig loadClipTextConfig(const std::string& path) { return fromJson(ConfigJson::load(path)); }
ClipTextConfig parseClipTextConfig(const std::string& json, const std::string& file) {
  return fromJson(ConfigJson::parse(json, file));
}

void validateClipTextConfig(const ClipTextConfig& c) {
  auto fail = [&](const std::string& what) { throw Error("text encoder config '" + c.source + "': " + what); };
  for (auto [name, v] : {std::pair<const char*, int>{"vocab_size", c.vocabSize},
                         {"hidden_size", c.hiddenSize},
                         {"intermediate_size", c.intermediateSize},
                         {"num_hidden_layers", c.numHiddenLayers},
                         {"num_attention_heads", c.numAttentionHeads},
                         {"max_position_embeddings", c.maxPositionEmbeddings}})
    if (v <= 0) fail(std::string(name) + " = " + std::to_string(v) + " must be positive");
  if (c.hiddenSize % c.numAttentionHeads != 0)
    fail("hidden_size " + std::to_string(c.hiddenSize) + " is not divisible by num_attention_heads " +
         std::to_string(c.numAttentionHeads));
  if (!(c.layerNormEps > 0)) fail("layer_norm_eps must be positive");
}

}  // namespace sdgen::models
