// The text encoder of a single-file checkpoint: SD 1.x stores transformers' CLIPTextModel as it is, SD 2.x stores
// OpenCLIP's text tower, which is renamed, split and cut to the penultimate layer.
#include "models/formats/ldm_components.h"

namespace sdgen::models {

namespace {

// CLIP and OpenCLIP text towers use 64-channel heads (ViT-L/14: 768 = 12 x 64, ViT-H/14: 1024 = 16 x 64); another
// width leaves the heads undetermined (0): a config folder must give them.
int headsOf64(int width) { return width > 0 && width % 64 == 0 ? width / 64 : 0; }

}  // namespace

ClipTextConfig mapLdmClipText(LdmComponentKeys& k) {
  // Checkpoints saved with transformers before 4.x lack the "text_model." level; the names are otherwise the same.
  const std::string base = k.has("embeddings.token_embedding.weight") ? "" : "text_model.";
  for (const std::string& key : k.under("")) {
    if (key.ends_with("embeddings.position_ids")) {  // an index buffer, not a weight
      k.ignore(key);
      continue;
    }
    if (!key.starts_with(base + "embeddings.") && !key.starts_with(base + "encoder.") &&
        !key.starts_with(base + "final_layer_norm."))
      k.fail("unexpected tensor '" + k.prefix() + key + "': not part of a CLIP text model");
    k.map("text_model." + key.substr(base.size()), key);
  }
  ClipTextConfig c;
  c.source = k.path() + " (text encoder inferred from tensor shapes)";
  const std::vector<int64_t>& tokens = k.shape(base + "embeddings.token_embedding.weight", 2);
  c.vocabSize = static_cast<int>(tokens[0]);
  c.hiddenSize = static_cast<int>(tokens[1]);
  c.maxPositionEmbeddings = static_cast<int>(k.shape(base + "embeddings.position_embedding.weight", 2)[0]);
  c.numHiddenLayers = k.countIndexed(base + "encoder.layers.");
  if (c.numHiddenLayers == 0) k.fail("no text encoder layers ('" + base + "encoder.layers.0.*')");
  c.intermediateSize = static_cast<int>(k.shape(base + "encoder.layers.0.mlp.fc1.weight", 2)[0]);
  c.numAttentionHeads = headsOf64(c.hiddenSize);
  c.hiddenAct = "quick_gelu";  // OpenAI CLIP ViT-L/14
  c.layerNormEps = 1e-5f;
  c.padTokenId = 49407;  // SD 1.x pads with the end-of-text token
  return c;
}

ClipTextConfig mapLdmOpenClipText(LdmComponentKeys& k, bool sdxl) {
  ClipTextConfig c;
  c.source = k.path() + " (text encoder inferred from tensor shapes)";
  const std::vector<int64_t>& tokens = k.shape("token_embedding.weight", 2);
  const int64_t width = tokens[1];
  c.vocabSize = static_cast<int>(tokens[0]);
  c.hiddenSize = static_cast<int>(width);
  c.maxPositionEmbeddings = static_cast<int>(k.shape("positional_embedding", 2)[0]);
  const int blocks = k.countIndexed("transformer.resblocks.");
  if (blocks < 2) k.fail("an OpenCLIP text encoder needs at least 2 resblocks, found " + std::to_string(blocks));
  c.numHiddenLayers = sdxl ? blocks : blocks - 1;  // SD 2.x uses the penultimate layer's output
  c.intermediateSize = static_cast<int>(k.shape("transformer.resblocks.0.mlp.c_fc.weight", 2)[0]);
  c.numAttentionHeads = headsOf64(c.hiddenSize);
  c.hiddenAct = "gelu";  // OpenCLIP ViT-H/14 uses exact GELU
  c.layerNormEps = 1e-5f;
  c.padTokenId = 0;  // OpenCLIP's tokenizer pads with 0 ("!")

  k.map("text_model.embeddings.token_embedding.weight", "token_embedding.weight");
  k.map("text_model.embeddings.position_embedding.weight", "positional_embedding");
  k.map("text_model.final_layer_norm.weight", "ln_final.weight");
  k.map("text_model.final_layer_norm.bias", "ln_final.bias");
  for (int i = 0; i < c.numHiddenLayers; ++i) {
    const std::string key = "transformer.resblocks." + std::to_string(i) + ".";
    const std::string name = "text_model.encoder.layers." + std::to_string(i) + ".";
    const std::vector<int64_t>& inProj = k.shape(key + "attn.in_proj_weight", 2);
    if (inProj[0] != 3 * width || inProj[1] != width)
      k.fail("tensor '" + k.prefix() + key + "attn.in_proj_weight' has shape " + formatShape(inProj) + ", expected [" +
             std::to_string(3 * width) + "," + std::to_string(width) + "] (fused q, k, v)");
    // nn.MultiheadAttention's fused projection: rows [0, W) are q, [W, 2W) k, [2W, 3W) v.
    const char* parts[] = {"q_proj", "k_proj", "v_proj"};
    for (int p = 0; p < 3; ++p) {
      k.mapRows(name + "self_attn." + parts[p] + ".weight", key + "attn.in_proj_weight", p * width, width);
      k.mapRows(name + "self_attn." + parts[p] + ".bias", key + "attn.in_proj_bias", p * width, width);
    }
    for (auto [ldm, diffusers] : {std::pair<const char*, const char*>{"attn.out_proj", "self_attn.out_proj"},
                                  {"ln_1", "layer_norm1"},
                                  {"ln_2", "layer_norm2"},
                                  {"mlp.c_fc", "mlp.fc1"},
                                  {"mlp.c_proj", "mlp.fc2"}}) {
      k.map(name + diffusers + ".weight", key + ldm + ".weight");
      k.map(name + diffusers + ".bias", key + ldm + ".bias");
    }
  }
  if (sdxl) {
    const std::vector<int64_t>& projection = k.shape("text_projection", 2);
    if (projection[0] != width)
      k.fail("tensor '" + k.prefix() + "text_projection' has shape " + formatShape(projection) + ", expected [" +
             std::to_string(width) + ", projection_dim]");
    c.projectionDim = static_cast<int>(projection[1]);
    c.eosTokenId = 2;  // OpenCLIP pools at the highest id (argmax), which transformers does for the legacy id 2
    k.mapTransposed("text_projection.weight", "text_projection");
  } else {
    // Not used by SD 2.x: the last layer, the projection into the joint image-text space.
    k.ignoreUnder("transformer.resblocks." + std::to_string(blocks - 1) + ".");
    k.ignore("text_projection");
  }
  // The contrastive scale and the causal mask buffer are no weights of the text encoder.
  k.ignore("logit_scale");
  k.ignore("attn_mask");
  k.requireAllUsed("not part of an OpenCLIP text encoder");
  return c;
}

}  // namespace sdgen::models
